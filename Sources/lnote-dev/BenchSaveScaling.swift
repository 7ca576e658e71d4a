// One stroke, then save: by page size and by notebook length, each save against a plain-file
// floor of the same number of bytes measured in the same run, the two taking turns (which goes
// first alternates), reported as medians of the per-pair ratios. Used by `lnote-dev bench save`
// (snapshot engine: the floor rewrites a file of the page's size, renamed over one of the same
// size) and `lnote-dev bench journal` (journal engine: the floor appends the bytes a save wrote
// to a preallocated file and syncs it).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum SaveScaling {
    struct Options {
        /// Strokes on the saved page, one document each (by page size).
        var sizes = [100, 1_000, 10_000, 100_000]
        /// Pages in the notebook, one document each (by notebook length).
        var lengths = [2, 200, 2_000, 10_000]
        /// Strokes on the saved page of the notebooks.
        var lengthStrokes = 1_000
        /// Measured pairs per document (after one unmeasured warm-up pair).
        var runs = 15

        static let valued: Set<String> = ["sizes", "lengths", "length-strokes", "runs"]

        static let help = """
              --sizes LIST           strokes on the saved page, one document each (default 100,1000,10000,100000)
              --lengths LIST         pages in the notebook, one document each (default 2,200,2000,10000)
              --length-strokes N     strokes on the saved page of those notebooks (default 1000)
              --runs N               measured pairs (save, floor) per document (default 15)
              --dir PATH             where the documents are made (default: the temporary folder)
              --json                 print the figures as JSON
            """

        init() {}

        init(_ args: Arguments) throws {
            func list(_ name: String) throws -> [Int]? {
                guard let v = args.value(name) else { return nil }
                let items = v.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !items.isEmpty, items.allSatisfy({ $0 != nil }) else { throw UsageError("--\(name) takes numbers separated by commas, not '\(v)'") }
                return items.map { $0! }
            }
            if let s = try list("sizes") { sizes = s }
            if let l = try list("lengths") { lengths = l }
            lengthStrokes = try args.int("length-strokes", in: 1...1_000_000) ?? lengthStrokes
            runs = try args.int("runs", in: 1...10_000) ?? runs
            guard sizes.allSatisfy({ (1...1_000_000).contains($0) }) else { throw UsageError("--sizes: each in 1...1000000") }
            guard lengths.allSatisfy({ (1...100_000).contains($0) }) else { throw UsageError("--lengths: each in 1...100000") }
        }
    }

    /// One document's figures.
    struct Row {
        var strokes: Int
        var pages: Int
        var pageBytes = 0
        var save: [Double] = []
        var floor: [Double] = []
        var saveBytes: [Double] = []
        var floorBytes: [Double] = []
        var append: [Double] = []
        var saveCPU: [Double] = []
        var floorCPU: [Double] = []

        var ratio: Double { median(zip(save, floor).map { $0 / $1 }) }

        var json: [String: Any] {
            ["strokes": strokes, "pages": pages, "page_bytes": pageBytes,
             "save_ms": r(median(save) * 1000), "floor_ms": r(median(floor) * 1000),
             "save_vs_floor": r(ratio, 3), "save_cpu_ms": r(median(saveCPU) * 1000, 3),
             "floor_cpu_ms": r(median(floorCPU) * 1000, 3),
             "append_ms": r(median(append) * 1000, 4),
             "save_bytes": Int(median(saveBytes)), "floor_bytes": Int(median(floorBytes))]
        }

        var line: String {
            func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
            return pad("\(strokes)", 8) + pad("\(pages)", 8) + pad("\(pageBytes)", 11) + pad("\(Int(median(saveBytes)))", 11)
                + pad("\(r(median(save) * 1000))", 10) + pad("\(r(median(floor) * 1000))", 10) + pad("\(r(ratio, 3))", 9)
                + pad("\(r(median(saveCPU) * 1000, 3))", 10) + pad("\(r(median(floorCPU) * 1000, 3))", 10)
                + pad("\(r(median(append) * 1000, 4))", 10)
        }

        static let header = "  strokes   pages  page bytes save bytes   save ms  floor ms   ratio  save CPU floor CPU append ms"
    }

    /// The floor a save is measured against.
    enum FloorKind {
        /// The page file rewritten: a new file of the save's bytes, synced, renamed over a file of
        /// the same size, the directory synced (what a snapshot save does, through plain calls).
        case rewrite
        /// The bytes a save wrote appended to a preallocated file and `fdatasync`ed (what a
        /// journal save does).
        case append
    }

    static func run(engine: EngineKind, floor kind: FloorKind, options: Options, base: String,
                    say: (String) -> Void) async throws -> (bySize: [Row], byLength: [Row]) {
        let generator = HandwritingGenerator(seed: 2026)
        let largest = max(options.sizes.max() ?? 0, options.lengthStrokes)
        let model = generator.page(strokes: min(largest, 2_000), canvas: .letter).strokes
        // New strokes written on top, one per save, as a person writes.
        let extra = (0..<(options.runs + 1)).map { k in
            generator.stroke(letters: 3, origin: (72 + Double(k % 20) * 24, 700), variant: UInt64(k + 1))
        }
        var bySize: [Row] = [], byLength: [Row] = []
        for n in options.sizes {
            say("  \(engine): a page of \(n) strokes in a 2-page notebook...")
            bySize.append(try await measureDocument(engine: engine, floor: kind, strokes: n, pages: 2, model: model, extra: extra,
                                            runs: options.runs, base: base + "/size-\(n)"))
        }
        for p in options.lengths {
            say("  \(engine): a page of \(options.lengthStrokes) strokes in a \(p)-page notebook...")
            byLength.append(try await measureDocument(engine: engine, floor: kind, strokes: options.lengthStrokes, pages: p, model: model,
                                              extra: extra, runs: options.runs, base: base + "/length-\(p)"))
        }
        return (bySize, byLength)
    }

    /// Makes a notebook of `pages` pages whose first holds `strokes` strokes (the others empty),
    /// writing its files directly (a notebook of 10,000 pages made page by page would rewrite
    /// document.json 10,000 times), then saves one new stroke at a time on that page.
    static func measureDocument(engine: EngineKind, floor kind: FloorKind, strokes: Int, pages: Int, model: [Stroke],
                        extra: [Stroke], runs: Int, base: String) async throws -> Row {
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let counting = CountingFileSystem()
        let fs: any FileSystem = kind == .append ? counting : PosixFileSystem()
        let library = Library(root: base + "/library", fileSystem: fs)
        let package = try await library.createDocument(title: "\(strokes) strokes, \(pages) pages", engine: engine, codec: .compact)
        var doc = try PackageReader.readDocument(package, fileSystem: PosixFileSystem())
        let first = doc.pages[0].id
        let elements = (0..<strokes).map { i -> Element in
            var s = model[i % model.count]
            s.id = UUID()
            return .stroke(s)
        }
        let pageBytes = try PageFile.encode(PageContent(canvasSize: .letter, elements: elements), codec: .compact)
        try Data(pageBytes).write(to: URL(fileURLWithPath: package.pagePath(first)))
        try? FileManager.default.removeItem(atPath: package.journalPath(first))
        doc.pages[0].elementCount = strokes
        let empty = Data(try PageFile.encode(PageContent(canvasSize: .letter), codec: .compact))
        let now = Date()
        for _ in 1..<max(1, pages) {
            let id = UUID()
            try empty.write(to: URL(fileURLWithPath: package.pagePath(id)))
            doc.pages.append(PageEntry(id: id, canvas: .letter, created: now, modified: now, elementCount: 0))
        }
        try Data(PackageJSON.encode(doc)).write(to: URL(fileURLWithPath: package.documentPath))
        try Data(PackageJSON.encode(Manifest(doc))).write(to: URL(fileURLWithPath: package.manifestPath))
        sync()

        // No autosave (each save is the measured one) and no thumbnails (each save would render
        // the page in the background, on the same cores).
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, maxLoadedPages: 4, thumbnails: nil))
        _ = try await session.content(of: first).elements.count  // loaded before the first measure

        let floorDir = base + "/floor"
        try FileManager.default.createDirectory(atPath: floorDir, withIntermediateDirectories: true)
        let target = floorDir + "/floor.content"
        let appendFloor = kind == .append ? try JournalBench.PlainAppend(path: floorDir + "/floor.journal", preallocate: 64 << 20) : nil
        defer { appendFloor?.finish() }
        // The file the first floor renames over is the page as it is: the same size as the file
        // the first save replaces.
        var current = try Array(Data(contentsOf: URL(fileURLWithPath: package.pagePath(first))))
        try Data(current).write(to: URL(fileURLWithPath: target))
        var lastSaveBytes = 0
        var row = Row(strokes: strokes, pages: pages, pageBytes: current.count)
        for k in 0...runs {
            let stroke = extra[k]
            let tAppend = try await measureAsync { try await session.append(stroke, to: first) }
            // The floor's bytes: as many as this save writes.
            let floorBytes: [UInt8]
            switch kind {
            case .rewrite:
                var w = ByteWriter()
                try ElementCodec.writeRecord(.stroke(stroke), codec: .compact, into: &w)
                floorBytes = Array(current.dropLast(PageFile.trailerSize)) + w.bytes + [0, 0, 0, 0]
            case .append:
                // The bytes the last save wrote (a stroke frame and its end mark; the first pair,
                // unmeasured, has a frame's worth).
                floorBytes = [UInt8](repeating: 0x5A, count: lastSaveBytes > 0 ? lastSaveBytes
                                     : try JournalFile.frame(for: [.append([.stroke(stroke)])]).count)
            }
            func floorOnce() throws -> (Double, Double) {
                let c0 = processCPUSeconds()
                let t: Double
                switch kind {
                case .rewrite: t = try measure { try SaveBench.floorWrite(floorBytes, dir: floorDir) }
                case .append: t = try measure { try appendFloor!.append(floorBytes) }
                }
                return (t, processCPUSeconds() - c0)
            }
            var tSave = 0.0, tFloor = 0.0, cpu = 0.0, floorCPU = 0.0
            counting.reset()
            if k % 2 == 0 {
                (tSave, cpu) = try await timedSave(session)
                (tFloor, floorCPU) = try floorOnce()
            } else {
                (tFloor, floorCPU) = try floorOnce()
                (tSave, cpu) = try await timedSave(session)
            }
            let saved: Int
            switch kind {
            case .rewrite:
                current = try Array(Data(contentsOf: URL(fileURLWithPath: package.pagePath(first))))
                saved = current.count
                guard saved == floorBytes.count else {
                    throw UsageError("the save wrote \(saved) bytes but the floor \(floorBytes.count)")
                }
            case .append:
                saved = counting.bytesWritten
                lastSaveBytes = saved
            }
            guard k > 0 else { continue }  // the warm-up pair
            row.save.append(tSave); row.floor.append(tFloor); row.saveCPU.append(cpu); row.floorCPU.append(floorCPU)
            row.append.append(tAppend)
            row.saveBytes.append(Double(saved)); row.floorBytes.append(Double(floorBytes.count))
        }
        try await session.close()
        return row
    }

    /// A durable save's wall time and the process's CPU time during it.
    static func timedSave(_ session: DocumentSession) async throws -> (Double, Double) {
        let c0 = processCPUSeconds()
        let t = try await measureAsync { try await session.save() }
        return (t, processCPUSeconds() - c0)
    }

    static func processCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func report(_ title: String, _ rows: [Row], say: (String) -> Void) {
        say(title)
        say(Row.header)
        for row in rows { say(row.line) }
    }
}
