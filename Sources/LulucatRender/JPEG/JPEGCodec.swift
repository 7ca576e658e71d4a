// JPEG encoding and decoding through libjpeg-turbo (the CJPEG shim), on every platform without ImageIO.

#if !canImport(ImageIO)
import CJPEG
import Foundation

/// Encodes and decodes JPEG in memory. On Apple platforms the same API is backed by ImageIO.
package enum JPEGCodec {
    /// Decodes a JPEG into RGBA (alpha 255).
    /// - Throws: `RenderError.corruptImage` for truncated or corrupt data (libjpeg's warnings
    ///   count as errors), `.imageTooLarge` beyond `ImageLimits`, before any pixel is allocated.
    package static func decode(_ data: Data) throws -> RGBAImage {
        guard !data.isEmpty else { throw RenderError.corruptImage(format: "JPEG", "no data") }
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> RGBAImage in
            let bytes = raw.bindMemory(to: UInt8.self)
            var width: Int32 = 0, height: Int32 = 0
            let headerStatus = withMessageBuffer { msg, cap in
                lulucat_jpeg_read_size(bytes.baseAddress, bytes.count, &width, &height, msg, cap)
            }
            guard headerStatus.code == LULUCAT_JPEG_OK else {
                throw RenderError.corruptImage(format: "JPEG", headerStatus.message)
            }
            let w = Int(width), h = Int(height)
            try ImageLimits.check(width: w, height: h, format: "JPEG")
            var failure: (code: Int32, message: String)?
            let pixels = [UInt8](unsafeUninitializedCapacity: w * h * 4) { out, count in
                let status = withMessageBuffer { msg, cap in
                    lulucat_jpeg_decode_rgba(bytes.baseAddress, bytes.count, width, height,
                                             ImageLimits.maxPixels, out.baseAddress, out.count, msg, cap)
                }
                if status.code == LULUCAT_JPEG_OK {
                    count = w * h * 4
                } else {
                    failure = status
                    count = 0
                }
            }
            if let failure {
                if failure.code == LULUCAT_JPEG_TOO_LARGE { throw RenderError.imageTooLarge(width: w, height: h) }
                throw RenderError.corruptImage(format: "JPEG", failure.message)
            }
            return RGBAImage(width: w, height: h, pixels: pixels)
        }
    }

    /// Encodes `image` as a baseline JPEG; transparent pixels are flattened onto white first.
    /// - Parameter quality: 1...100.
    /// - Throws: `RenderError.encodingFailed` for an empty image, a quality outside 1...100, or a
    ///   library failure.
    package static func encode(_ image: RGBAImage, quality: Int) throws -> Data {
        guard image.width > 0, image.height > 0 else {
            throw RenderError.encodingFailed(format: "JPEG", "the image is empty (\(image.width) x \(image.height))")
        }
        guard (1...100).contains(quality) else {
            throw RenderError.encodingFailed(format: "JPEG", "quality \(quality) is outside 1...100")
        }
        let flat = image.flattenedOnWhite()
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = flat.pixels.withUnsafeBufferPointer { px in
            withMessageBuffer { msg, cap in
                lulucat_jpeg_encode(px.baseAddress, Int32(flat.width), Int32(flat.height), 4, Int32(quality),
                                    &out, &size, msg, cap)
            }
        }
        guard status.code == LULUCAT_JPEG_OK, let out else {
            throw RenderError.encodingFailed(format: "JPEG", status.message.isEmpty ? "code \(status.code)" : status.message)
        }
        defer { lulucat_jpeg_free(out) }
        return Data(bytes: out, count: Int(size))
    }

    /// Runs `body` with a C buffer for the shim's message and returns its code and the message.
    private static func withMessageBuffer(
        _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32
    ) -> (code: Int32, message: String) {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (code, message)
    }
}
#endif
