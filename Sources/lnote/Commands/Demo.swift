// lnote demo: the main job. Builds a sample library from generated handwriting, autosaving as it
// "writes", then lists the library and says what it did and how long saves took.

import Foundation
import LulucatInk
import LulucatStore
import LulucatRender
import LulucatHandwriting

struct DemoCommand: Command {
    static let name = "demo"
    static let abstract = "Build a sample library from generated handwriting and list it (again: adds only what is missing)."
    static let options: [OptionSpec] = [.valued("seed", "N", default: "7", "The seed of the generated handwriting: the same seed writes the same ink."), .library, .json]
    static let examples = ["lnote demo", "lnote demo --seed 42 --library /tmp/notes"]
    static let usage = "lnote demo [--seed N] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.isEmpty else { throw UsageError("demo takes no arguments") }
        _ = try args.int("seed", in: 0...Int.max)
    }

    /// Title, pages, strokes a page.
    static let plan: [(String, Int, Int)] = [
        ("Lecture notes: storage engines", 12, 260),
        ("Sketchbook", 8, 180),
        ("Weekly meeting", 5, 220),
        ("Shopping list", 1, 60),
    ]

    func run() async throws {
        let lib = library(args)
        let seed = UInt64(try args.int("seed", in: 0...Int.max) ?? 7)
        var pageNumber: UInt64 = 0
        // With --json the lines a person reads go to stderr, and stdout is one JSON object.
        let json = args.flag("json")
        let say: (String) -> Void = json ? { printError($0) } : { print($0) }
        var kept: [String] = [], written: [String] = []
        say("Building a sample library in \(lib.root)")
        var saveTimes: [Double] = []
        var totals = (documents: 0, pages: 0, strokes: 0, samples: 0)
        let started = DispatchTime.now().uptimeNanoseconds
        // Run again, the demo adds only the documents that are missing: titles stay unambiguous.
        let existing = Set(try await lib.documents().map(\.title))
        for (title, pageCount, strokesPerPage) in DemoCommand.plan {
            if existing.contains(title) {
                say("  kept \(title): already in the library")
                kept.append(title)
                pageNumber += UInt64(pageCount)
                continue
            }
            let package = try await lib.createDocument(title: title)
            // A short debounce so the demo autosaves while it writes, as the app does at 0.5 s.
            let session = try await lib.open(package.id, options: SessionOptions(autosaveDelay: .milliseconds(15)))
            var pages = await session.pageIDs()
            while pages.count < pageCount { pages.append(try await session.addPage()) }
            if title == "Sketchbook" {
                // An image, as a person pastes a photo: the asset is written at once.
                try await session.insertImage(try DemoCommand.pictureJPEG(), fileExtension: "jpg",
                                              frame: QuantizedRect(x: 3200, y: 4600, width: 2400, height: 1800),
                                              rotation: -400, on: pages[0])
            }
            for page in pages {
                pageNumber += 1
                let content = HandwritingGenerator(seed: seed &* 1000 &+ pageNumber).page(strokes: strokesPerPage, canvas: .letter)
                // Write in bursts of strokes with pauses, so autosave fires between them.
                let strokes = content.elements
                var i = 0
                while i < strokes.count {
                    let burst = strokes[i..<min(i + 60, strokes.count)]
                    for s in burst { try await session.append([s], to: page) }
                    i += burst.count
                    try await Task.sleep(for: .milliseconds(20))
                }
                totals.strokes += strokes.count
                totals.samples += content.sampleCount
            }
            try await session.close()
            saveTimes += await session.saveDurations
            totals.documents += 1
            totals.pages += pages.count
            say("  wrote \(title): \(pages.count) page\(pages.count == 1 ? "" : "s")")
            written.append(title)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let sorted = saveTimes.sorted()
        let p95 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.95))]
        if json {
            printJSON(["library": lib.root, "written": written, "kept": kept, "documents": totals.documents, "pages": totals.pages,
                       "strokes": totals.strokes, "samples": totals.samples, "seconds": elapsed, "snapshots": saveTimes.count,
                       "save_median_ms": saveTimes.isEmpty ? NSNull() : median(saveTimes) * 1000 as Any,
                       "save_p95_ms": saveTimes.isEmpty ? NSNull() : p95 * 1000 as Any])
            return
        }
        print("\nWrote \(counted(totals.documents, "document")), \(counted(totals.pages, "page")), \(counted(totals.strokes, "stroke")), \(counted(totals.samples, "sample")) in \(r(elapsed, 1)) s.")
        if !saveTimes.isEmpty {
            print("Autosave wrote \(saveTimes.count) page snapshots: median \(r(median(saveTimes) * 1000)) ms, 95th percentile \(r(p95 * 1000)) ms.")
        }
        print("")
        if totals.pages > 0 { print("Thumbnails: \(counted(totals.pages, "page")); covers in <document>/thumbnails/ (try lnote render DOC --page 1 -o page.png).\n") }
        try await ListCommand(arguments: ["--library", lib.root]).run()
    }
}

extension DemoCommand {
    /// A small generated picture (sky, sun and hills) as JPEG.
    static func pictureJPEG() throws -> Data {
        let w = 320, h = 240
        var px = [UInt8](repeating: 255, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                let t = Double(y) / Double(h)
                var (r, g, b) = (90 + 100 * t, 150 + 70 * t, 235.0)
                let dx = Double(x - 240), dy = Double(y - 60)
                if dx * dx + dy * dy < 900 { (r, g, b) = (250, 210, 60) }
                let hill = 170 + 25 * sin(Double(x) / 40)
                if Double(y) > hill { (r, g, b) = (70, 150 - 40 * t, 70) }
                px[i] = UInt8(r); px[i + 1] = UInt8(g); px[i + 2] = UInt8(b)
            }
        }
        return try RGBAImage(width: w, height: h, pixels: px).jpegData(quality: 85)
    }
}
