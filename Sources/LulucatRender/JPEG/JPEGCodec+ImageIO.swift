// JPEG through ImageIO on Apple platforms, where libjpeg-turbo is not shipped. Same API as the
// libjpeg-turbo JPEGCodec; kept minimal because it cannot be tested on the Linux CI.

#if canImport(ImageIO)
import CoreGraphics
import Foundation
import ImageIO

package enum JPEGCodec {
    package static func decode(_ data: Data) throws -> RGBAImage {
        guard let source = CGImageSourceCreateWithData(data as CFData, nil),
              let props = CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [CFString: Any],
              let w = props[kCGImagePropertyPixelWidth] as? Int,
              let h = props[kCGImagePropertyPixelHeight] as? Int
        else { throw RenderError.corruptImage(format: "JPEG", "ImageIO could not read the header") }
        try ImageLimits.check(width: w, height: h, format: "JPEG")
        guard let image = CGImageSourceCreateImageAtIndex(source, 0, nil), image.width == w, image.height == h
        else { throw RenderError.corruptImage(format: "JPEG", "ImageIO could not decode the image") }
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let drawn = pixels.withUnsafeMutableBytes { buf -> Bool in
            guard let ctx = CGContext(data: buf.baseAddress, width: w, height: h, bitsPerComponent: 8,
                                      bytesPerRow: w * 4, space: CGColorSpaceCreateDeviceRGB(),
                                      bitmapInfo: CGImageAlphaInfo.noneSkipLast.rawValue)
            else { return false }
            ctx.draw(image, in: CGRect(x: 0, y: 0, width: w, height: h))
            return true
        }
        guard drawn else { throw RenderError.corruptImage(format: "JPEG", "could not create a bitmap context") }
        for i in stride(from: 3, to: pixels.count, by: 4) { pixels[i] = 255 }
        return RGBAImage(width: w, height: h, pixels: pixels)
    }

    package static func encode(_ image: RGBAImage, quality: Int) throws -> Data {
        guard image.width > 0, image.height > 0, (1...100).contains(quality) else {
            throw RenderError.encodingFailed(format: "JPEG", "empty image or quality outside 1...100")
        }
        let flat = image.flattenedOnWhite()
        let out = NSMutableData()
        guard let provider = CGDataProvider(data: Data(flat.pixels) as CFData),
              let cg = CGImage(width: flat.width, height: flat.height, bitsPerComponent: 8, bitsPerPixel: 32,
                               bytesPerRow: flat.width * 4, space: CGColorSpaceCreateDeviceRGB(),
                               bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.noneSkipLast.rawValue),
                               provider: provider, decode: nil, shouldInterpolate: false, intent: .defaultIntent),
              let dest = CGImageDestinationCreateWithData(out as CFMutableData, "public.jpeg" as CFString, 1, nil)
        else { throw RenderError.encodingFailed(format: "JPEG", "ImageIO could not create the encoder") }
        CGImageDestinationAddImage(dest, cg, [kCGImageDestinationLossyCompressionQuality: Double(quality) / 100] as CFDictionary)
        guard CGImageDestinationFinalize(dest) else {
            throw RenderError.encodingFailed(format: "JPEG", "ImageIO could not finish the file")
        }
        return out as Data
    }
}
#endif
