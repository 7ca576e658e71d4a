// PNG encoding: 8-bit RGB (opaque images) or RGBA, per-row adaptive filter, zlib deflate.

import Foundation

package enum PNGEncoder {
    /// The PNG file of `image`: colour type 2 (RGB) when every pixel is opaque, else 6 (RGBA).
    /// Each row takes the filter whose output has the smallest sum of absolute values (the libpng
    /// heuristic), which compresses rendered pages far better than no filter.
    /// - Throws: `RenderError.encodingFailed` for an empty or over-limit image.
    package static func encode(_ image: RGBAImage) throws -> Data {
        guard image.width > 0, image.height > 0 else {
            throw RenderError.encodingFailed(format: "PNG", "the image is empty (\(image.width) x \(image.height))")
        }
        guard image.width <= ImageLimits.maxDimension, image.height <= ImageLimits.maxDimension else {
            throw RenderError.encodingFailed(format: "PNG", "\(image.width) x \(image.height) is over the size limit")
        }
        let opaque = image.isOpaque
        let bpp = opaque ? 3 : 4
        let filtered = filterRows(image, bytesPerPixel: bpp)
        let idat = try Zlib.deflate(filtered)

        var png: [UInt8] = PNGFormat.signature
        var ihdr: [UInt8] = []
        ihdr.appendBigEndian(UInt32(image.width))
        ihdr.appendBigEndian(UInt32(image.height))
        ihdr += [8, opaque ? 2 : 6, 0, 0, 0]  // depth 8, colour type, deflate, adaptive filters, no interlace
        appendChunk("IHDR", ihdr, to: &png)
        appendChunk("IDAT", idat, to: &png)
        appendChunk("IEND", [], to: &png)
        return Data(png)
    }

    private static func appendChunk(_ type: String, _ body: [UInt8], to png: inout [UInt8]) {
        png.appendBigEndian(UInt32(body.count))
        let start = png.count
        png += Array(type.utf8)
        png += body
        let crc = png.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        png.appendBigEndian(crc)
    }

    /// Rows prefixed by their filter byte, ready to deflate.
    private static func filterRows(_ image: RGBAImage, bytesPerPixel bpp: Int) -> [UInt8] {
        let w = image.width, h = image.height
        let rowLength = w * bpp
        var out = [UInt8](repeating: 0, count: h * (rowLength + 1))
        var previous = [UInt8](repeating: 0, count: rowLength)
        var current = [UInt8](repeating: 0, count: rowLength)
        var candidate = [UInt8](repeating: 0, count: rowLength)
        var best = [UInt8](repeating: 0, count: rowLength)
        image.pixels.withUnsafeBufferPointer { px in
            for y in 0..<h {
                // The row's pixels without alpha when the image is RGB.
                for x in 0..<w {
                    for c in 0..<bpp { current[x * bpp + c] = px[(y * w + x) * 4 + c] }
                }
                var bestType: UInt8 = 0
                var bestScore = Int.max
                for type: UInt8 in 0...4 {
                    let score = PNGFormat.filter(type: type, row: current, previous: previous, bpp: bpp, into: &candidate)
                    if score < bestScore { bestScore = score; bestType = type; swap(&best, &candidate) }
                }
                let o = y * (rowLength + 1)
                out[o] = bestType
                out.withUnsafeMutableBufferPointer { dst in
                    best.withUnsafeBufferPointer { src in
                        UnsafeMutableRawPointer(dst.baseAddress! + o + 1).copyMemory(from: src.baseAddress!, byteCount: rowLength)
                    }
                }
                swap(&previous, &current)
            }
        }
        return out
    }
}

/// Constants and filter arithmetic shared by the PNG encoder and decoder.
enum PNGFormat {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    @inline(__always) static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let p = Int(a) + Int(b) - Int(c)
        let pa = abs(p - Int(a)), pb = abs(p - Int(b)), pc = abs(p - Int(c))
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }

    /// Filters `row` with `type` into `out`; returns the sum of the outputs read as signed bytes.
    static func filter(type: UInt8, row: [UInt8], previous: [UInt8], bpp: Int, into out: inout [UInt8]) -> Int {
        var score = 0
        for i in 0..<row.count {
            let a: UInt8 = i >= bpp ? row[i - bpp] : 0
            let b = previous[i]
            let c: UInt8 = i >= bpp ? previous[i - bpp] : 0
            let predictor: UInt8
            switch type {
            case 0: predictor = 0
            case 1: predictor = a
            case 2: predictor = b
            case 3: predictor = UInt8((Int(a) + Int(b)) / 2)
            default: predictor = paeth(a, b, c)
            }
            let v = row[i] &- predictor
            out[i] = v
            score += v < 128 ? Int(v) : 256 - Int(v)
        }
        return score
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ v: UInt32) {
        append(UInt8(v >> 24)); append(UInt8((v >> 16) & 0xFF)); append(UInt8((v >> 8) & 0xFF)); append(UInt8(v & 0xFF))
    }
}
