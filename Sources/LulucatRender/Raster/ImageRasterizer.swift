// Draws a decoded image into its frame on the page: rotated about the frame's centre, bilinear
// sampling, anti-aliased edges; and the placeholder drawn when the asset is missing or corrupt.

import Foundation
import LulucatInk

/// Where an image lands on the canvas, in pixels: the frame before rotation and the rotation.
struct PlacedFrame {
    var x: Double, y: Double, width: Double, height: Double
    /// Clockwise on screen, radians.
    var angle: Double

    init(_ element: ImageElement, scale: Double) {
        x = Double(element.frame.x) / 10 * scale
        y = Double(element.frame.y) / 10 * scale
        width = Double(element.frame.width) / 10 * scale
        height = Double(element.frame.height) / 10 * scale
        angle = Double(element.rotation) / 100 * .pi / 180
    }

    var centerX: Double { x + width / 2 }
    var centerY: Double { y + height / 2 }

    /// A point of the unrotated frame (frame-local, pixels) carried onto the canvas.
    func toCanvas(_ lx: Double, _ ly: Double) -> (Double, Double) {
        let c = cos(angle), s = sin(angle)
        let dx = lx - centerX, dy = ly - centerY
        // With y down, this rotation turns clockwise on screen.
        return (centerX + dx * c - dy * s, centerY + dx * s + dy * c)
    }

    /// The canvas pixels the rotated frame may touch, clipped; nil when none.
    func pixelBounds(width w: Int, height h: Int) -> (x0: Int, x1: Int, y0: Int, y1: Int)? {
        let corners = [toCanvas(x, y), toCanvas(x + width, y), toCanvas(x, y + height), toCanvas(x + width, y + height)]
        let minX = corners.map(\.0).min()!, maxX = corners.map(\.0).max()!
        let minY = corners.map(\.1).min()!, maxY = corners.map(\.1).max()!
        let x0 = max(0, (minX - 1).rounded(.down)), x1 = min(Double(w - 1), (maxX + 1).rounded(.down))
        let y0 = max(0, (minY - 1).rounded(.down)), y1 = min(Double(h - 1), (maxY + 1).rounded(.down))
        guard x0 <= x1, y0 <= y1, x1 >= 0, y1 >= 0 else { return nil }
        return (Int(x0), Int(x1), Int(y0), Int(y1))
    }
}

/// A source image prepared for sampling: premultiplied alpha, pre-shrunk by halves so that
/// bilinear sampling never skips source pixels (a photo shrunk into a thumbnail stays smooth).
struct SamplingSource {
    var width: Int
    var height: Int
    /// Premultiplied RGBA8.
    var pixels: [UInt8]

    init(_ image: RGBAImage, targetWidth: Double, targetHeight: Double) {
        var w = image.width, h = image.height
        var px = image.pixels
        var premultiplied = false
        while Double(w) >= 2 * max(targetWidth, 1) && Double(h) >= 2 * max(targetHeight, 1) && w >= 2 && h >= 2 {
            (w, h, px) = SamplingSource.halve(px, w, h, premultiplied: premultiplied)
            premultiplied = true
        }
        if !premultiplied {
            px.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i < p.count {
                    let a = UInt32(p[i + 3])
                    if a != 255 {
                        for c in 0..<3 { p[i + c] = UInt8((UInt32(p[i + c]) * a + 127) / 255) }
                    }
                    i += 4
                }
            }
        }
        width = w
        height = h
        pixels = px
    }

    /// A 2x2 box filter; the result is premultiplied.
    private static func halve(_ src: [UInt8], _ w: Int, _ h: Int, premultiplied: Bool) -> (Int, Int, [UInt8]) {
        let nw = w / 2, nh = h / 2
        var out = [UInt8](repeating: 0, count: nw * nh * 4)
        src.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                for y in 0..<nh {
                    for x in 0..<nw {
                        var acc: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
                        for (sx, sy) in [(2 * x, 2 * y), (2 * x + 1, 2 * y), (2 * x, 2 * y + 1), (2 * x + 1, 2 * y + 1)] {
                            let i = (sy * w + sx) * 4
                            let a = UInt32(s[i + 3])
                            let k: UInt32 = premultiplied ? 255 : a
                            acc.0 += UInt32(s[i]) * k
                            acc.1 += UInt32(s[i + 1]) * k
                            acc.2 += UInt32(s[i + 2]) * k
                            acc.3 += a
                        }
                        let j = (y * nw + x) * 4
                        o[j] = UInt8((acc.0 + 510) / 1020)
                        o[j + 1] = UInt8((acc.1 + 510) / 1020)
                        o[j + 2] = UInt8((acc.2 + 510) / 1020)
                        o[j + 3] = UInt8((acc.3 + 2) / 4)
                    }
                }
            }
        }
        return (nw, nh, out)
    }
}

enum ImageRasterizer {
    /// Draws `source` into `frame` on `canvas` (opaque RGBA8 of `width` x `height`), source-over.
    static func draw(_ source: SamplingSource, in frame: PlacedFrame,
                     canvas: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int) {
        guard frame.width > 0, frame.height > 0, source.width > 0, source.height > 0,
              let b = frame.pixelBounds(width: width, height: height) else { return }
        let c = cos(frame.angle), s = sin(frame.angle)
        let sw = source.width, sh = source.height
        let uScale = Double(sw) / frame.width, vScale = Double(sh) / frame.height
        source.pixels.withUnsafeBufferPointer { src in
            for y in b.y0...b.y1 {
                for x in b.x0...b.x1 {
                    // The pixel centre carried back into the unrotated frame.
                    let dx = Double(x) + 0.5 - frame.centerX, dy = Double(y) + 0.5 - frame.centerY
                    let lx = dx * c + dy * s + frame.width / 2, ly = -dx * s + dy * c + frame.height / 2
                    let inside = min(lx, frame.width - lx, ly, frame.height - ly)
                    let coverage = min(1, inside + 0.5)
                    if coverage <= 0 { continue }
                    // Bilinear sample, edges clamped.
                    let u = min(max(lx * uScale - 0.5, 0), Double(sw - 1))
                    let v = min(max(ly * vScale - 0.5, 0), Double(sh - 1))
                    let u0 = Int(u), v0 = Int(v)
                    let u1 = min(u0 + 1, sw - 1), v1 = min(v0 + 1, sh - 1)
                    let fu = Float(u - Double(u0)), fv = Float(v - Double(v0))
                    let i00 = (v0 * sw + u0) * 4, i10 = (v0 * sw + u1) * 4
                    let i01 = (v1 * sw + u0) * 4, i11 = (v1 * sw + u1) * 4
                    var sample: (Float, Float, Float, Float) = (0, 0, 0, 0)
                    @inline(__always) func mix(_ k: Int) -> Float {
                        let top = Float(src[i00 + k]) * (1 - fu) + Float(src[i10 + k]) * fu
                        let bottom = Float(src[i01 + k]) * (1 - fu) + Float(src[i11 + k]) * fu
                        return (top * (1 - fv) + bottom * fv) * Float(coverage)
                    }
                    sample = (mix(0), mix(1), mix(2), mix(3))
                    let keep = 1 - sample.3 / 255
                    let i = (y * width + x) * 4
                    canvas[i] = UInt8(min(255, sample.0 + Float(canvas[i]) * keep + 0.5))
                    canvas[i + 1] = UInt8(min(255, sample.1 + Float(canvas[i + 1]) * keep + 0.5))
                    canvas[i + 2] = UInt8(min(255, sample.2 + Float(canvas[i + 2]) * keep + 0.5))
                }
            }
        }
    }

    /// A light grey box with a darker border and a cross, where an image could not be drawn.
    static func drawPlaceholder(in frame: PlacedFrame, scale: Double, mask: CoverageMask,
                                canvas: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int) {
        let grey = SamplingSource(RGBAImage(width: 1, height: 1, fill: (222, 222, 222, 255)),
                                  targetWidth: 1, targetHeight: 1)
        draw(grey, in: frame, canvas: canvas, width: width, height: height)
        let corners = [frame.toCanvas(frame.x, frame.y), frame.toCanvas(frame.x + frame.width, frame.y),
                       frame.toCanvas(frame.x + frame.width, frame.y + frame.height),
                       frame.toCanvas(frame.x, frame.y + frame.height)]
        let r = Float(max(0.5, 0.75 * scale))
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)] {
            mask.addCapsule(ax: Float(corners[a].0), ay: Float(corners[a].1), ar: r, aw: 1,
                            bx: Float(corners[b].0), by: Float(corners[b].1), br: r, bw: 1)
        }
        mask.composite(onto: canvas, r: 140, g: 140, b: 140, alpha: 1, blend: .normal)
    }
}
