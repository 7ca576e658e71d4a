// Render never refuses a page for its size (issue 14 §2): the scale is lowered to fit the limits
// and the result says which scale it used.

import Foundation
import Testing
import LulucatInk
@testable import LulucatRender

@Suite struct PageRenderFittingTests {
    static func stroke(_ points: [(Double, Double)]) -> Element {
        .stroke(Stroke(samples: points.map { Sample(x: Quantize.position($0.0), y: Quantize.position($0.1), radius: 20, pressure: 1000, time: 0) }))
    }

    @Test func aPageThatFitsKeepsItsScale() throws {
        let page = PageContent(canvasSize: .letter, elements: [Self.stroke([(10, 10), (100, 100)])])
        let r = try PageRenderer.render(page, fitting: 2, assets: { _ in nil })
        #expect(r.scale == 2)
        #expect(r.image.width == 1224 && r.image.height == 1584)
        // The same pixels as the plain render.
        #expect(r.image.pixels == (try PageRenderer.render(page, scale: 2, assets: { _ in nil })).image.pixels)
    }

    /// 10,000 x 600 pt at 2 px/pt is 20,000 px wide, past 16,384: drawn at 1.6384 px/pt.
    @Test func aWidePageIsFittedToTheSideLimit() throws {
        let page = PageContent(canvasSize: QuantizedSize(width: 100_000, height: 6_000),
                               elements: [Self.stroke([(100, 100), (9_900, 500)])])
        #expect(throws: RenderError.self) { try PageRenderer.render(page, scale: 2, assets: { _ in nil }) }
        let r = try PageRenderer.render(page, fitting: 2, maxPixels: 20_000_000, assets: { _ in nil })
        #expect(r.scale < 2 && r.scale > 1.6)
        #expect(r.image.width <= ImageLimits.maxDimension && r.image.width >= ImageLimits.maxDimension - 2)
        #expect(r.image.height == Int((600 * r.scale).rounded(.up)))
        // The stroke is drawn: dark pixels where it runs.
        #expect(r.image.pixels.contains { $0 < 128 })
    }

    @Test func thePixelLimitIsFittedToo() throws {
        let page = PageContent(canvasSize: QuantizedSize(width: 20_000, height: 20_000), elements: [Self.stroke([(0, 0), (2000, 2000)])])
        let r = try PageRenderer.render(page, fitting: 2, maxDimension: 4096, maxPixels: 1_000_000, assets: { _ in nil })
        #expect(r.image.width * r.image.height <= 1_000_000)
        #expect(r.image.width >= 990)
        #expect(abs(r.scale - 0.5) < 0.01)
    }

    /// Any canvas the model allows gets a positive scale that fits, without allocating.
    @Test func extremeCanvasesGetAScale() throws {
        for size in [QuantizedSize(width: .max, height: .max), QuantizedSize(width: .max, height: 1),
                     QuantizedSize(width: 1, height: 1), QuantizedSize(width: 0, height: 0), QuantizedSize(width: 5_000_000, height: 80)] {
            for requested in [0.01, 2, 16] {
                let s = try PageRenderer.fittedScale(canvas: size, requested: requested)
                #expect(s > 0 && s <= requested)
                let (w, h) = PageRenderer.bitmapSize(canvas: size, scale: s)
                #expect(w <= ImageLimits.maxDimension && h <= ImageLimits.maxDimension && w * h <= ImageLimits.maxPixels, "\(size) \(requested)")
            }
        }
        for bad in [0, -1, Double.nan, .infinity] {
            #expect(throws: RenderError.self) { try PageRenderer.fittedScale(canvas: .letter, requested: bad) }
        }
    }

    @Test func exportSaysTheScaleItUsed() throws {
        let page = PageContent(canvasSize: QuantizedSize(width: 100_000, height: 100), elements: [Self.stroke([(5, 5), (9_000, 5)])])
        let r = try PageExport.exportFitting(page, format: .png, scale: 2, assetData: { _ in nil })
        #expect(r.fitted)
        #expect(r.scale! < 2)
        let decoded = try RGBAImage(decoding: r.data)
        #expect(decoded.width <= ImageLimits.maxDimension)
        #expect(try PageExport.exportFitting(PageContent(), format: .png, assetData: { _ in nil }).scale == 2)
        #expect(try PageExport.exportFitting(page, format: .svg, assetData: { _ in nil }).scale == nil)
        // The old entry fits too instead of refusing.
        #expect(try !PageExport.export(page, format: .jpg, scale: 2, assetData: { _ in nil }).data.isEmpty)
    }
}
