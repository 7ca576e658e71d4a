// lnote-dev bench pages: what a page-structure change (add, move, remove a page) and a flush of
// lagging page metadata cost in documents of 2, 200, 2,000 and 10,000 pages, side by side, each
// against the 2-page document (issue 34: the cost grows with the work, not with the notebook).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting

enum PagesBench {
    static func run(_ arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs", "sizes", "dir"], flags: ["json"])
        let runs = try args.int("runs") ?? 15
        let sizes = try (args.value("sizes") ?? "2,200,2000,10000").split(separator: ",").map { s -> Int in
            guard let n = Int(s), n >= 2 else { throw UsageError("--sizes takes page counts of at least 2, comma separated") }
            return n
        }
        guard runs > 0, !sizes.isEmpty else { throw UsageError("--runs must be positive") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-pages-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        let library = Library(root: base + "/library")
        let options = SessionOptions(autosaveDelay: nil, maxLoadedPages: 4, thumbnails: nil)
        let generator = HandwritingGenerator(seed: 34)
        let strokes = (0..<(runs + 2)).map { k in generator.stroke(letters: 3, origin: (72 + Double(k % 20) * 24, 700), variant: UInt64(k + 1)) }

        /// A document of `count` empty pages, made as the store lays it out (each listed page has
        /// its file) but without `count` page additions, so a 10,000-page one takes seconds.
        func makeDocument(pages count: Int) async throws -> DocumentSession {
            let package = try await library.createDocument(title: "\(count) pages")
            var doc = try DocumentMetadata.read(package)
            let empty = try Data(contentsOf: URL(fileURLWithPath: package.pagePath(doc.pages[0].id)))
            let template = doc.pages[0]
            for _ in 1..<count {
                let id = UUID()
                try empty.write(to: URL(fileURLWithPath: package.pagePath(id)))
                doc.pages.append(PageEntry(id: id, canvas: template.canvasSize, created: template.created, modified: template.modified, elementCount: 0))
            }
            try Data(PackageJSON.encode(doc)).write(to: URL(fileURLWithPath: package.documentPath))
            try Data(PackageJSON.encode(Manifest(doc))).write(to: URL(fileURLWithPath: package.manifestPath))
            return try await library.open(package.id, options: options)
        }
        var sessions: [DocumentSession] = []
        for n in sizes {
            say("Building a \(n)-page document...")
            sessions.append(try await makeDocument(pages: n))
        }

        // Side by side, taking turns: in each round every document adds a page at its end, moves
        // it to the middle, removes it, then has a stroke appended to its first page and flushes
        // (the page, and document.json and the manifest, which lag it).
        // Wall time, and the process's CPU time (nothing else runs in it meanwhile: no autosave, no
        // thumbnails), which a machine busy with other work disturbs far less than it does fsync.
        var add = [[Double]](repeating: [], count: sizes.count)
        var move = add, remove = add, flush = add
        var addCPU = add, moveCPU = add, removeCPU = add, flushCPU = add
        func timed(_ wall: inout [Double], _ cpu: inout [Double], _ body: () async throws -> Void) async throws {
            let c0 = processCPUSeconds()
            wall.append(try await measureAsync(body))
            cpu.append(processCPUSeconds() - c0)
        }
        for k in 0..<runs {
            for (i, s) in sessions.enumerated() {
                var id = UUID()
                try await timed(&add[i], &addCPU[i]) { id = try await s.addPage() }
                let count = await s.pageIDs().count
                try await timed(&move[i], &moveCPU[i]) { try await s.movePage(id, to: count / 2) }
                try await timed(&remove[i], &removeCPU[i]) { try await s.removePage(id) }
                let first = await s.pageIDs()[0]
                try await s.append(strokes[k], to: first)
                try await timed(&flush[i], &flushCPU[i]) { try await s.flush() }
            }
        }
        var documentBytes: [Int] = []
        for s in sessions {
            try await s.close()
            let attributes = try FileManager.default.attributesOfItem(atPath: s.package.documentPath)
            documentBytes.append((attributes[.size] as? Int) ?? 0)
        }

        let ops: [(String, [[Double]])] = [("addPage", add), ("movePage", move), ("removePage", remove), ("flush", flush),
                                           ("addPage_cpu", addCPU), ("movePage_cpu", moveCPU), ("removePage_cpu", removeCPU), ("flush_cpu", flushCPU)]
        var result: [String: Any] = ["runs": runs, "sizes": sizes, "document_json_bytes": documentBytes]
        for (name, times) in ops {
            for (i, n) in sizes.enumerated() {
                result["\(name)_\(n)_ms"] = r(median(times[i]) * 1000)
                result["\(name)_\(n)_vs_\(sizes[0])"] = r(median(times[i]) / median(times[0]))
            }
        }
        if json { printJSON(result); return }
        print("\nPage-structure changes and flush, medians of \(runs), taking turns (ratio to the \(sizes[0])-page document);")
        print("wall time, then the process's CPU time (_cpu):")
        let pad = { (s: String, w: Int) in s + String(repeating: " ", count: max(0, w - s.count)) }
        print("  " + pad("pages", 16) + sizes.map { pad(String($0), 18) }.joined())
        print("  " + pad("doc.json", 16) + documentBytes.map { pad("\($0) B", 18) }.joined())
        for (name, times) in ops {
            let cells = sizes.indices.map { i in pad("\(r(median(times[i]) * 1000)) ms x\(r(median(times[i]) / median(times[0]), 2))", 18) }
            print("  " + pad(name, 16) + cells.joined())
        }
        print("  (target: addPage, movePage, removePage at 2,000 pages within 2x the 2-page document)")
    }

    /// CPU time of the whole process (user + system) in seconds.
    static func processCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
