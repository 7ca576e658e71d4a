// PNG decoding for image assets: 8-bit greyscale, grey+alpha, RGB, RGBA and palette, not interlaced.
// The file is untrusted: every chunk length and CRC is checked, the size limited before allocating,
// and the inflated data must be exactly as long as the header says.

import Foundation

package enum PNGDecoder {
    /// Decodes a PNG into straight-alpha RGBA.
    /// - Throws: `RenderError.corruptImage` (bad signature, chunk, CRC or data),
    ///   `.unsupportedImage` (bit depth other than 8, interlacing), `.imageTooLarge`.
    package static func decode(_ data: Data) throws -> RGBAImage {
        try data.withUnsafeBytes { try decode(bytes: $0) }
    }

    private struct Header {
        var width = 0, height = 0, colorType: UInt8 = 0
        var channels: Int {
            switch colorType { case 0: return 1; case 2: return 3; case 3: return 1; case 4: return 2; default: return 4 }
        }
    }

    private static func fail(_ m: String) -> RenderError { .corruptImage(format: "PNG", m) }

    private static func decode(bytes: UnsafeRawBufferPointer) throws -> RGBAImage {
        guard bytes.count >= 8, Array(bytes[0..<8]) == PNGFormat.signature else {
            throw fail("the PNG signature is missing")
        }
        var offset = 8
        var header: Header?
        var idat: [UnsafeRawBufferPointer] = []
        var palette: [UInt8] = []          // RGBA, 4 bytes an entry
        var sawIEND = false
        func readU32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        while !sawIEND {
            guard bytes.count - offset >= 12 else { throw fail("the file ends inside a chunk header at byte \(offset)") }
            let length = Int(readU32(offset))
            guard length <= Int(Int32.max), length <= bytes.count - offset - 12 else {
                throw fail("a chunk at byte \(offset) declares \(length) bytes, past the end of the file")
            }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + length)])
            let stored = readU32(offset + 8 + length)
            let computed = Zlib.crc32(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 8 + length)]))
            guard stored == computed else { throw fail("chunk \(type) at byte \(offset) fails its CRC") }
            let bodyStart = offset + 8
            offset += 12 + length

            if header == nil && type != "IHDR" { throw fail("the first chunk is \(type), expected IHDR") }
            switch type {
            case "IHDR":
                guard header == nil, length == 13 else { throw fail("IHDR is repeated or not 13 bytes") }
                let w = Int(readU32(bodyStart))
                let h = Int(readU32(bodyStart + 4))
                try ImageLimits.check(width: w, height: h, format: "PNG")
                let depth = body[8], colorType = body[9]
                guard [0, 2, 3, 4, 6].contains(colorType) else { throw fail("colour type \(colorType) is not defined") }
                guard depth == 8 else {
                    throw RenderError.unsupportedImage(format: "PNG", "bit depth \(depth) (only 8 is read)")
                }
                guard body[10] == 0, body[11] == 0 else { throw fail("unknown compression or filter method") }
                guard body[12] == 0 else { throw RenderError.unsupportedImage(format: "PNG", "interlaced images are not read") }
                header = Header(width: w, height: h, colorType: colorType)
            case "PLTE":
                guard length % 3 == 0, length > 0, length <= 768 else { throw fail("PLTE of \(length) bytes") }
                palette = []
                for i in 0..<(length / 3) { palette += [body[3 * i], body[3 * i + 1], body[3 * i + 2], 255] }
            case "tRNS":
                if header?.colorType == 3 {
                    guard length <= palette.count / 4 else { throw fail("tRNS has more entries than PLTE") }
                    for i in 0..<length { palette[4 * i + 3] = body[i] }
                }
            case "IDAT":
                idat.append(body)
            case "IEND":
                sawIEND = true
            default:
                // An unknown critical chunk (upper-case first letter) changes how the image decodes.
                if let first = type.utf8.first, first >= 0x41, first <= 0x5A {
                    throw RenderError.unsupportedImage(format: "PNG", "critical chunk \(type)")
                }
            }
        }
        guard let header else { throw fail("no IHDR") }
        guard !idat.isEmpty else { throw fail("no IDAT") }
        if header.colorType == 3 && palette.isEmpty { throw fail("palette image without PLTE") }

        let bpp = header.channels
        let rowLength = header.width * bpp
        let raw = try Zlib.inflate(pieces: idat, expectedCount: header.height * (rowLength + 1), format: "PNG")
        return try unfilter(raw, header: header, palette: palette)
    }

    private static func unfilter(_ raw: [UInt8], header: Header, palette: [UInt8]) throws -> RGBAImage {
        let w = header.width, h = header.height, bpp = header.channels
        let rowLength = w * bpp
        var previous = [UInt8](repeating: 0, count: rowLength)
        var row = [UInt8](repeating: 0, count: rowLength)
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let paletteCount = palette.count / 4
        for y in 0..<h {
            let start = y * (rowLength + 1)
            let type = raw[start]
            guard type <= 4 else { throw fail("row \(y) has filter type \(type)") }
            for i in 0..<rowLength {
                let a: UInt8 = i >= bpp ? row[i - bpp] : 0
                let b = previous[i]
                let c: UInt8 = i >= bpp ? previous[i - bpp] : 0
                let predictor: UInt8
                switch type {
                case 0: predictor = 0
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = UInt8((Int(a) + Int(b)) / 2)
                default: predictor = PNGFormat.paeth(a, b, c)
                }
                row[i] = raw[start + 1 + i] &+ predictor
            }
            for x in 0..<w {
                let o = (y * w + x) * 4, s = x * bpp
                switch header.colorType {
                case 0: pixels[o] = row[s]; pixels[o + 1] = row[s]; pixels[o + 2] = row[s]; pixels[o + 3] = 255
                case 4: pixels[o] = row[s]; pixels[o + 1] = row[s]; pixels[o + 2] = row[s]; pixels[o + 3] = row[s + 1]
                case 2: pixels[o] = row[s]; pixels[o + 1] = row[s + 1]; pixels[o + 2] = row[s + 2]; pixels[o + 3] = 255
                case 3:
                    let index = Int(row[s])
                    guard index < paletteCount else { throw fail("pixel (\(x), \(y)) uses palette entry \(index) of \(paletteCount)") }
                    for c in 0..<4 { pixels[o + c] = palette[index * 4 + c] }
                default: for c in 0..<4 { pixels[o + c] = row[s + c] }
                }
            }
            swap(&previous, &row)
        }
        return RGBAImage(width: w, height: h, pixels: pixels)
    }
}
