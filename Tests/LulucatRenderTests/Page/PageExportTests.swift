// PageExport: the three formats from asset bytes, with problems reported the same way.

import Foundation
import LulucatInk
import Testing
@testable import LulucatRender

@Suite struct PageExportTests {
    @Test func everyFormatFromAssetBytes() throws {
        let png = try TestPages.photo.pngData()
        let bytes: (UUID) -> Data? = { $0 == TestPages.photoID ? png : nil }
        let asPNG = try PageExport.export(TestPages.rotatedImage, format: .png, scale: 2, assetData: bytes)
        #expect(asPNG.problems.isEmpty)
        let decoded = try PNGDecoder.decode(asPNG.data)
        let direct = try PageRenderer.render(TestPages.rotatedImage, scale: 2, assets: TestPages.assets).image
        #expect(decoded == direct)
        let asJPEG = try PageExport.export(TestPages.rotatedImage, format: .jpg, scale: 1, quality: 70, assetData: bytes)
        #expect(try JPEGCodec.decode(asJPEG.data).width == 100)
        let asSVG = try PageExport.export(TestPages.rotatedImage, format: .svg, assetData: bytes)
        #expect(String(decoding: asSVG.data, as: UTF8.self).contains("data:image/png;base64,"))
    }

    @Test func corruptAssetBytesAreProblems() throws {
        let truncated = try TestPages.photo.pngData().prefix(50)
        for format in PageExportFormat.allCases {
            let result = try PageExport.export(TestPages.rotatedImage, format: format, assetData: { _ in truncated })
            #expect(result.problems.count == 1, "\(format)")
        }
        #expect(throws: RenderError.self) {
            try PageExport.export(TestPages.rotatedImage, format: .png, scale: 0, assetData: { _ in nil })
        }
    }
}
