// `lnote-dev bench sqlite --by-page-size`: one durable stroke appended (and one erased) on a page
// that already holds 0, 1k, 10k, 30k... strokes, each against a plain floor measured in turns.

import Foundation
import LnoteCommandLine
import LulucatInk
import LulucatSQLite
import LulucatStore
import LulucatStoreSQLite

/// The cost of one save by the size of the page it lands on (docs/sqlite-engine.md §10.5).
enum SQLiteAppendBench {
    static let usage = """
        lnote-dev bench sqlite --by-page-size [--sizes 0,1000,10000,30000] [--pairs N] [--samples N] [--dir PATH] [--json]

        For each size: a SQLite page of that many strokes (written whole, compact rows, then
        checkpointed), then N pairs (default 31) of one durable stroke append (one transaction,
        synchronous FULL) and the floor: the same stroke's fixed16 bytes written over a
        preallocated file + fdatasync; the order within a pair alternates. Then N pairs of one
        erase (a stroke replaced by two pieces) and the floor. Reported: medians of the times,
        the median of the per-pair ratios, and each size's append time over the first size's.
        """

    static func run(_ arguments: [String]) async throws {
        if arguments.contains("--help") { print(usage); return }
        let args = try Arguments(arguments, valued: ["sizes", "pairs", "samples", "dir"], flags: ["json", "by-page-size"])
        let sizes = try (args.value("sizes") ?? "0,1000,10000,30000").split(separator: ",").map { part -> Int in
            guard let n = Int(part), n >= 0, n <= 1_000_000 else { throw UsageError("--sizes takes counts 0...1000000, not '\(part)'") }
            return n
        }
        let pairs = try args.int("pairs", in: 1...10_000) ?? 31
        let samples = try args.int("samples", in: 2...10_000) ?? 150
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-sqlite-append-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")

        var rows: [[String: Any]] = []
        var firstAppend: Double?
        for size in sizes {
            let dir = base + "/\(size)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            var configuration = SQLiteContentStore.Configuration()
            configuration.compactsAtClose = false
            let store = try SQLiteContentStore(path: dir + "/content.sqlite", configuration: configuration)
            let page = UUID()
            var rng = SplitMix(seed: UInt64(size) &+ 1)
            var existing = (0..<size).map { _ in stroke(samples: samples, &rng) }
            let seedTime = try measure { try store.replacePage(page, with: PageContent(elements: existing.map { .stroke($0) })) }
            try store.checkpointTruncate()
            let floor = try JournalBench.PlainAppend(path: dir + "/floor", preallocate: 64 << 20)
            defer { floor.finish() }

            var appendMs: [Double] = [], appendFloorMs: [Double] = [], appendRatios: [Double] = []
            var eraseMs: [Double] = [], eraseFloorMs: [Double] = [], eraseRatios: [Double] = []
            for i in 0..<pairs {
                let new = stroke(samples: samples, &rng)
                let bytes = StrokeBytes.fixed16(new)
                var t = 0.0, f = 0.0
                for k in 0..<2 {
                    if (i + k) % 2 == 0 {
                        t = try measure { try store.applyChanges(to: page, [.append([.stroke(new)])]) }
                    } else {
                        f = try measure { try floor.append(bytes) }
                    }
                }
                existing.append(new)
                appendMs.append(t * 1000); appendFloorMs.append(f * 1000); appendRatios.append(t / f)
            }
            for i in 0..<pairs {
                // An erase through the middle of a stroke chosen at random: two pieces in its place.
                let victim = Int(rng.next() % UInt64(existing.count))
                let old = existing[victim]
                let half = old.samples.count / 2
                var left = Stroke(ink: old.ink, samples: Array(old.samples[..<half]))
                var right = Stroke(ink: old.ink, samples: Array(old.samples[(half + 1)...]))
                left.id = UUID(); right.id = UUID()
                let bytes = StrokeBytes.fixed16(left) + StrokeBytes.fixed16(right)
                var t = 0.0, f = 0.0
                for k in 0..<2 {
                    if (i + k) % 2 == 0 {
                        t = try measure { try store.applyChanges(to: page, [.replace(old.id, with: [.stroke(left), .stroke(right)])]) }
                    } else {
                        f = try measure { try floor.append(bytes) }
                    }
                }
                existing[victim] = left
                existing.append(right)
                eraseMs.append(t * 1000); eraseFloorMs.append(f * 1000); eraseRatios.append(t / f)
            }
            let loaded = try store.elementCounts(page).strokes
            guard loaded == size + 2 * pairs else { throw UsageError("the page holds \(loaded) strokes, not \(size + 2 * pairs)") }
            try store.close()
            let append = median(appendMs)
            if firstAppend == nil { firstAppend = append }
            rows.append([
                "strokes": size,
                "seed_page_s": r(seedTime, 2),
                "append_ms": r(append), "append_floor_ms": r(median(appendFloorMs)), "append_vs_floor": r(median(appendRatios)),
                "append_vs_first_size": r(append / firstAppend!),
                "erase_ms": r(median(eraseMs)), "erase_floor_ms": r(median(eraseFloorMs)), "erase_vs_floor": r(median(eraseRatios)),
            ])
            if !json {
                print("\(size) strokes: append \(r(append)) ms (floor \(r(median(appendFloorMs))) ms, ratio \(r(median(appendRatios))), \(r(append / firstAppend!)) x the first size); erase \(r(median(eraseMs))) ms (floor \(r(median(eraseFloorMs))) ms, ratio \(r(median(eraseRatios))))")
            }
        }
        if json {
            let report: [String: Any] = ["pairs": pairs, "samples_per_stroke": samples, "sizes": rows, "sqlite_version": Connection.libraryVersion]
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// A stroke of `samples` samples with a little jitter.
    static func stroke(samples: Int, _ rng: inout SplitMix) -> Stroke {
        var x = Int32(truncatingIfNeeded: rng.next() % 5_000), y = Int32(truncatingIfNeeded: rng.next() % 7_000)
        let points = (0..<samples).map { i -> Sample in
            x += 3 + Int32(truncatingIfNeeded: rng.next() % 5) - 2
            y += Int32(truncatingIfNeeded: rng.next() % 5) - 2
            return Sample(x: x, y: y, radius: UInt16(10 + i % 7), pressure: UInt16(300 + (i * 7) % 500), time: UInt32(i * 4))
        }
        return Stroke(samples: points)
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1330_11EB
            return z ^ (z >> 31)
        }
    }

    enum StrokeBytes {
        /// The stroke's samples as a save writes them (fixed16, 16 bytes a sample).
        static func fixed16(_ stroke: Stroke) -> [UInt8] {
            var writer = ByteWriter(capacity: stroke.samples.count * 16)
            SampleCodecID.fixed16.encodeSamples(stroke, into: &writer)
            return writer.bytes
        }
    }
}
