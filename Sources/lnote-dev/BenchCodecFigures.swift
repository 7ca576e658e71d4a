// The measurements of `lnote-dev bench codec` for one input, and how they are printed.

import Foundation
import LulucatInk

/// What `lnote-dev bench codec` measured on one input.
struct CodecFigures {
    var name: String
    var samples = 0
    var strokes = 0
    var compactCodedBytes = 0
    var fixed16CodedBytes = 0
    var compactFileBytes = 0
    var fixed16FileBytes = 0
    /// Bytes a stroke spends outside its coded samples: kind, length, id, ink index, channel bits.
    var strokeOverheadBytes = 0.0
    var compactEncodeSeconds = 0.0
    var compactDecodeSeconds = 0.0
    var fixed16EncodeSeconds = 0.0
    var fixed16DecodeSeconds = 0.0
    var memcpySeconds = 0.0

    func perSample(_ bytes: Int) -> Double { samples == 0 ? 0 : Double(bytes) / Double(samples) }
    func rate(_ seconds: Double) -> Double { seconds > 0 ? Double(samples) / seconds : 0 }
    var fixed16DecodeVsMemcpy: Double { memcpySeconds > 0 ? fixed16DecodeSeconds / memcpySeconds : 0 }

    var json: [String: Any] {
        [
            "name": name, "samples": samples, "strokes": strokes,
            "compact_bytes_per_sample": perSample(compactCodedBytes),
            "file_bytes_per_sample": perSample(compactFileBytes),
            "fixed16_bytes_per_sample": perSample(fixed16CodedBytes),
            "fixed16_file_bytes_per_sample": perSample(fixed16FileBytes),
            "compact_file_bytes": compactFileBytes, "fixed16_file_bytes": fixed16FileBytes,
            "stroke_overhead_bytes": strokeOverheadBytes,
            "compact_encode_samples_per_s": rate(compactEncodeSeconds),
            "compact_decode_samples_per_s": rate(compactDecodeSeconds),
            "fixed16_encode_samples_per_s": rate(fixed16EncodeSeconds),
            "fixed16_decode_samples_per_s": rate(fixed16DecodeSeconds),
            "fixed16_decode_vs_memcpy": fixed16DecodeVsMemcpy,
        ]
    }

    /// The samples of every stroke coded back to back, and where each stroke's bytes are.
    struct Coded {
        var bytes: [UInt8]
        var ranges: [Range<Int>]
    }

    static func encodeAll(_ strokes: [Stroke], _ codec: SampleCodecID, capacity: Int) -> Coded {
        var w = ByteWriter(capacity: capacity)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(strokes.count)
        for s in strokes {
            let start = w.count
            codec.encodeSamples(s, into: &w)
            ranges.append(start..<w.count)
        }
        return Coded(bytes: w.bytes, ranges: ranges)
    }

    /// Decodes every stroke; returns a value that depends on all of them so no work is elided.
    static func decodeAll(_ coded: Coded, _ strokes: [Stroke], _ codec: SampleCodecID) throws -> Int {
        var check = 0
        try coded.bytes.withUnsafeBytes { raw in
            for (i, range) in coded.ranges.enumerated() {
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: raw[range]))
                let (samples, channels) = try codec.decodeSamples(count: strokes[i].samples.count,
                                                                  channels: strokes[i].channels, from: &r)
                check &+= samples.count &+ Int(samples.last?.x ?? 0) &+ channels.count
            }
        }
        return check
    }

    /// Copies each stroke's fixed16 bytes to the same place of `destination`.
    static func copyAll(_ coded: Coded, into destination: inout [UInt8]) -> Int {
        coded.bytes.withUnsafeBytes { src in
            destination.withUnsafeMutableBytes { dst in
                for range in coded.ranges {
                    UnsafeMutableRawBufferPointer(rebasing: dst[range]).copyMemory(from: UnsafeRawBufferPointer(rebasing: src[range]))
                }
            }
        }
        return Int(destination[destination.count / 2])
    }

    /// The CPU time this thread spends in `body`: on a machine shared with other work, wall-clock
    /// time would measure the neighbours too.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = threadCPUSeconds()
        try body()
        return threadCPUSeconds() - start
    }



    static func measure(_ name: String, _ page: PageContent, rounds: Int) throws -> CodecFigures {
        var f = CodecFigures(name: name)
        let strokes = page.strokes
        f.strokes = strokes.count
        f.samples = page.sampleCount
        for s in strokes {
            f.compactCodedBytes += SampleCodecID.compact.codedSampleBytes(s)
            f.fixed16CodedBytes += SampleCodecID.fixed16.codedSampleBytes(s)
        }
        let compactFile = try PageFile.encode(page, codec: .compact)
        f.compactFileBytes = compactFile.count
        f.fixed16FileBytes = try PageFile.encode(page, codec: .fixed16).count
        guard try PageFile.decode(compactFile) == page else {
            throw CodecBenchError("compact page of \(name) does not decode to what was encoded")
        }
        // Per-stroke framing, from the file itself: everything but the page header, ink table,
        // element count, trailer and the coded samples, shared among the strokes.
        let inks = Set(strokes.map(\.ink)).count
        let pageFixed = PageFile.headerSize + PageFile.trailerSize + varintSize(inks) + 7 * inks + varintSize(page.elements.count)
        let otherElements = page.elements.count - strokes.count
        f.strokeOverheadBytes = strokes.isEmpty ? 0
            : Double(f.compactFileBytes - pageFixed - f.compactCodedBytes - 57 * otherElements) / Double(strokes.count)

        let compact = encodeAll(strokes, .compact, capacity: f.compactCodedBytes)
        let fixed16 = encodeAll(strokes, .fixed16, capacity: f.fixed16CodedBytes)
        let expected = try decodeAll(compact, strokes, .compact)
        guard try decodeAll(fixed16, strokes, .fixed16) == expected else {
            throw CodecBenchError("fixed16 and compact decode \(name) differently")
        }
        var destination = [UInt8](repeating: 0, count: fixed16.bytes.count)
        var times: [String: [Double]] = [:]
        var check = 0
        for _ in 0..<rounds {
            times["fixed16 decode", default: []].append(try seconds { check &+= try decodeAll(fixed16, strokes, .fixed16) })
            times["memcpy", default: []].append(seconds { check &+= copyAll(fixed16, into: &destination) })
            times["compact decode", default: []].append(try seconds { check &+= try decodeAll(compact, strokes, .compact) })
            times["compact encode", default: []].append(seconds { check &+= encodeAll(strokes, .compact, capacity: f.compactCodedBytes).bytes.count })
            times["fixed16 encode", default: []].append(seconds { check &+= encodeAll(strokes, .fixed16, capacity: f.fixed16CodedBytes).bytes.count })
        }
        blackHole(check)
        f.fixed16DecodeSeconds = median(times["fixed16 decode"]!)
        f.memcpySeconds = median(times["memcpy"]!)
        f.compactDecodeSeconds = median(times["compact decode"]!)
        f.compactEncodeSeconds = median(times["compact encode"]!)
        f.fixed16EncodeSeconds = median(times["fixed16 encode"]!)
        return f
    }

    static func varintSize(_ v: Int) -> Int {
        var n = 1, v = v
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    static func table(_ results: [CodecFigures]) -> String {
        func m(_ r: Double) -> String { String(format: "%.1f M/s", r / 1e6) }
        func b(_ x: Double) -> String { String(format: "%.3f", x) }
        var rows: [[String]] = [["", "samples", "strokes", "compact B/s", "compact file B/s", "fixed16 B/s",
                                 "fixed16 file B/s", "stroke overhead B", "compact enc", "compact dec",
                                 "fixed16 enc", "fixed16 dec", "fixed16 dec/memcpy"]]
        for r in results {
            rows.append([r.name, "\(r.samples)", "\(r.strokes)", b(r.perSample(r.compactCodedBytes)),
                         b(r.perSample(r.compactFileBytes)), b(r.perSample(r.fixed16CodedBytes)),
                         b(r.perSample(r.fixed16FileBytes)), String(format: "%.1f", r.strokeOverheadBytes),
                         m(r.rate(r.compactEncodeSeconds)), m(r.rate(r.compactDecodeSeconds)),
                         m(r.rate(r.fixed16EncodeSeconds)), m(r.rate(r.fixed16DecodeSeconds)),
                         String(format: "%.2fx", r.fixed16DecodeVsMemcpy)])
        }
        // Transposed: one column per input, one row per figure, so it fits a terminal.
        var lines: [String] = []
        let width0 = rows[0].map(\.count).max()! + 2
        for (i, label) in rows[0].enumerated() {
            let cells = rows.dropFirst().map { $0[i].padding(toLength: max(16, $0[0].count + 2), withPad: " ", startingAt: 0) }
            lines.append((i == 0 ? "input" : label).padding(toLength: width0, withPad: " ", startingAt: 0) + cells.joined())
        }
        lines.append("\nB/s = bytes per sample; compact B/s counts each stroke's coded samples with its sample count;")
        lines.append("file B/s is the whole .content file. Speeds in samples per second of one thread's CPU time, medians\nof rounds that run every measurement side by side.")
        return lines.joined(separator: "\n")
    }
}

struct CodecBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

@inline(never) func blackHole(_ x: Int) {
    if x == 0x5EED_5EED { print("") }
}
