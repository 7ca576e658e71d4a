// The compact codec: exact round trips on awkward and real strokes, its size rules, and its
// decoder on corrupt bytes (no CRC to protect it).

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct CompactCodecTests {
    func roundTrip(_ s: Stroke, _ codec: SampleCodecID) throws -> Stroke {
        var w = ByteWriter()
        codec.encodeSamples(s, into: &w)
        return try w.bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            let (samples, channels) = try codec.decodeSamples(count: s.samples.count, channels: s.channels, from: &r)
            #expect(r.isAtEnd)
            var out = Stroke(id: s.id, ink: s.ink, samples: samples)
            var it = channels.makeIterator()
            if s.azimuth != nil { out.azimuth = it.next() }
            if s.altitude != nil { out.altitude = it.next() }
            if s.opacity != nil { out.opacity = it.next() }
            return out
        }
    }

    @Test(arguments: SampleCodecID.allCases)
    func awkwardStrokesRoundTrip(_ codec: SampleCodecID) throws {
        for s in TestInk.awkwardStrokes() {
            #expect(try roundTrip(s, codec) == s, "\(codec) stroke of \(s.samples.count) samples")
        }
    }

    @Test func manyRandomSmoothAndJumpyStrokesRoundTrip() throws {
        var rng = SeededRandom(seed: 99)
        for trial in 0..<300 {
            let n = rng.int(0...200)
            var x = Int32(truncatingIfNeeded: rng.next()), y = Int32(rng.int(-5000...5000))
            var t: UInt32 = 0
            let jumpy = trial % 3 == 0
            let samples: [Sample] = (0..<n).map { _ in
                x = x &+ Int32(jumpy ? rng.int(-100_000...100_000) : rng.int(-3...3))
                y = y &+ Int32(rng.int(-20...20))
                t = t &+ UInt32(rng.int(0...(jumpy ? 70_000 : 5)))
                return Sample(x: x, y: y, radius: UInt16(rng.int(0...40)), pressure: UInt16(rng.int(0...4000)), time: t)
            }
            let s = Stroke(samples: samples, opacity: trial % 5 == 0 ? samples.map { _ in UInt16(rng.int(990...1000)) } : nil)
            #expect(try roundTrip(s, .compact) == s)
        }
    }

    @Test(.enabled(if: TestInk.sharedInkRoot() != nil, "needs shared/data/ink (or LNOTE_INK_DIR)"))
    func realInkRoundTripsAndStaysSmall() throws {
        let strokes = try TestInk.realStrokes()
        #expect(!strokes.isEmpty)
        var coded = 0, samples = 0
        for s in strokes {
            #expect(try roundTrip(s, .compact) == s)
            coded += SampleCodecID.compact.codedSampleBytes(s)
            samples += s.samples.count
        }
        // Both folders together; bench codec reports each (2.76 and 2.01 when written).
        #expect(Double(coded) / Double(samples) < 2.9)
    }

    @Test func generatedPageRoundTripsUnderOneAndAHalfBytesASample() throws {
        let page = HandwritingGenerator(seed: 1).page(strokes: 120)
        var coded = 0
        for s in page.strokes {
            #expect(try roundTrip(s, .compact) == s)
            coded += SampleCodecID.compact.codedSampleBytes(s)
        }
        #expect(Double(coded) / Double(page.sampleCount) < 1.5)
    }

    @Test func constantChannelsCostAFlag() {
        let varying = HandwritingGenerator(seed: 3).stroke(letters: 3)
        var constant = varying
        constant.samples = varying.samples.map { var s = $0; s.radius = 17; s.pressure = 0; return s }
        var onlyRadius = varying
        onlyRadius.samples = varying.samples.map { var s = $0; s.radius = 17; return s }
        let full = SampleCodecID.compact.codedSampleBytes(varying)
        let withoutPressure = SampleCodecID.compact.codedSampleBytes(constant)
        let withoutRadius = SampleCodecID.compact.codedSampleBytes(onlyRadius)
        // A constant channel is its first value and one flag bit: two bytes at most.
        var pressureOnly = constant
        pressureOnly.samples = constant.samples.map { var s = $0; s.radius = 0; return s }
        #expect(SampleCodecID.compact.codedSampleBytes(pressureOnly) <= withoutPressure)
        #expect(withoutRadius < full)
        #expect(withoutPressure < withoutRadius)
        let allConstant = Stroke(samples: Array(repeating: Sample(x: 100, y: 100, radius: 10, pressure: 0, time: 0), count: 4))
        #expect(SampleCodecID.compact.codedSampleBytes(allConstant) <= 1 + 8)
    }

    @Test func everyStrokeCostsAtLeastABitASample() {
        for n in [1, 7, 8, 9, 63, 64, 65, 1000, 4097] {
            let s = Stroke(samples: Array(repeating: Sample(x: 0, y: 0, radius: 0, pressure: 0, time: 0), count: n))
            var w = ByteWriter()
            CompactCodec.encode(s, into: &w)
            #expect(w.count * 8 >= n, "\(n) samples in \(w.count) bytes")
        }
    }

    @Test func decoderRejectsACountBeyondEightTimesItsBytes() {
        let bytes: [UInt8] = [0xFF, 0xFF]
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            #expect(throws: PageFormatError.self) { try CompactCodec.decode(count: 17, channels: [], from: &r) }
            var r2 = ByteReader(raw)
            #expect(throws: PageFormatError.self) {
                try CompactCodec.decode(count: PageFile.maxSamplesPerStroke, channels: .all, from: &r2)
            }
        }
    }

    /// Corrupt coded samples straight into the decoder (no CRC in the way): it must return an
    /// error or some samples, never crash or hang, and never read past its bytes.
    @Test func decoderSurvivesMutationsAndGarbage() {
        var rng = SeededRandom(seed: 2024)
        let strokes = TestInk.awkwardStrokes(seed: 5).filter { !$0.samples.isEmpty }
        var decodedSome = 0, rejected = 0
        for trial in 0..<4000 {
            let s = strokes[trial % strokes.count]
            var w = ByteWriter()
            CompactCodec.encode(s, into: &w)
            var bytes = w.bytes
            switch trial % 4 {
            case 0:  // flip a few bits
                for _ in 0..<rng.int(1...3) { bytes[rng.int(0...bytes.count - 1)] ^= UInt8(1) << UInt8(rng.int(0...7)) }
            case 1:  // cut the tail
                bytes.removeLast(rng.int(1...bytes.count))
            case 2:  // random bytes
                bytes = (0..<rng.int(0...64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            default:  // overwrite a run with one byte (0x00 makes long unary codes, 0xFF short ones)
                let at = rng.int(0...bytes.count - 1)
                let fill: UInt8 = rng.int(0...1) == 0 ? 0 : 0xFF
                for i in at..<min(bytes.count, at + rng.int(1...8)) { bytes[i] = fill }
            }
            let count = trial % 7 == 0 ? rng.int(0...2000) : s.samples.count
            let channels = trial % 5 == 0 ? OptionalChannels(rawValue: UInt8(rng.int(0...7))) : s.channels
            bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                do {
                    let (samples, values) = try CompactCodec.decode(count: count, channels: channels, from: &r)
                    #expect(samples.count == count)
                    #expect(values.count == channels.rawValue.nonzeroBitCount)
                    #expect(values.allSatisfy { $0.count == count })
                    #expect(r.offset <= raw.count)
                    decodedSome += 1
                } catch {
                    rejected += 1
                }
            }
        }
        #expect(rejected > 1000)
        #expect(decodedSome + rejected == 4000)
    }
}
