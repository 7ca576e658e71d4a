// The PNG encoder and decoder: exact round trips, independent validation, and hostile files.

import Foundation
import Testing
@testable import LulucatRender

@Suite struct PNGCodecTests {
    static func pattern(width: Int, height: Int, opaque: Bool) -> RGBAImage {
        var px = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                px[i] = UInt8((x * 7 + y * 3) & 0xFF)
                px[i + 1] = UInt8((x * y) & 0xFF)
                px[i + 2] = UInt8((255 - x * 5) & 0xFF)
                px[i + 3] = opaque ? 255 : UInt8((x * 11 + y * 13) & 0xFF)
            }
        }
        return RGBAImage(width: width, height: height, pixels: px)
    }

    @Test func roundTripIsExact() throws {
        for opaque in [true, false] {
            for (w, h) in [(1, 1), (3, 2), (37, 19), (64, 64)] {
                let image = Self.pattern(width: w, height: h, opaque: opaque)
                let data = try PNGEncoder.encode(image)
                #expect(data[25] == (opaque ? 2 : 6), "colour type")
                #expect(try PNGDecoder.decode(data) == image)
                #expect(try RGBAImage(decoding: data) == image)
            }
        }
    }

    @Test func filtersMakeSmoothImagesSmall() throws {
        var px = [UInt8](repeating: 255, count: 256 * 256 * 4)
        for y in 0..<256 { for x in 0..<256 { px[(y * 256 + x) * 4] = UInt8(x); px[(y * 256 + x) * 4 + 1] = UInt8(y) } }
        let data = try PNGEncoder.encode(RGBAImage(width: 256, height: 256, pixels: px))
        // Unfiltered, a two-way gradient barely compresses; the Sub/Up filters make it nearly constant.
        #expect(data.count < 4000, "\(data.count) bytes")
    }

    /// Checks the file with Python's zlib (an independent inflater and CRC): every chunk's CRC, and
    /// the unfiltered pixels equal the image. Skipped where python3 is not installed.
    @Test(.enabled(if: PNGCodecTests.python3 != nil)) func pythonZlibAgrees() throws {
        let image = Self.pattern(width: 23, height: 17, opaque: false)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lulucat-png-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try PNGEncoder.encode(image).write(to: dir.appendingPathComponent("a.png"))
        try Data(image.pixels).write(to: dir.appendingPathComponent("a.rgba"))
        let script = """
        import struct, sys, zlib
        d = open(sys.argv[1] + '/a.png', 'rb').read()
        assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n'
        o, idat, ihdr = 8, b'', None
        while o < len(d):
            n, = struct.unpack('>I', d[o:o+4]); t = d[o+4:o+8]; body = d[o+8:o+8+n]
            assert struct.unpack('>I', d[o+8+n:o+12+n])[0] == zlib.crc32(t + body) & 0xffffffff, t
            if t == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
            if t == b'IDAT': idat += body
            o += 12 + n
        w, h, depth, ctype = ihdr[:4]; bpp = 4
        raw = zlib.decompress(idat); stride = w * bpp; prev = bytearray(stride); out = bytearray()
        for y in range(h):
            f = raw[y * (stride + 1)]; row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
                if f == 1: row[i] = (row[i] + a) & 255
                elif f == 2: row[i] = (row[i] + b) & 255
                elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            out += row; prev = row
        assert bytes(out) == open(sys.argv[1] + '/a.rgba', 'rb').read()
        print('ok')
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PNGCodecTests.python3!)
        process.arguments = ["-c", script, dir.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(output == "ok\n")
    }

    static let python3: String? = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test func everyTruncationAndByteFlipIsAnError() throws {
        let data = try PNGEncoder.encode(Self.pattern(width: 9, height: 7, opaque: false))
        for n in 0..<data.count {
            #expect(throws: RenderError.self, "truncated at \(n)") { try PNGDecoder.decode(data.prefix(n)) }
        }
        for offset in 0..<data.count {
            var bad = data
            bad[offset] ^= 0x01
            // CRCs cover every byte after the signature, so any single flip is caught.
            #expect(throws: RenderError.self, "flip at \(offset)") { try PNGDecoder.decode(bad) }
        }
    }

    // MARK: Hand-made files with valid CRCs and hostile contents.

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendBigEndian(UInt32(body.count))
        let typed = Array(type.utf8) + body
        out += typed
        out.appendBigEndian(typed.withUnsafeBytes { Zlib.crc32($0) })
        return out
    }

    static func ihdr(_ w: UInt32, _ h: UInt32, depth: UInt8 = 8, colorType: UInt8 = 6, interlace: UInt8 = 0) -> [UInt8] {
        var body: [UInt8] = []
        body.appendBigEndian(w)
        body.appendBigEndian(h)
        body += [depth, colorType, 0, 0, interlace]
        return chunk("IHDR", body)
    }

    static func png(_ chunks: [[UInt8]]) -> Data { Data(PNGFormat.signature + chunks.joined() + chunk("IEND", [])) }

    @Test func hugeDimensionsAreRefused() {
        for (w, h) in [(100_000, 1), (1, 16_385), (12_000, 12_000), (UInt32.max, UInt32.max)] as [(UInt32, UInt32)] {
            #expect(throws: RenderError.imageTooLarge(width: Int(w), height: Int(h))) {
                try PNGDecoder.decode(Self.png([Self.ihdr(w, h), Self.chunk("IDAT", try! Zlib.deflate([0]))]))
            }
        }
        #expect(throws: RenderError.self) { try PNGDecoder.decode(Self.png([Self.ihdr(0, 5)])) }
    }

    @Test func unsupportedKindsSaySo() throws {
        let idat = Self.chunk("IDAT", try Zlib.deflate([0, 0, 0, 0, 0]))
        for header in [Self.ihdr(1, 1, depth: 16), Self.ihdr(1, 1, interlace: 1)] {
            #expect {
                try PNGDecoder.decode(Self.png([header, idat]))
            } throws: { error in
                if case RenderError.unsupportedImage = error { return true }
                return false
            }
        }
    }

    @Test func pixelDataOfTheWrongLengthIsCorrupt() throws {
        // A 2 x 2 RGBA image needs 2 * (1 + 8) = 18 bytes.
        for raw in [[UInt8](repeating: 0, count: 17), [UInt8](repeating: 0, count: 19), []] {
            #expect(throws: RenderError.self) {
                try PNGDecoder.decode(Self.png([Self.ihdr(2, 2), Self.chunk("IDAT", try Zlib.deflate(raw))]))
            }
        }
        var badFilter = [UInt8](repeating: 0, count: 18)
        badFilter[9] = 5
        #expect(throws: RenderError.self) {
            try PNGDecoder.decode(Self.png([Self.ihdr(2, 2), Self.chunk("IDAT", try Zlib.deflate(badFilter))]))
        }
        #expect(throws: RenderError.self) { try PNGDecoder.decode(Self.png([Self.ihdr(2, 2)])) }  // no IDAT
        #expect(throws: RenderError.self) {
            try PNGDecoder.decode(Self.png([Self.ihdr(2, 2), Self.chunk("IDAT", [1, 2, 3, 4])]))  // not zlib
        }
    }

    @Test func greyPaletteAndSplitIDATDecode() throws {
        // Grey + alpha, 2 x 1.
        let grey = try PNGDecoder.decode(Self.png([Self.ihdr(2, 1, colorType: 4),
                                                   Self.chunk("IDAT", try Zlib.deflate([0, 10, 20, 30, 40]))]))
        #expect(grey.pixels == [10, 10, 10, 20, 30, 30, 30, 40])
        // Palette with transparency, the zlib stream split over two IDAT chunks.
        let stream = try Zlib.deflate([0, 1, 0, 2])
        let palette = Self.chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255])
        let trns = Self.chunk("tRNS", [255, 128])
        let indexed = try PNGDecoder.decode(Self.png([Self.ihdr(3, 1, colorType: 3), palette, trns,
                                                      Self.chunk("IDAT", Array(stream.prefix(5))),
                                                      Self.chunk("IDAT", Array(stream.dropFirst(5)))]))
        #expect(indexed.pixels == [0, 255, 0, 128, 255, 0, 0, 255, 0, 0, 255, 255])
        // An index past the palette is corrupt, not an out-of-bounds read.
        #expect(throws: RenderError.self) {
            try PNGDecoder.decode(Self.png([Self.ihdr(1, 1, colorType: 3), palette,
                                            Self.chunk("IDAT", try Zlib.deflate([0, 3]))]))
        }
        // An unknown critical chunk is refused; an unknown ancillary one is skipped.
        let idat = Self.chunk("IDAT", try Zlib.deflate([0, 1, 2, 3]))
        #expect(throws: RenderError.self) {
            try PNGDecoder.decode(Self.png([Self.ihdr(1, 1, colorType: 2), Self.chunk("ABCD", []), idat]))
        }
        let rgb = try PNGDecoder.decode(Self.png([Self.ihdr(1, 1, colorType: 2), Self.chunk("tEXt", Array("a\0b".utf8)), idat]))
        #expect(rgb.pixels == [1, 2, 3, 255])
    }
}
