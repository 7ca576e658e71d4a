// One call from a page and its assets' bytes to a PNG, JPEG or SVG file: what `lnote render` needs.

import Foundation
import LulucatInk

/// The file formats a page can be exported to.
public enum PageExportFormat: String, Sendable, CaseIterable {
    case png, jpg, svg
}

public enum PageExport {
    /// The page as a file of `format`.
    ///
    /// - Parameters:
    ///   - scale: pixels per point for PNG and JPEG (ignored by SVG, which is in points).
    ///   - quality: JPEG quality, 1...100.
    ///   - assetData: the stored bytes (JPEG or PNG) of an asset, nil when missing. Undecodable
    ///     or missing assets become placeholders and are listed in `problems`.
    /// - Throws: `RenderError` for a bad scale, an over-limit size or an encoder failure.
    public static func export(_ content: PageContent, format: PageExportFormat, scale: Double = 2,
                              quality: Int = 90, assetData: (UUID) throws -> Data?) throws
        -> (data: Data, problems: [RenderProblem]) {
        switch format {
        case .svg:
            let svg = SVGWriter.svg(for: content, assets: assetData)
            return (Data(svg.text.utf8), svg.problems)
        case .png, .jpg:
            let result = try PageRenderer.render(content, scale: scale) { id in
                try assetData(id).map(RGBAImage.init(decoding:))
            }
            let data = format == .png ? try result.image.pngData() : try result.image.jpegData(quality: quality)
            return (data, result.problems)
        }
    }
}
