// The binary's export, import, render, thumbnails and repair commands on real fixtures.

import Foundation
import Testing
import LulucatStoreTesting

/// ../shared/data/ink beside the repository (a worktree sits one level deeper).
func sharedInk() -> String? {
    var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    for _ in 0..<5 {
        dir = dir.deletingLastPathComponent()
        let candidate = dir.appendingPathComponent("shared/data/ink").path
        if FileManager.default.fileExists(atPath: candidate) { return candidate }
    }
    return nil
}

@Suite struct TransferCLITests {
    @Test(.enabled(if: sharedInk() != nil, "needs ../shared/data/ink beside the repository"))
    func inkMLImportExportZipRoundTripRenderAndRepair() async throws {
        let ink = try #require(sharedInk())
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let imported = try await lnote(["import", ink + "/wacom_uim/ink.inkml", "--library", lib, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as! [String: Any]
        #expect(obj["strokes"] as? Int == 4)
        #expect(obj["samples"] as? Int == 868)
        #expect((obj["page_bytes"] as? Int ?? 0) > 100)
        let id = obj["id"] as! String

        // InkML out and back in: the same samples.
        let inkml = tmp.path + "/page.inkml"
        #expect(try await lnote(["export", id, "--page", "1", "-o", inkml, "--library", lib]).status == 0)
        let back = try await lnote(["import", inkml, "--library", lib, "--json"])
        let backObj = try JSONSerialization.jsonObject(with: Data(back.stdout.utf8)) as! [String: Any]
        #expect(backObj["samples"] as? Int == 868)

        // One-file export and import: a second copy under a new id.
        let zip = tmp.path + "/doc.zip"
        #expect(try await lnote(["export", id, "-o", zip, "--library", lib]).status == 0)
        let other = tmp.path + "/other"
        let z = try await lnote(["import", zip, "--library", other, "--json"])
        #expect(z.status == 0, "\(z.stderr)")
        #expect(try await lnote(["verify", "--library", other]).status == 0)

        // A truncated archive is refused, names the problem, and leaves nothing.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: zip))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: tmp.path + "/cut.zip"))
        let cut = try await lnote(["import", tmp.path + "/cut.zip", "--library", tmp.path + "/third"])
        #expect(cut.status == 1)
        #expect(!cut.stderr.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: tmp.path + "/third")) ?? []).allSatisfy { !$0.hasSuffix(".lnote") })

        // Render: PNG and SVG files a person can open.
        let png = tmp.path + "/page.png"
        #expect(try await lnote(["render", id, "--page", "1", "-o", png, "--scale", "1", "--library", lib]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: png)).prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let svg = tmp.path + "/page.svg"
        #expect(try await lnote(["render", id, "--page", "1", "--format", "svg", "-o", svg, "--library", lib]).status == 0)
        #expect(try String(contentsOfFile: svg, encoding: .utf8).contains("<svg"))
        #expect(try await lnote(["render", id, "--page", "9", "-o", png, "--library", lib]).status == 64)
        #expect(try await lnote(["render", id, "--format", "gif", "-o", png, "--library", lib]).status == 64)

        // Thumbnails and repair.
        #expect(try await lnote(["thumbnails", id, "--rebuild", "--library", lib]).status == 0)
        let repair = try await lnote(["repair", id, "--library", lib, "--json"])
        #expect(repair.status == 0, "\(repair.stderr)")
    }
}

/// Ctrl-C during a long command: the command is cancelled, says so once, exits 130, and leaves no
/// half-made document, staging folder or temporary file; what it finished before stays.
@Suite(.serialized) struct InterruptedCommandTests {
    /// An InkML file that takes the debug build seconds to import: `traces` traces of 300 points.
    static func bigInkML(traces: Int) -> Data {
        var text = "<ink xmlns=\"http://www.w3.org/2003/InkML\">\n"
        var x = 10.0, y = 10.0
        for t in 0..<traces {
            x = Double(t % 50) * 10; y = Double(t / 50) * 10
            var points: [String] = []
            for i in 0..<300 { points.append("\(x + Double(i % 17)) \(y + Double(i % 13))") }
            text += "<trace>" + points.joined(separator: ", ") + "</trace>\n"
        }
        return Data((text + "</ink>\n").utf8)
    }

    /// Starts `lnote args`, sends SIGINT after `delay`, and returns how it ended.
    static func interrupted(_ args: [String], after delay: Duration) async throws -> (status: Int32, bySignal: Bool, stderr: String) {
        let p = Process()
        p.executableURL = try lnoteURL()
        p.arguments = args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        try await Task.sleep(for: delay)
        kill(p.processIdentifier, SIGINT)
        let message = try await offThePool { () throws -> String in
            let data = err.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        return (p.terminationStatus, p.terminationReason == .uncaughtSignal, message)
    }

    @Test func anInterruptedImportLeavesNothingHalfMade() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let file = tmp.path + "/big.inkml"
        try Self.bigInkML(traces: 2000).write(to: URL(fileURLWithPath: file))
        _ = try await newDocument("Kept", library: lib)
        var interruptedOnce = false
        // The signal must come after lnote has set up its handlers and before the import ends:
        // the delay doubles when the process was too young (killed by the signal itself) and
        // halves when the import had already finished.
        var delay = Duration.milliseconds(1500)
        for _ in 0..<8 where !interruptedOnce {
            let r = try await Self.interrupted(["import", file, "--library", lib], after: delay)
            let names = try FileManager.default.contentsOfDirectory(atPath: lib)
            #expect(!names.contains { $0.hasPrefix(".lnote-tmp-") }, "a staging folder was left: \(names)")
            let listed = try await lnote(["list", "--json", "--library", lib])
            let documents = (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
            if r.status == 130 {
                interruptedOnce = true
                #expect(r.stderr.hasSuffix("lnote import: interrupted; nothing half-made was left (what was finished before stays)\n"), "\(r.stderr)")
                #expect(documents.count == 1 && documents.first?["title"] as? String == "Kept", "\(documents)")
            } else if r.status == 0 && !r.bySignal {
                // Finished before the signal: the whole document is there; remove it and go again.
                #expect(documents.count == 2)
                let id = try #require(documents.first { $0["title"] as? String == "big" }?["id"] as? String)
                #expect(try await lnote(["delete", id, "--library", lib]).status == 0)
                _ = try await lnote(["empty-trash", "--library", lib])
                delay = max(delay / 2, .milliseconds(100))
            } else {
                #expect(r.bySignal, "the import ended otherwise: \(r.status) \(r.stderr)")
                delay *= 2
            }
        }
        #expect(interruptedOnce, "no attempt was interrupted while importing")
        #expect(try await lnote(["verify", "--library", lib]).status == 0)
    }
}

/// Progress within one long import or export: "LABEL: N%" on standard error once the step has
/// taken `LNOTE_PROGRESS_DELAY` seconds; when standard error is not a terminal, a line at each
/// tenth, so a log gets at most ten.
@Suite struct ProgressCLITests {
    /// The percents of the progress lines of `label` in `stderr`.
    static func percents(_ stderr: String, _ label: String) -> [Int] {
        stderr.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(label + ": "), line.hasSuffix("%") else { return nil }
            return Int(line.dropFirst(label.count + 2).dropLast())
        }
    }

    @Test func aLongImportAndExportShowTheirTenthsInOrder() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let file = tmp.path + "/big.inkml"
        try InterruptedCommandTests.bigInkML(traces: 120).write(to: URL(fileURLWithPath: file))
        let now = ["LNOTE_PROGRESS_DELAY": "0"]
        let imported = try await lnote(["import", file, "--library", lib], environment: now)
        #expect(imported.status == 0, "\(imported.stderr)")
        let tenths = Self.percents(imported.stderr, "importing \(file)")
        #expect(tenths == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100], "\(imported.stderr)")
        let id = try #require(imported.stdout.split(separator: " ").last(where: { UUID(uuidString: String($0.prefix(36))) != nil })
            .map { String($0.prefix(36)) }, "\(imported.stdout)")

        // A zip export and its import; several files, each line under its file's label.
        let zip = tmp.path + "/big.zip"
        let exported = try await lnote(["export", id, "-o", zip, "--library", lib], environment: now)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(Self.percents(exported.stderr, "exporting to \(zip)").last == 100, "\(exported.stderr)")
        let both = try await lnote(["import", file, zip, "--library", tmp.path + "/other"], environment: now)
        #expect(both.status == 0, "\(both.stderr)")
        #expect(Self.percents(both.stderr, "importing 1 of 2: \(file)") == tenths, "\(both.stderr)")
        #expect(Self.percents(both.stderr, "importing 2 of 2: \(zip)").last == 100, "\(both.stderr)")
        let all = try await lnote(["export", "--all", "-o", tmp.path + "/backup", "--library", lib], environment: now)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(Self.percents(all.stderr, "exporting 1 of 1: big").last == 100, "\(all.stderr)")

        // Before the delay has passed nothing is shown, and --json shows nothing.
        let quiet = try await lnote(["import", file, "--library", lib], environment: ["LNOTE_PROGRESS_DELAY": "3600"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("%"), "\(quiet.stderr)")
        let json = try await lnote(["import", file, "--library", lib, "--json"], environment: now)
        #expect(json.status == 0 && !json.stderr.contains("%"), "\(json.stderr)")
    }
}
