// A decoded bitmap: 8-bit red, green, blue, alpha per pixel, straight (not premultiplied) alpha.

/// A bitmap in memory: rows top to bottom, 4 bytes a pixel (R, G, B, A), alpha not premultiplied.
///
/// What the renderer draws into, what the PNG and JPEG decoders produce, and what an image asset
/// is drawn from.
package struct RGBAImage: Hashable, Sendable {
    package let width: Int
    package let height: Int
    /// `width * height * 4` bytes.
    package var pixels: [UInt8]

    /// - Precondition: `pixels.count == width * height * 4`.
    package init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 4,
                     "RGBAImage: \(pixels.count) bytes for \(width) x \(height) pixels")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// An image filled with one colour.
    package init(width: Int, height: Int, fill: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) {
        var p = [UInt8](repeating: 0, count: width * height * 4)
        p.withUnsafeMutableBufferPointer { buf in
            var i = 0
            while i < buf.count {
                buf[i] = fill.r; buf[i + 1] = fill.g; buf[i + 2] = fill.b; buf[i + 3] = fill.a
                i += 4
            }
        }
        self.init(width: width, height: height, pixels: p)
    }

    /// The pixel at (x, y) as (r, g, b, a).
    package func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = (y * width + x) * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }

    /// Whether every pixel has alpha 255.
    package var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { buf in
            var i = 3
            while i < buf.count {
                if buf[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }

    /// This image composited over white, alpha 255 everywhere (JPEG has no alpha channel).
    package func flattenedOnWhite() -> RGBAImage {
        if isOpaque { return self }
        var out = pixels
        out.withUnsafeMutableBufferPointer { buf in
            var i = 0
            while i < buf.count {
                let a = UInt32(buf[i + 3])
                for c in 0..<3 {
                    // c * a + 255 * (255 - a), divided by 255 with rounding.
                    let v = UInt32(buf[i + c]) * a + 255 * (255 - a)
                    buf[i + c] = UInt8((v + 127) / 255)
                }
                buf[i + 3] = 255
                i += 4
            }
        }
        return RGBAImage(width: width, height: height, pixels: out)
    }
}

/// Limits every decoder checks before it allocates: files come from other devices.
package enum ImageLimits {
    /// Largest width or height accepted, in pixels.
    package static let maxDimension = 16_384
    /// Largest pixel count accepted (100 megapixels).
    package static let maxPixels = 100_000_000

    /// Throws `RenderError.imageTooLarge` unless `width` x `height` is non-empty and within the limits.
    package static func check(width: Int, height: Int, format: String) throws {
        guard width > 0, height > 0 else {
            throw RenderError.corruptImage(format: format, "the image declares \(width) x \(height) pixels")
        }
        guard width <= maxDimension, height <= maxDimension, width * height <= maxPixels else {
            throw RenderError.imageTooLarge(width: width, height: height)
        }
    }
}
