// `lnote-dev bench sqlite --by-page-size`: one durable stroke appended (and one erased) on a page
// that already holds 0, 1k, 10k, 30k... strokes, each against a plain floor measured in turns.

import Foundation
import LnoteCommandLine
import LulucatHandwriting
import LulucatInk
import LulucatSQLite
import LulucatStore
import LulucatStoreSQLite

/// The cost of one save by the size of the page it lands on (docs/sqlite-engine.md §10.5).
enum SQLiteAppendBench {
    static let usage = """
        lnote-dev bench sqlite --by-page-size [--sizes 0,1000,10000,30000] [--pairs N] [--samples N] [--dir PATH] [--json]

        For each size: a SQLite page of that many strokes (written whole, compact rows, then
        checkpointed), then N rounds (default 31) of one durable stroke append on every page in
        turns (one transaction, synchronous FULL), each paired with its floor: the same stroke's
        fixed16 bytes written over a preallocated file + fdatasync, the order within a pair
        alternating. Then N rounds of one erase (a stroke replaced by two pieces). Reported:
        medians of the times and of the thread's CPU time, the median of the per-pair ratios to
        the floor, and each size's medians over the first size's.
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

        // Every size's page first; then the pairs of all sizes in turns (the order of the sizes
        // rotates every round), so that each size meets the same disk.
        struct Subject {
            let size: Int
            let store: SQLiteContentStore
            let page: UUID
            var existing: [Stroke]
            let floor: JournalBench.PlainAppend
            var seedSeconds = 0.0
            var appendMs: [Double] = [], appendCPUms: [Double] = [], appendFloorMs: [Double] = [], appendRatios: [Double] = []
            var eraseMs: [Double] = [], eraseCPUms: [Double] = [], eraseFloorMs: [Double] = [], eraseRatios: [Double] = []
        }
        var rng = SeededRandom(seed: 2026)
        var subjects: [Subject] = []
        for size in sizes {
            let dir = base + "/\(size)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            var configuration = SQLiteContentStore.Configuration()
            configuration.compactsAtClose = false
            let store = try SQLiteContentStore(path: dir + "/content.sqlite", configuration: configuration)
            let page = UUID()
            let existing = (0..<size).map { _ in stroke(samples: samples, &rng) }
            let seedTime = try measure { try store.replacePage(page, with: PageContent(elements: existing.map { .stroke($0) })) }
            try store.checkpointTruncate()
            var subject = Subject(size: size, store: store, page: page, existing: existing,
                                  floor: try JournalBench.PlainAppend(path: dir + "/floor", preallocate: 64 << 20))
            subject.seedSeconds = seedTime
            subjects.append(subject)
            if !json { print("page of \(size) strokes written in \(r(seedTime, 2)) s") }
        }
        defer { for s in subjects { s.floor.finish() } }
        /// One pair: the save and the floor, in the order `first` says; (save ms, save CPU ms, floor ms).
        func pair(_ first: Bool, save: () throws -> Void, floorBytes: [UInt8], floor: JournalBench.PlainAppend) throws -> (Double, Double, Double) {
            var t = 0.0, cpu = 0.0, f = 0.0
            for k in 0..<2 {
                if (k == 0) == first {
                    let c0 = threadCPUSeconds()
                    t = try measure(save)
                    cpu = threadCPUSeconds() - c0
                } else {
                    f = try measure { try floor.append(floorBytes) }
                }
            }
            return (t * 1000, cpu * 1000, f * 1000)
        }
        for i in 0..<pairs {
            for j in 0..<subjects.count {
                let k = (i + j) % subjects.count
                let new = stroke(samples: samples, &rng)
                let store = subjects[k].store, page = subjects[k].page
                let (t, cpu, f) = try pair((i + j) % 2 == 0, save: { try store.applyChanges(to: page, [.append([.stroke(new)])]) },
                                           floorBytes: StrokeBytes.fixed16(new), floor: subjects[k].floor)
                subjects[k].existing.append(new)
                subjects[k].appendMs.append(t); subjects[k].appendCPUms.append(cpu)
                subjects[k].appendFloorMs.append(f); subjects[k].appendRatios.append(t / f)
            }
        }
        for i in 0..<pairs {
            for j in 0..<subjects.count {
                let k = (i + j) % subjects.count
                // An erase through the middle of a stroke chosen at random: two pieces in its place.
                let victim = Int(rng.next() % UInt64(subjects[k].existing.count))
                let old = subjects[k].existing[victim]
                let half = old.samples.count / 2
                var left = Stroke(ink: old.ink, samples: Array(old.samples[..<half]))
                var right = Stroke(ink: old.ink, samples: Array(old.samples[(half + 1)...]))
                left.id = UUID(); right.id = UUID()
                let store = subjects[k].store, page = subjects[k].page
                let (t, cpu, f) = try pair((i + j) % 2 == 0, save: { try store.applyChanges(to: page, [.replace(old.id, with: [.stroke(left), .stroke(right)])]) },
                                           floorBytes: StrokeBytes.fixed16(left) + StrokeBytes.fixed16(right), floor: subjects[k].floor)
                subjects[k].existing[victim] = left
                subjects[k].existing.append(right)
                subjects[k].eraseMs.append(t); subjects[k].eraseCPUms.append(cpu)
                subjects[k].eraseFloorMs.append(f); subjects[k].eraseRatios.append(t / f)
            }
        }
        var rows: [[String: Any]] = []
        let first = subjects.first.map { (median($0.appendMs), median($0.appendCPUms), median($0.eraseMs), median($0.eraseCPUms)) }
        for s in subjects {
            let loaded = try s.store.elementCounts(s.page).strokes
            guard loaded == s.size + 2 * pairs else { throw UsageError("the page holds \(loaded) strokes, not \(s.size + 2 * pairs)") }
            try s.store.close()
            let append = median(s.appendMs), appendCPU = median(s.appendCPUms), erase = median(s.eraseMs), eraseCPU = median(s.eraseCPUms)
            rows.append([
                "strokes": s.size, "seed_page_s": r(s.seedSeconds, 2),
                "append_ms": r(append), "append_cpu_ms": r(appendCPU), "append_floor_ms": r(median(s.appendFloorMs)),
                "append_vs_floor": r(median(s.appendRatios)),
                "append_vs_first_size": r(append / first!.0), "append_cpu_vs_first_size": r(appendCPU / first!.1),
                "erase_ms": r(erase), "erase_cpu_ms": r(eraseCPU), "erase_floor_ms": r(median(s.eraseFloorMs)),
                "erase_vs_floor": r(median(s.eraseRatios)),
                "erase_vs_first_size": r(erase / first!.2), "erase_cpu_vs_first_size": r(eraseCPU / first!.3),
            ])
            if !json {
                print("""
                \(s.size) strokes: append \(r(append)) ms (CPU \(r(appendCPU)) ms), floor \(r(median(s.appendFloorMs))) ms, ratio \(r(median(s.appendRatios))); \
                vs \(sizes[0]) strokes: \(r(append / first!.0)) x (CPU \(r(appendCPU / first!.1)) x)
                  erase \(r(erase)) ms (CPU \(r(eraseCPU)) ms), floor \(r(median(s.eraseFloorMs))) ms, ratio \(r(median(s.eraseRatios))); \
                vs \(sizes[0]) strokes: \(r(erase / first!.2)) x (CPU \(r(eraseCPU / first!.3)) x)
                """)
            }
        }
        if json {
            let report: [String: Any] = ["pairs": pairs, "samples_per_stroke": samples, "sizes": rows, "sqlite_version": Connection.libraryVersion]
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// A stroke of `samples` samples with a little jitter.
    static func stroke(samples: Int, _ rng: inout SeededRandom) -> Stroke {
        var x = Int32(truncatingIfNeeded: rng.next() % 5_000), y = Int32(truncatingIfNeeded: rng.next() % 7_000)
        let points = (0..<samples).map { i -> Sample in
            x += 3 + Int32(truncatingIfNeeded: rng.next() % 5) - 2
            y += Int32(truncatingIfNeeded: rng.next() % 5) - 2
            return Sample(x: x, y: y, radius: UInt16(10 + i % 7), pressure: UInt16(300 + (i * 7) % 500), time: UInt32(i * 4))
        }
        return Stroke(samples: points)
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
