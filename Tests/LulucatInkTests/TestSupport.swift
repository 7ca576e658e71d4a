// Helpers shared by the LulucatInk tests: random strokes with edge values, and the real ink folder.

import Foundation
@testable import LulucatInk
import LulucatHandwriting

enum TestInk {
    /// Strokes of every awkward shape: 0, 1, 2 samples, extremes of every field, jumps, optional
    /// channels, constant channels, smooth handwriting.
    static func awkwardStrokes(seed: UInt64 = 7) -> [Stroke] {
        var rng = SeededRandom(seed: seed)
        var strokes: [Stroke] = []
        let extremes32: [Int32] = [.min, .max, 0, -1, 1, .min + 1, .max - 1]
        let extremes16: [UInt16] = [0, 1, .max, .max - 1, 0x8000]
        let extremesTime: [UInt32] = [0, 1, .max, .max - 1, 0x8000_0000]
        func sample(_ r: inout SeededRandom) -> Sample {
            Sample(x: extremes32[r.int(0...extremes32.count - 1)], y: extremes32[r.int(0...extremes32.count - 1)],
                   radius: extremes16[r.int(0...extremes16.count - 1)], pressure: extremes16[r.int(0...extremes16.count - 1)],
                   time: extremesTime[r.int(0...extremesTime.count - 1)])
        }
        for n in [0, 1, 2, 3, 5, 17] {
            strokes.append(Stroke(samples: (0..<n).map { _ in sample(&rng) }))
            strokes.append(Stroke(samples: (0..<n).map { _ in sample(&rng) },
                                  azimuth: (0..<n).map { _ in extremes16[rng.int(0...4)] },
                                  altitude: (0..<n).map { _ in UInt16(rng.int(0...1571)) },
                                  opacity: (0..<n).map { _ in extremes16[rng.int(0...4)] }))
        }
        // Constant everything (the 1-bit-a-sample rule), and constant with one channel moving.
        strokes.append(Stroke(samples: Array(repeating: Sample(x: 5, y: 5, radius: 10, pressure: 0, time: 0), count: 1000)))
        strokes.append(Stroke(samples: Array(repeating: Sample(x: .min, y: .max, radius: .max, pressure: .max, time: .max), count: 64)))
        strokes.append(Stroke(samples: (0..<300).map { Sample(x: 7, y: 7, radius: 10, pressure: 500, time: UInt32($0) * 4) }))
        // Wild random values.
        for n in [4, 50, 300] {
            strokes.append(Stroke(samples: (0..<n).map { _ in
                Sample(x: Int32(truncatingIfNeeded: rng.next()), y: Int32(truncatingIfNeeded: rng.next()),
                       radius: UInt16(truncatingIfNeeded: rng.next()), pressure: UInt16(truncatingIfNeeded: rng.next()),
                       time: UInt32(truncatingIfNeeded: rng.next()))
            }, azimuth: (0..<n).map { _ in UInt16(truncatingIfNeeded: rng.next()) }))
        }
        // Values that wrap: alternating extremes, ramps through the Int32 boundary.
        var wrapping: [Sample] = []
        var ramp: [Sample] = []
        for i in 0..<40 {
            let x: Int32 = i % 2 == 0 ? .min : .max
            let y: Int32 = Int32.max &- Int32(i)
            let radius: UInt16 = i % 2 == 0 ? 0 : .max
            let time: UInt32 = UInt32.max &- UInt32(i)
            wrapping.append(Sample(x: x, y: y, radius: radius, pressure: UInt16(65535 - i), time: time))
            let rx: Int32 = Int32.max &+ Int32(i % 7)
            let ry: Int32 = Int32(i) &* 123_456_789
            let rt: UInt32 = UInt32(i) &* 0x3000_0000
            ramp.append(Sample(x: rx, y: ry, radius: 3, pressure: UInt16(i * 1000), time: rt))
        }
        strokes.append(Stroke(samples: wrapping))
        strokes.append(Stroke(samples: ramp))
        // Smooth handwriting with and without pencil tilt.
        let g = HandwritingGenerator(seed: seed)
        for v in 0..<6 {
            var s = g.stroke(letters: 1 + v, variant: UInt64(v))
            if v % 2 == 1 {
                s.azimuth = s.samples.indices.map { UInt16(1000 + $0 * 3) }
                s.altitude = s.samples.indices.map { _ in 900 }
            }
            strokes.append(s)
        }
        return strokes
    }

    /// The folder of real ink folders (`shared/data/ink`), found from `LNOTE_INK_DIR` or from this
    /// file's place in a worktree; nil when this checkout has none.
    static func sharedInkRoot() -> URL? {
        if let env = ProcessInfo.processInfo.environment["LNOTE_INK_DIR"] { return URL(fileURLWithPath: env) }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<6 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent("shared/data/ink")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Every stroke of every JSONL file under the real ink folder.
    static func realStrokes() throws -> [Stroke] {
        guard let root = sharedInkRoot() else { return [] }
        var strokes: [Stroke] = []
        let folders = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        for folder in folders {
            let dir = root.appendingPathComponent(folder)
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            for file in files.sorted() where file.hasSuffix(".jsonl") {
                strokes += try InkJSONL.strokes(from: try Data(contentsOf: dir.appendingPathComponent(file)))
            }
        }
        return strokes
    }
}

extension Array where Element == UInt8 {
    /// Rewrites the CRC32C trailer so the bytes pass the checksum (to reach the checks behind it).
    func withFixedChecksum() -> [UInt8] {
        var b = self
        let crc = CRC32C.checksum(Array(b[0..<b.count - 4]))
        for i in 0..<4 { b[b.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return b
    }
}
