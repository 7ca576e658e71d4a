// lnote-dev bench events: what a subscriber to a session's events costs on the append path, against
// the same appends without one, measured in pairs of runs (order alternating), reported as the median of the pairs' ratios.

import Foundation
import LulucatInk
import LulucatHandwriting
import LulucatStore

enum EventsBench {
    static func run(_ arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs", "strokes", "dir"], flags: ["json"])
        let runs = try args.int("runs") ?? 21
        let strokes = try args.int("strokes") ?? 2000
        guard runs > 0, strokes > 0 else { throw UsageError("counts must be positive") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-events-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")

        let generator = HandwritingGenerator(seed: 2026)
        let page = generator.page(strokes: strokes, canvas: .letter)
        let library = Library(root: base + "/library")
        let options = SessionOptions(autosaveDelay: nil, maxLoadedPages: 2, thumbnails: nil)
        let quiet = try await library.open(library.createDocument(title: "No subscriber").id, options: options)
        let heard = try await library.open(library.createDocument(title: "One subscriber").id, options: options)
        // The subscriber reads every event, as a canvas view would.
        let listener = Task { () -> Int in
            var n = 0
            for await _ in await heard.events() { n += 1 }
            return n
        }

        // One fresh page per run and document, so every run appends to a page of the same size.
        func appendAll(_ session: DocumentSession) async throws -> Double {
            let target = try await session.addPage()
            let t = try await measureAsync {
                for e in page.elements { try await session.append([e], to: target) }
            }
            try await session.removePage(target)
            return t
        }
        // Each run is a pair (one without, one with, their order alternating), and the figure is the
        // median of the pairs' ratios: a pair shares the machine's load of its moment.
        var tQuiet: [Double] = [], tHeard: [Double] = [], ratios: [Double] = []
        for k in 0..<runs {
            let q: Double, h: Double
            if k % 2 == 0 {
                q = try await appendAll(quiet)
                h = try await appendAll(heard)
            } else {
                h = try await appendAll(heard)
                q = try await appendAll(quiet)
            }
            tQuiet.append(q); tHeard.append(h); ratios.append(h / q)
        }
        try await quiet.close()
        try await heard.close()
        let received = await listener.value

        let perQuiet = median(tQuiet) / Double(strokes), perHeard = median(tHeard) / Double(strokes)
        let ratio = median(ratios)
        if json {
            printJSON(["runs": runs, "strokes": strokes, "events_received": received,
                       "append_ns_without_subscriber": r(perQuiet * 1e9, 1), "append_ns_with_subscriber": r(perHeard * 1e9, 1),
                       "ratio_with_over_without": r(ratio, 3), "ratio_is": "median of paired runs", "target_ratio": 1.05])
            return
        }
        print("Appending \(strokes) strokes one by one, \(runs) runs each, alternating (medians):")
        print("  without a subscriber  \(r(perQuiet * 1e9, 1)) ns per append")
        print("  with one subscriber   \(r(perHeard * 1e9, 1)) ns per append (\(received) events received)")
        print("  ratio                 \(r(ratio, 3))x, median of the \(runs) paired ratios (target at most 1.05x)")
    }
}
