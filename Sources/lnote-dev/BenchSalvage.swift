// lnote-dev bench salvage: random damage to every kind of file of a demo library, on every engine,
// then what a person gets back: `lnote verify`, opening the document, and `lnote repair` when
// either said something is wrong. Per engine: elements recovered ÷ elements whose bytes the damage
// did not touch, runs where a loss went unreported, and silent corruption (an element read back
// that was never written).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreMaintenance
import LulucatRender
import LulucatHandwriting
import LnoteCommandLine

enum SalvageBench {
    enum Damage: String, CaseIterable { case flippedRun = "flipped run", zeroedBlock = "zeroed 4 KiB block", truncation }

    struct Tally {
        var runs = 0, written = 0, untouched = 0, recoveredUntouched = 0, recovered = 0
        var lossRuns = 0, unreported = 0, silent = 0, repairs = 0
        var byFile: [String: Int] = [:]
        /// Per kind of damaged file: untouched elements that did not come back.
        var lostByFile: [String: Int] = [:]
        var lossExamples: [String] = []
        var examples: [String] = []
    }

    /// The template document of one engine: 2 pages of strokes (each saved on its own) and an image.
    static func template(_ library: Library, _ engine: EngineKind) async throws -> (DocumentPackage, [UUID: [Element]]) {
        let package = try await library.createDocument(title: "Salvage \(engine.rawValue)", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions()))
        var pages = await session.pageIDs()
        pages.append(try await session.addPage())
        for (p, page) in pages.enumerated() {
            let content = HandwritingGenerator(seed: 900 + UInt64(p)).page(strokes: 12)
            for element in content.elements {
                try await session.append([element], to: page)
                try await session.save()
            }
        }
        let png = try PNGEncoder.encode(RGBAImage(width: 24, height: 16, fill: (r: 200, g: 40, b: 40, a: 255)))
        try await session.insertImage(png, fileExtension: "png", frame: QuantizedRect(x: 100, y: 100, width: 2400, height: 1600), on: pages[0])
        try await session.save()
        var written: [UUID: [Element]] = [:]
        for page in pages { written[page] = try await session.content(of: page).elements }
        // A journal document keeps its strokes in its journals (no compaction at close).
        if engine == .journal { await session.abandon() } else { try await session.close() }
        return (package, written)
    }

    static func files(under root: String) -> [String] {
        var out: [String] = []
        let e = FileManager.default.enumerator(atPath: root)
        while let name = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDir), !isDir.boolValue,
               !name.hasSuffix(".lock"), !(name as NSString).lastPathComponent.hasPrefix(".") { out.append(name) }
        }
        return out.sorted()
    }

    /// The kind of a file, for the per-kind counts.
    static func kind(_ name: String) -> String {
        if name.hasPrefix("pages/") { return name.hasSuffix(".journal") ? "journal" : "page" }
        if name.hasPrefix("thumbnails/") { return "thumbnail" }
        if name.hasPrefix("assets/") { return "asset" }
        return (name as NSString).lastPathComponent
    }

    /// Where an element's own bytes are in a file: every occurrence of its id, and of the first and
    /// last 32 bytes of its coded samples (both codecs), and everything between the first and last.
    static func span(of element: Element, in bytes: [UInt8]) -> Range<Int>? {
        var needles: [[UInt8]] = [withUnsafeBytes(of: element.id.uuid) { Array($0) }]
        if case .stroke(let s) = element {
            for codec in SampleCodecID.allCases {
                var w = ByteWriter()
                codec.encodeSamples(s, into: &w)
                let coded = w.bytes
                needles.append(Array(coded.prefix(32)))
                needles.append(Array(coded.suffix(32)))
            }
        }
        var lower = Int.max, upper = Int.min
        for needle in needles where needle.count >= 8 {
            var i = 0
            while let r = find(needle, in: bytes, from: i) {
                lower = min(lower, r.lowerBound)
                upper = max(upper, r.upperBound)
                i = r.lowerBound + 1
            }
        }
        return lower <= upper ? lower..<upper : nil
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Range<Int>? {
        guard needle.count <= bytes.count, start <= bytes.count - needle.count else { return nil }
        let first = needle[0]
        var i = start
        while i <= bytes.count - needle.count {
            if bytes[i] == first && bytes[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
            i += 1
        }
        return nil
    }

    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["runs", "seed", "dir", "engines"], flags: ["json", "losses"])
        let runs = try args.int("runs") ?? 1002
        let seed = UInt64(try args.int("seed") ?? 0x5A1_BA6E)
        guard runs >= 3 else { throw UsageError("--runs must be at least 3") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-salvage-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        // --engines sqlite,journal: only those (the same seed then damages other files).
        let engines: [EngineKind] = try args.value("engines").map { list in
            try list.split(separator: ",").map { name in
                guard let e = EngineKind(rawValue: String(name)), [.snapshot, .journal, .sqlite].contains(e) else {
                    throw UsageError("--engines: snapshot, journal or sqlite, not '\(name)'")
                }
                return e
            }
        } ?? [.snapshot, .journal, .sqlite]
        var random = SeededRandom(seed: seed)
        var tallies: [EngineKind: Tally] = [:]
        var templates: [EngineKind: (DocumentPackage, [UUID: [Element]])] = [:]
        let templateLibrary = Library(root: base + "/templates")
        for engine in engines { templates[engine] = try await template(templateLibrary, engine) }
        say("Damage runs: \(runs) over \(engines.count) engines (a flipped run of 1-64 bytes, a zeroed 4 KiB block, a truncation), in every kind of file of each document.")

        for run in 0..<runs {
            let engine = engines[run % engines.count]
            let (template, written) = templates[engine]!
            let root = base + "/run-\(run)"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let copy = root + "/" + DocumentPackage.directoryName(template.id)
            try FileManager.default.copyItem(atPath: template.path, toPath: copy)
            let library = Library(root: root)
            let package = try DocumentPackage(path: copy)
            let names = files(under: copy)
            let name = names[Int(random.next() % UInt64(names.count))]
            let path = copy + "/" + name
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let original = bytes
            let damage = Damage.allCases[Int(random.next() % 3)]
            var touched = 0..<0
            if !bytes.isEmpty {
                switch damage {
                case .flippedRun:
                    let length = 1 + Int(random.next() % 64)
                    let start = Int(random.next() % UInt64(bytes.count))
                    touched = start..<min(bytes.count, start + length)
                    for i in touched { bytes[i] ^= UInt8(1 + random.next() % 255) }
                case .zeroedBlock:
                    let start = Int(random.next() % UInt64((bytes.count + 4095) / 4096)) * 4096
                    touched = start..<min(bytes.count, start + 4096)
                    for i in touched { bytes[i] = 0 }
                case .truncation:
                    let cut = bytes.count > 1 ? 1 + Int(random.next() % UInt64(bytes.count - 1)) : 0
                    touched = cut..<bytes.count
                    bytes.removeLast(bytes.count - cut)
                }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            // Which elements' own bytes the damage touched (in the file it damaged).
            var untouched = Set<UUID>()
            for (_, elements) in written {
                for e in elements {
                    if let s = span(of: e, in: original), s.overlaps(touched) { continue }
                    untouched.insert(e.id)
                }
            }

            // What a person does: verify, open; repair when either says something is wrong, open again.
            var reported = DocumentVerifier().verify(package).contains { $0.severity == .error }
            var loaded: [UUID: [Element]] = [:]
            func read() async -> Bool {
                loaded = [:]
                guard let session = try? await library.open(template.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil)) else { return false }
                var ok = true
                for page in written.keys {
                    if let c = try? await session.content(of: page) { loaded[page] = c.elements } else { ok = false }
                }
                if await session.openReport.contains(where: { $0.severity == .error }) { ok = false }
                try? await session.close()
                return ok
            }
            var tally = tallies[engine] ?? Tally()
            if !(await read()) || reported {
                reported = true
                tally.repairs += 1
                _ = try? DocumentRepair().repair(package)
                _ = await read()
            }
            let writtenAll = written.values.flatMap { $0 }
            let writtenSet = Set(writtenAll)
            let back = loaded.values.flatMap { $0 }
            let intact = Set(back.filter(writtenSet.contains).map(\.id))
            tally.runs += 1
            tally.written += writtenAll.count
            tally.untouched += untouched.count
            tally.recoveredUntouched += untouched.intersection(intact).count
            tally.recovered += intact.count
            tally.byFile[kind(name), default: 0] += 1
            let lostHere = untouched.subtracting(intact).count
            if lostHere > 0 {
                tally.lostByFile[kind(name), default: 0] += lostHere
                tally.lossExamples.append("run \(run) \(damage.rawValue) in \(name) at \(touched) of \(original.count) bytes: \(lostHere) of \(untouched.count) untouched lost\(reported ? "" : ", unreported")")
            }
            if back.contains(where: { !writtenSet.contains($0) }) {
                tally.silent += 1
                tally.examples.append("run \(run) \(engine.rawValue) \(damage.rawValue) in \(name): an element read back that was never written")
            }
            if intact.count < writtenAll.count {
                tally.lossRuns += 1
                if !reported {
                    tally.unreported += 1
                    tally.examples.append("run \(run) \(engine.rawValue) \(damage.rawValue) in \(name) at \(touched): \(intact.count) of \(writtenAll.count) back, nothing reported")
                }
            }
            tallies[engine] = tally
            if (run + 1) % 100 == 0 { say("  \(run + 1) runs done") }
        }

        var result: [String: Any] = ["runs": runs, "seed": Int(seed)]
        var lines: [String] = []
        for engine in engines {
            let t = tallies[engine] ?? Tally()
            let ratio = t.untouched == 0 ? 1 : Double(t.recoveredUntouched) / Double(t.untouched)
            result[engine.rawValue] = [
                "runs": t.runs, "elements_written": t.written, "elements_untouched": t.untouched,
                "recovered_of_untouched": t.recoveredUntouched, "recovered_ratio": r(ratio, 4),
                "elements_recovered": t.recovered, "runs_with_loss": t.lossRuns, "runs_with_unreported_loss": t.unreported,
                "runs_with_silent_corruption": t.silent, "runs_repaired": t.repairs, "damaged_files": t.byFile, "untouched_lost_by_file": t.lostByFile,
            ] as [String: Any]
            lines.append(String(format: "  %-8@ %4d runs  recovered %5d / %5d untouched = %.4f  (all: %d / %d)  loss runs %3d  unreported %d  silent %d  repaired %d",
                                engine.rawValue as NSString, t.runs, t.recoveredUntouched, t.untouched, ratio, t.recovered, t.written,
                                t.lossRuns, t.unreported, t.silent, t.repairs))
            if !t.lostByFile.isEmpty {
                lines.append("      untouched elements lost, by damaged file: " + t.lostByFile.sorted { $0.key < $1.key }
                    .map { "\($0.key) \($0.value) (\(t.byFile[$0.key] ?? 0) runs)" }.joined(separator: ", "))
            }
            for e in t.examples.prefix(5) { lines.append("      " + e) }
            for e in t.lossExamples.prefix(args.flag("losses") ? 1_000 : 0) { lines.append("      loss: " + e) }
        }
        if json { printJSON(result) } else {
            print("engine   runs  recovered ÷ elements whose bytes the damage did not touch (target >= 0.99), runs with unreported loss (target 0), silent corruption (target 0)")
            for l in lines { print(l) }
        }
    }
}
