// lnote-dev bench sync-hostile: the hostile-server corpus of HostileServerTests with limits near the
// defaults, each case a round in a child process (this executable, `bench _sync-hostile-case`),
// so that its peak resident memory is its own (/usr/bin/time's %M, or wait4's) and a crash or a
// hang is counted rather than suffered. Release build:
//   swift build -c release --product lnote-dev
//   .build/release/lnote-dev bench sync-hostile [--samples N] [--hang SECONDS]
// Prints per case: how it ended, seconds, the peak resident memory, the largest body the transport
// held, and a friendly round's peak measured just before it (the floor, taking turns); then
// crashes/hangs/lost and the worst (peak - 64 MB) / largest page moved.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport
import LnoteCommandLine

enum SyncHostileBench {
    /// The limits the child's round uses: the defaults but shorter silence and window, so that the
    /// corpus runs in minutes (documented in the output).
    static let limits = TransferLimits(silence: .seconds(10), minimumRate: 1024, rateWindow: .seconds(5), requestDeadline: .seconds(60))
    static let roundDeadline: Duration = .seconds(90)
    /// The fixed allowance of the memory figure (a Swift process with Foundation and a library).
    static let allowanceMB = 64.0

    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func run(arguments: [String]) async throws {
        SyncBench.arguments = arguments
        let samples = SyncBench.arg("samples", 200_000)
        let hang = SyncBench.arg("hang", 300)
        defer { SyncBench.removeFolders() }
        // A library with one dense page (this device), and a remote holding another device's
        // document of one dense page: the largest pages a round moves.
        let template = SyncBench.tempDir("hostile-lib")
        let remoteTemplate = SyncBench.tempDir("hostile-remote")
        var rng = SyncBench.Rng(seed: 30)
        let lib = Library(root: template)
        let doc = try await lib.createDocument(title: "Here").id
        let other = Library(root: SyncBench.tempDir("hostile-other"))
        let theirs = try await other.createDocument(title: "There").id
        for (l, d) in [(lib, doc), (other, theirs)] {
            let s = try await l.open(d, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            let page = await s.pageIDs()[0]
            for _ in 0..<(samples / 500) { try await s.append(SyncBench.stroke(&rng, samples: 500), to: page) }
            try await s.close()
        }
        _ = try await other.sync(with: FolderRemote(root: remoteTemplate))
        // The largest page blob: this device's, measured by a push to a scratch folder.
        let scratch = SyncBench.tempDir("hostile-scratch")
        let probe = SyncBench.tempDir("hostile-probe")
        try FileManager.default.removeItem(atPath: probe)
        try FileManager.default.copyItem(atPath: template, toPath: probe)
        _ = try await Library(root: probe).sync(with: FolderRemote(root: scratch))
        var largest = 0
        for folder in [scratch, remoteTemplate] {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/blobs") {
                let size = (try FileManager.default.attributesOfItem(atPath: folder + "/blobs/" + name)[.size] as? NSNumber)?.intValue ?? 0
                largest = max(largest, size)
            }
        }
        let largestMB = Double(largest) / 1_048_576
        let before = try await strokeCount(lib, doc)
        let behaviors: [HostileServer.Behavior] = [
            .hugeBody(bytes: 2 << 30), .lyingLength(claimed: 100, sent: 256 << 20), .endlessChunked,
            .trickle(bytes: 1 << 20, interval: .seconds(1)), .silent, .cutMidBody(bytes: 64 << 20),
        ]
        let targets: [(String, String, String)] = [("listing", "PROPFIND", "/heads"), ("head", "GET", "/heads/"), ("blob", "GET", "/blobs/")]
        say("sync-hostile: \(targets.count * behaviors.count) cases; limits: silence 10 s, minimum 1024 B/s over 5 s, request 60 s, round 90 s; "
            + "hang = no exit in \(hang) s; largest page blob \(r(largestMB, 2)) MB; allowance \(Int(allowanceMB)) MB")
        var crashes = 0, hangs = 0, lost = 0, worst = 0.0
        var peaks: [Double] = [], floors: [Double] = []
        for (target, method, path) in targets {
            for behavior in behaviors {
                let floor = try await runCase(template, remoteTemplate, rule: nil, hang: hang)
                let c = try await runCase(template, remoteTemplate, rule: (method, path, behavior), hang: hang)
                let intact = try await intactAfter(c.library, doc, before)
                if c.status == 124 { hangs += 1 } else if c.status >= 128 || c.outcome == nil { crashes += 1 }
                if !intact { lost += 1 }
                let ratio = (c.peakMB - allowanceMB) / largestMB
                worst = max(worst, ratio)
                peaks.append(c.peakMB)
                floors.append(floor.peakMB)
                say("  \(target) \(behavior): \(c.outcome ?? "exit \(c.status)"); \(r(c.seconds, 1)) s; peak \(r(c.peakMB, 1)) MB "
                    + "(friendly round \(r(floor.peakMB, 1)) MB); \(intact ? "nothing lost" : "LOST OR DAMAGED")")
            }
        }
        say("crashes/hangs/lost: \(crashes)/\(hangs)/\(lost)")
        say("peak RSS median \(r(median(peaks), 1)) MB, max \(r(peaks.max() ?? 0, 1)) MB; friendly round median \(r(median(floors), 1)) MB; "
            + "hostile / friendly median \(r(median(peaks) / median(floors)))")
        say("worst (peak - \(Int(allowanceMB)) MB) / largest page: \(r(worst, 2)) (target <= 4)")
    }

    /// One round in a child process, against a hostile server answering `rule` (nil: friendly),
    /// on fresh copies of the library and of the remote.
    static func runCase(_ template: String, _ remoteTemplate: String, rule: (String, String, HostileServer.Behavior)?,
                        hang: Int) async throws -> (library: Library, outcome: String?, status: Int32, seconds: Double, peakMB: Double) {
        let libPath = SyncBench.tempDir("hostile-case")
        let root = SyncBench.tempDir("hostile-root")
        for (from, to) in [(template, libPath), (remoteTemplate, root)] {
            try FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
        let server = try HostileServer(root: root)
        defer { server.stop() }
        if let (m, p, b) = rule { server.on(m, p, b) }
        let result = SyncBench.tempDir("hostile-result") + "/result"
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).path
        let timeout = "/usr/bin/timeout"
        let (exe, args): (String, [String]) = FileManager.default.isExecutableFile(atPath: timeout)
            ? (timeout, ["-s", "KILL", "\(hang)", me, "bench", "_sync-hostile-case", libPath, server.url.absoluteString, result])
            : (me, ["bench", "_sync-hostile-case", libPath, server.url.absoluteString, result])
        let run = try LibraryBench.childRun(exe, args)
        let outcome = try? String(contentsOfFile: result, encoding: .utf8)
        // A child timeout killed: 124, or 128 + 9 (KILL) once the time is up.
        let killed = exe == timeout && (run.status == 124 || (run.status == 137 && run.seconds >= Double(hang)))
        let status: Int32 = killed ? 124 : run.status
        return (Library(root: libPath), outcome, status, run.seconds, run.peakMB)
    }

    /// The child: one round with the bench's limits; writes how it ended to `resultPath`.
    static func child(arguments: [String]) async throws {
        guard arguments.count == 3, let url = URL(string: arguments[1]) else { throw UsageError("_sync-hostile-case LIBRARY URL RESULT") }
        let remote = try WebDAVRemote(url: url, credentials: nil, limits: limits)
        var options = SyncOptions()
        options.transfer = limits
        options.roundDeadline = roundDeadline
        options.garbage = nil
        let outcome: String
        do {
            let report = try await Library(root: arguments[0]).sync(with: remote, options: options)
            let problems = report.problems + report.skipped.values
            outcome = "round ended" + (problems.isEmpty ? "" : ": \(problems.first!)")
        } catch {
            outcome = "round failed: \(error)"
        }
        let c = remote.transport.counters
        let line = "\(outcome) [largest body held \(c.largestBody) B, dropped after a cut \(c.droppedBytes) B]"
        try Data(line.utf8).write(to: URL(fileURLWithPath: arguments[2]))
    }

    static func strokeCount(_ lib: Library, _ doc: UUID) async throws -> Int {
        let s = try await lib.open(doc, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        var n = 0
        for p in await s.pageIDs() { n += try await s.content(of: p).elements.count }
        try await s.close()
        return n
    }

    /// Whether the library verifies clean and its document holds every stroke it held.
    static func intactAfter(_ lib: Library, _ doc: UUID, _ strokes: Int) async throws -> Bool {
        for e in try await lib.documents() {
            let findings = DocumentVerifier(fileSystem: lib.fileSystem).verify(e.package).filter { $0.severity == .error }
            if !findings.isEmpty { return false }
        }
        return (try? await strokeCount(lib, doc)) == strokes
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s[s.count / 2]
    }

    static func r(_ x: Double, _ digits: Int = 2) -> Double {
        let m = pow(10.0, Double(digits))
        return (x * m).rounded() / m
    }
}
