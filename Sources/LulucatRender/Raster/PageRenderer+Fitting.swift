// Renders a page of any size: the scale is lowered until the bitmap fits the pixel limits.

import Foundation
import LulucatInk

extension PageRenderer {
    /// Renders at `scale` pixels per point, or, when the bitmap would pass the limits, at the
    /// largest scale below it that fits them; the result's `scale` says which.
    ///
    /// ```swift
    /// let r = try PageRenderer.render(page, fitting: 2) { _ in nil }
    /// if r.scale < 2 { print("drawn at \(r.scale) px/pt to fit") }
    /// ```
    /// - Throws: `RenderError.invalidScale` for a scale that is not positive and finite.
    package static func render(_ content: PageContent, fitting scale: Double,
                               maxDimension: Int = ImageLimits.maxDimension, maxPixels: Int = ImageLimits.maxPixels,
                               assets: (UUID) throws -> RGBAImage?) throws -> RenderResult {
        let fitted = try fittedScale(canvas: content.canvasSize, requested: scale,
                                     maxDimension: maxDimension, maxPixels: maxPixels)
        let (w, h) = bitmapSize(canvas: content.canvasSize, scale: fitted)
        return render(content, width: w, height: h, scale: fitted, assets: assets)
    }

    /// Width and height in pixels of a canvas at `scale`: the canvas times the scale, rounded up.
    static func bitmapSize(canvas: QuantizedSize, scale: Double) -> (Int, Int) {
        let wd = (Double(max(canvas.width, 1)) / 10 * scale).rounded(.up)
        let hd = (Double(max(canvas.height, 1)) / 10 * scale).rounded(.up)
        return (max(1, Int(min(wd, 1e9))), max(1, Int(min(hd, 1e9))))
    }

    /// `requested`, or the largest scale below it at which the canvas fits `maxDimension` a
    /// side and `maxPixels` in all (rounding up included).
    package static func fittedScale(canvas: QuantizedSize, requested: Double,
                                    maxDimension: Int = ImageLimits.maxDimension,
                                    maxPixels: Int = ImageLimits.maxPixels) throws -> Double {
        guard requested.isFinite, requested > 0 else { throw RenderError.invalidScale(requested) }
        let limitSide = max(1, min(maxDimension, ImageLimits.maxDimension))
        let limitPixels = max(1, min(maxPixels, ImageLimits.maxPixels))
        func fits(_ s: Double) -> Bool {
            let (w, h) = bitmapSize(canvas: canvas, scale: s)
            return w <= limitSide && h <= limitSide && w * h <= limitPixels
        }
        if fits(requested) { return requested }
        let w = Double(max(canvas.width, 1)) / 10, h = Double(max(canvas.height, 1)) / 10
        var s = min(requested, Double(limitSide) / w, Double(limitSide) / h, (Double(limitPixels) / (w * h)).squareRoot())
        // Rounding up can pass the limit by a pixel: step down until it fits.
        var steps = 0
        while !fits(s) && steps < 64 { s *= 0.999; steps += 1 }
        return s
    }
}
