// JPEG through libjpeg-turbo: round trips, and corrupt, truncated or oversized files as errors.

import Foundation
import Testing
@testable import LulucatRender

@Suite struct JPEGCodecTests {
    /// A smooth 64 x 48 picture (JPEG's friendly case) with a few hard edges.
    static var picture: RGBAImage {
        var px = [UInt8](repeating: 255, count: 64 * 48 * 4)
        for y in 0..<48 {
            for x in 0..<64 {
                let i = (y * 64 + x) * 4
                px[i] = UInt8(x * 4)
                px[i + 1] = UInt8(y * 5)
                px[i + 2] = (x / 16 + y / 16) % 2 == 0 ? 40 : 200
            }
        }
        return RGBAImage(width: 64, height: 48, pixels: px)
    }

    static let encoded: Data = try! JPEGCodec.encode(picture, quality: 90)

    @Test func roundTripWithinTolerance() throws {
        let data = Self.encoded
        #expect(data.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(data.suffix(2) == Data([0xFF, 0xD9]))
        let decoded = try JPEGCodec.decode(data)
        #expect(decoded.width == 64 && decoded.height == 48)
        #expect(decoded.isOpaque)
        var total = 0, worst = 0
        for i in stride(from: 0, to: decoded.pixels.count, by: 4) {
            for c in 0..<3 {
                let e = abs(Int(decoded.pixels[i + c]) - Int(Self.picture.pixels[i + c]))
                total += e
                worst = max(worst, e)
            }
        }
        let mean = Double(total) / Double(64 * 48 * 3)
        // Chroma subsampling blurs the blue checker's edges; elsewhere the error is about 1.
        #expect(mean < 5, "mean error \(mean)")
        #expect(worst < 60, "worst error \(worst)")
    }

    @Test func qualityChangesTheSize() throws {
        let low = try JPEGCodec.encode(Self.picture, quality: 20)
        #expect(low.count < Self.encoded.count)
        #expect(try RGBAImage(decoding: low).width == 64)
    }

    @Test func transparentPixelsAreFlattenedOnWhite() throws {
        let clear = RGBAImage(width: 16, height: 16, fill: (0, 0, 0, 0))
        let decoded = try JPEGCodec.decode(try clear.jpegData(quality: 95))
        #expect(decoded.pixels.allSatisfy { $0 >= 250 })
    }

    @Test func badEncoderArgumentsThrow() {
        #expect(throws: RenderError.self) { try JPEGCodec.encode(Self.picture, quality: 0) }
        #expect(throws: RenderError.self) { try JPEGCodec.encode(Self.picture, quality: 101) }
        #expect(throws: RenderError.self) { try JPEGCodec.encode(RGBAImage(width: 0, height: 0, pixels: []), quality: 80) }
    }

    @Test func everyTruncationIsAnError() {
        let data = Self.encoded
        var offsets = Array(0..<min(400, data.count))
        offsets += stride(from: 400, to: data.count, by: 7)
        for n in offsets {
            #expect(throws: RenderError.self, "truncated at \(n) of \(data.count)") {
                try JPEGCodec.decode(data.prefix(n))
            }
        }
    }

    @Test func flippedBytesNeverCrash() {
        let data = Self.encoded
        var errors = 0
        for offset in stride(from: 2, to: data.count - 2, by: 3) {
            for mask: UInt8 in [0xFF, 0x10] {
                var bad = data
                bad[offset] ^= mask
                do {
                    let image = try JPEGCodec.decode(bad)
                    // Some flips land in entropy-coded data that still decodes: a changed picture.
                    #expect(image.width <= ImageLimits.maxDimension && image.height <= ImageLimits.maxDimension)
                    #expect(image.pixels.count == image.width * image.height * 4)
                } catch {
                    #expect(error is RenderError)
                    errors += 1
                }
            }
        }
        #expect(errors > 50, "most corruptions are detected; \(errors) were")
    }

    @Test func corruptMessagesComeFromLibjpeg() {
        do {
            _ = try JPEGCodec.decode(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data(repeating: 0x41, count: 40))
            Issue.record("garbage decoded")
        } catch let RenderError.corruptImage(format, message) {
            #expect(format == "JPEG")
            #expect(!message.isEmpty)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    /// The encoded picture with its frame header claiming `width` x `height`.
    static func withDeclaredSize(width: Int, height: Int) -> Data {
        var data = encoded
        let bytes = [UInt8](data)
        // SOF0: FF C0, length (2), precision (1), height (2), width (2).
        let sof = (0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }!
        data[sof + 5] = UInt8(height >> 8); data[sof + 6] = UInt8(height & 0xFF)
        data[sof + 7] = UInt8(width >> 8); data[sof + 8] = UInt8(width & 0xFF)
        return data
    }

    @Test func hugeDeclaredDimensionsAreRefusedBeforeDecoding() {
        for (w, h) in [(60000, 60000), (20000, 10), (10, 16385), (10000, 10001)] {
            #expect(throws: RenderError.imageTooLarge(width: w, height: h)) {
                try JPEGCodec.decode(Self.withDeclaredSize(width: w, height: h))
            }
        }
        // libjpeg itself refuses sides over 65,500 pixels; still an error, never an allocation.
        #expect(throws: RenderError.self) { try JPEGCodec.decode(Self.withDeclaredSize(width: 65535, height: 65535)) }
        // Within the limits the header is believed and the short data is what fails.
        #expect(throws: RenderError.self) { try JPEGCodec.decode(Self.withDeclaredSize(width: 4000, height: 3000)) }
    }

    @Test func notAJPEG() {
        #expect(throws: RenderError.self) { try JPEGCodec.decode(Data()) }
        #expect(throws: RenderError.self) { try JPEGCodec.decode(Data("hello, world".utf8)) }
        #expect(throws: RenderError.unknownImageFormat) { try RGBAImage(decoding: Data("GIF89a".utf8)) }
    }
}

@Suite struct JPEGWarningTests {
    /// Stray bytes between two segments (some cameras write them) decode; the same picture cut
    /// short does not.
    @Test func strayBytesBetweenSegmentsAreTolerated() throws {
        let data = [UInt8](JPEGCodecTests.encoded)
        // Insert two bytes just before the SOS marker (FF DA).
        let sos = (0..<(data.count - 1)).first { data[$0] == 0xFF && data[$0 + 1] == 0xDA }!
        let stray = Data(data[..<sos] + [0x00, 0x17] + data[sos...])
        let image = try JPEGCodec.decode(stray)
        #expect(image == (try JPEGCodec.decode(JPEGCodecTests.encoded)))
        #expect(throws: RenderError.self) { try JPEGCodec.decode(stray.prefix(stray.count - 40)) }
    }
}
