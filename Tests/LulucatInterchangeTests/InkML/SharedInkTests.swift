// Every InkML file of the shared real-handwriting set imports with its strokes and samples
// intact, and survives export and import unchanged.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

/// The shared data folder: `<repo>/../shared/data/ink` (CI clones the repo beside `shared/`),
/// or one level further up for a git worktree under `wt/`.
enum SharedInk {
    static let folder: URL? = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for candidate in ["../shared/data/ink", "../../shared/data/ink"] {
            let url = repo.appendingPathComponent(candidate).standardized
            if FileManager.default.fileExists(atPath: url.path) { return url }
        }
        return nil
    }()

    static var inkmlFiles: [URL] {
        guard let folder, let e = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        return e.compactMap { $0 as? URL }.filter { $0.pathExtension == "inkml" }
            .sorted { $0.path < $1.path }
    }

    /// The `.jsonl` twin: one stroke a line, `{"points": [[x, y, t, p], ...]}`.
    static func twin(of url: URL) throws -> [[[Double?]]] {
        let text = try String(contentsOf: url.deletingPathExtension().appendingPathExtension("jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return (object["points"] as! [[Any]]).map { point in point.map { ($0 as? NSNumber)?.doubleValue } }
        }
    }
}

@Suite struct SharedInkTests {
    @Test(.enabled(if: SharedInk.folder != nil, "needs ../shared/data/ink beside the repository"))
    func everySharedFileMatchesItsTwin() throws {
        let files = SharedInk.inkmlFiles
        #expect(!files.isEmpty)
        var totalStrokes = 0, totalSamples = 0
        for url in files {
            let data = try Data(contentsOf: url)
            let doc = try InkMLReader.read(data)
            // Some files leave F out altogether (their twin still has pressure): constant then.
            let hasForce = String(decoding: data, as: UTF8.self).contains("<channel name=\"F\"")
            let twin = try SharedInk.twin(of: url)
            let samples = doc.sampleCount
            let expected = twin.reduce(0) { $0 + $1.count }
            print("figure inkml \(url.deletingLastPathComponent().lastPathComponent)/\(url.lastPathComponent): strokes \(doc.strokes.count)/\(twin.count) samples \(samples)/\(expected) warnings \(doc.warnings.count)")
            #expect(doc.strokes.count == twin.count, "\(url.lastPathComponent)")
            #expect(samples == expected, "\(url.lastPathComponent)")
            // Ink that went left of or above the origin is moved onto the page, as a whole (said).
            let moved = doc.warnings.contains { $0.contains("was moved") }
            #expect(substantive(doc.warnings).filter { !$0.contains("was moved") }.isEmpty, "\(url.lastPathComponent): \(doc.warnings)")
            totalStrokes += doc.strokes.count
            totalSamples += samples
            guard doc.strokes.count == twin.count else { continue }
            // Values: the InkML twin rounds positions to 0.01 pt, so a quantized position may
            // differ by one unit; times are exact; pressure within one thousandth.
            // Compared after that one offset (0 when nothing moved).
            var dx = 0, dy = 0
            if moved, let s = doc.strokes.first?.samples.first, let p = twin.first?.first {
                dx = Int(s.x) - Int(Quantize.position(p[0]!))
                dy = Int(s.y) - Int(Quantize.position(p[1]!))
            }
            var worst = 0
            for (stroke, points) in zip(doc.strokes, twin) {
                #expect(stroke.samples.count == points.count)
                for (s, p) in zip(stroke.samples, points) {
                    worst = max(worst, abs(Int(s.x) - dx - Int(Quantize.position(p[0]!))))
                    worst = max(worst, abs(Int(s.y) - dy - Int(Quantize.position(p[1]!))))
                    #expect(s.time == (p[2].map { Quantize.milliseconds($0) } ?? 0))
                    let pressure = hasForce ? p[3].map { Int(Quantize.pressure($0)) } ?? 1000 : 1000
                    #expect(abs(Int(s.pressure) - pressure) <= 1)
                }
            }
            #expect(worst <= 1, "\(url.lastPathComponent): a position differs by \(worst) units")
        }
        print("figure inkml total: \(files.count) files, \(totalStrokes) strokes, \(totalSamples) samples")
    }

    @Test(.enabled(if: SharedInk.folder != nil, "needs ../shared/data/ink beside the repository"))
    func exportThenImportGivesTheSameSamples() throws {
        for url in SharedInk.inkmlFiles {
            let page = try InkMLReader.read(try Data(contentsOf: url)).page
            let again = try InkMLReader.read(InkMLWriter.write(page))
            #expect(again.warnings.isEmpty)
            #expect(again.strokes.map(\.samples) == page.strokes.map(\.samples), "\(url.lastPathComponent)")
            #expect(again.strokes.map(\.ink) == page.strokes.map(\.ink))
            // What `lnote import` will store: the page encodes and decodes unchanged.
            let bytes = try PageFile.encode(page)
            #expect(try PageFile.decode(bytes) == page)
            print("figure inkml \(url.lastPathComponent): page_bytes \(bytes.count)")
        }
    }
}
