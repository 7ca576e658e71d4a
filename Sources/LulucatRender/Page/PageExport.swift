// One call from a page and its assets' bytes to a PNG, JPEG or SVG file: what `lnote render` needs.

import Foundation
import LulucatInk

/// The file formats a page can be exported to.
package enum PageExportFormat: String, Sendable, CaseIterable {
    case png, jpg, svg
}

package enum PageExport {
    /// The page as a file of `format`.
    ///
    /// - Parameters:
    ///   - scale: pixels per point for PNG and JPEG (ignored by SVG, which is in points).
    ///   - quality: JPEG quality, 1...100.
    ///   - assetData: the stored bytes (JPEG or PNG) of an asset, nil when missing. Undecodable
    ///     or missing assets become placeholders and are listed in `problems`.
    /// - Throws: `RenderError` for a bad scale, an over-limit size or an encoder failure.
    package static func export(_ content: PageContent, format: PageExportFormat, scale: Double = 2,
                               quality: Int = 90, assetData: (UUID) throws -> Data?) throws
        -> (data: Data, problems: [RenderProblem]) {
        switch format {
        case .svg:
            let svg = SVGWriter.svg(for: content, assets: assetData)
            return (Data(svg.text.utf8), svg.problems)
        case .png, .jpg:
            let r = try exportFitting(content, format: format, scale: scale, quality: quality, assetData: assetData)
            return (r.data, r.problems)
        }
    }

    /// What `exportFitting` made.
    package struct Result: Sendable {
        package var data: Data
        package var problems: [RenderProblem]
        /// Pixels per point used for PNG and JPEG: `scale`, or less when the page at `scale`
        /// would pass `ImageLimits` (nil for SVG).
        package var scale: Double?
        /// The scale was lowered to fit the limits.
        package var fitted: Bool
    }

    /// The page as a file of `format`, never refused for its size: a raster page too large at
    /// `scale` is drawn at the largest scale that fits `ImageLimits` (docs/rendering.md), and
    /// the result says which.
    /// - Throws: `RenderError.invalidScale` for a scale that is not positive and finite, or an
    ///   encoder failure.
    package static func exportFitting(_ content: PageContent, format: PageExportFormat, scale: Double = 2,
                                      quality: Int = 90, assetData: (UUID) throws -> Data?) throws -> Result {
        switch format {
        case .svg:
            let svg = SVGWriter.svg(for: content, assets: assetData)
            return Result(data: Data(svg.text.utf8), problems: svg.problems, scale: nil, fitted: false)
        case .png, .jpg:
            let result = try PageRenderer.render(content, fitting: scale) { id in
                try assetData(id).map(RGBAImage.init(decoding:))
            }
            let data = format == .png ? try result.image.pngData() : try result.image.jpegData(quality: quality)
            return Result(data: data, problems: result.problems, scale: result.scale, fitted: result.scale < scale)
        }
    }
}
