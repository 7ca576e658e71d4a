// Draws a page's elements onto a white RGBA bitmap at any scale: the public entry of the rasterizer.

import Foundation
import LulucatInk

/// A rendered page and what could not be drawn as asked.
package struct RenderResult: Sendable {
    package var image: RGBAImage
    /// Images drawn as placeholders (missing or undecodable assets), in drawing order. Empty when
    /// everything was drawn.
    package var problems: [RenderProblem]
    /// Pixels per point of the bitmap: the scale asked for, or the one `render(_:fitting:)`
    /// fitted the limits with.
    package var scale: Double
}

/// Rasterizes pages.
///
/// ```swift
/// let result = try PageRenderer.render(content, scale: 2) { assetID in
///     try store.assetData(assetID).map(RGBAImage.init(decoding:))
/// }
/// let png = try result.image.pngData()
/// ```
package enum PageRenderer {
    /// Renders `content` at `scale` pixels per point (1 = 72 dpi) on white.
    ///
    /// - Parameters:
    ///   - scale: pixels per point; the bitmap is the canvas size times `scale`, rounded up.
    ///   - assets: the decoded image of an asset id, nil when the asset is missing; a thrown error
    ///     means the asset is unreadable. Either way a placeholder is drawn and a problem reported.
    /// - Throws: `RenderError.invalidScale` for a scale that is not positive and finite,
    ///   `.imageTooLarge` when the bitmap would exceed `ImageLimits`.
    package static func render(_ content: PageContent, scale: Double,
                               assets: (UUID) throws -> RGBAImage?) throws -> RenderResult {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let wd = (Double(max(content.canvasSize.width, 1)) / 10 * scale).rounded(.up)
        let hd = (Double(max(content.canvasSize.height, 1)) / 10 * scale).rounded(.up)
        guard wd <= Double(ImageLimits.maxDimension), hd <= Double(ImageLimits.maxDimension),
              wd * hd <= Double(ImageLimits.maxPixels) else {
            throw RenderError.imageTooLarge(width: Int(min(wd, 1e9)), height: Int(min(hd, 1e9)))
        }
        let width = max(1, Int(wd)), height = max(1, Int(hd))
        return render(content, width: width, height: height, scale: scale, assets: assets)
    }

    /// Renders into a bitmap of exactly `width` x `height` (the caller has checked the limits).
    static func render(_ content: PageContent, width: Int, height: Int, scale: Double,
                       assets: (UUID) throws -> RGBAImage?) -> RenderResult {
        var image = RGBAImage(width: width, height: height, fill: (255, 255, 255, 255))
        var problems: [RenderProblem] = []
        let mask = CoverageMask(width: width, height: height)
        // Each asset is decoded once even when several images show it (each image still gets its
        // own prepared copy: how far it is shrunk depends on the frame).
        var decodedAssets: [UUID: Result<RGBAImage, AssetFailure>] = [:]
        image.pixels.withUnsafeMutableBufferPointer { canvas in
            for step in DrawOrder.steps(for: content) {
                switch step {
                case .highlighter(let stroke), .ink(let stroke):
                    StrokeRasterizer.addStroke(stroke.drawingPoints, scale: scale, to: mask)
                    let c = stroke.ink.color
                    let isHighlighter = stroke.ink.tool == .highlighter
                    mask.composite(onto: canvas, r: c.r, g: c.g, b: c.b, alpha: Float(c.a) / 255,
                                   blend: isHighlighter ? .multiply : .normal)
                case .image(let element):
                    let frame = PlacedFrame(element, scale: scale)
                    let lookup: Result<RGBAImage, AssetFailure>
                    if let known = decodedAssets[element.assetID] {
                        lookup = known
                    } else {
                        do {
                            lookup = try assets(element.assetID).map { .success($0) } ?? .failure(AssetFailure(kind: .missingAsset))
                        } catch {
                            lookup = .failure(AssetFailure(kind: .unreadableAsset(String(describing: error))))
                        }
                        decodedAssets[element.assetID] = lookup
                    }
                    var decoded: RGBAImage?
                    switch lookup {
                    case .success(let image): decoded = image
                    case .failure(let failure):
                        problems.append(RenderProblem(elementID: element.id, assetID: element.assetID, kind: failure.kind))
                    }
                    let source = decoded.map { SamplingSource($0, targetWidth: frame.width, targetHeight: frame.height) }
                    if let source {
                        ImageRasterizer.draw(source, in: frame, canvas: canvas, width: width, height: height)
                    } else {
                        ImageRasterizer.drawPlaceholder(in: frame, scale: scale, mask: mask,
                                                        canvas: canvas, width: width, height: height)
                    }
                }
            }
        }
        return RenderResult(image: image, problems: problems, scale: scale)
    }
}

/// Why an asset lookup gave no image, remembered so a bad asset is asked for once per render.
private struct AssetFailure: Error { var kind: RenderProblem.Kind }

/// Thumbnails for the library grid.
package enum Thumbnail {
    /// The default width of a library thumbnail, in pixels.
    package static let defaultWidth = 256

    /// The page fitted to `width` pixels, its height following the canvas's aspect ratio; with
    /// `maxHeight`, fitted into `width` x `maxHeight` instead (a landscape page fills the width, a
    /// tall one the height), for a library grid of fixed cells.
    /// - Throws: `RenderError.invalidScale` when `width` or `maxHeight` is not positive,
    ///   `.imageTooLarge` beyond `ImageLimits`.
    package static func make(_ content: PageContent, width: Int = defaultWidth, maxHeight: Int? = nil,
                             assets: (UUID) throws -> RGBAImage?) throws -> RenderResult {
        guard width > 0 else { throw RenderError.invalidScale(Double(width)) }
        if let maxHeight, maxHeight <= 0 { throw RenderError.invalidScale(Double(maxHeight)) }
        let canvasWidth = Double(max(content.canvasSize.width, 1)) / 10
        let canvasHeight = Double(max(content.canvasSize.height, 1)) / 10
        var scale = Double(width) / canvasWidth
        if let maxHeight { scale = min(scale, Double(maxHeight) / canvasHeight) }
        let w = max(1, Int((canvasWidth * scale).rounded()))
        let h = max(1, Int((canvasHeight * scale).rounded()))
        guard w <= ImageLimits.maxDimension, h <= ImageLimits.maxDimension, w * h <= ImageLimits.maxPixels else {
            throw RenderError.imageTooLarge(width: w, height: h)
        }
        return PageRenderer.render(content, width: w, height: h, scale: scale, assets: assets)
    }

    /// The thumbnail as JPEG bytes, ready for `thumbnails/<page-id>.jpg`.
    package static func jpeg(_ content: PageContent, width: Int = defaultWidth, maxHeight: Int? = nil, quality: Int = 80,
                             assets: (UUID) throws -> RGBAImage?) throws -> (data: Data, problems: [RenderProblem]) {
        let result = try make(content, width: width, maxHeight: maxHeight, assets: assets)
        return (try result.image.jpegData(quality: quality), result.problems)
    }
}
