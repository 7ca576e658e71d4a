// Issue 13 item 7, across processes: a read-only session works while ANOTHER PROCESS writes.
// `lnote-dev write-loop` appends one stroke and flushes per save, printing a line per acknowledged
// save; this process reads the same page with `Library.openReadOnly` in a bounded loop. Every read
// must be a whole prefix of the saves (never torn, never going back), and the last read, after
// the writer has exited, must hold every acknowledged stroke.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatStoreSQLite

@Suite struct ReadOnlyCrossProcessTests {
    init() { Library.enableSQLiteEngine() }
    /// Stroke `n` of `lnote-dev write-loop` (the same formula as `WriteLoopCommand.stroke`): its
    /// samples; the id is the writer's own and comes from its output.
    static func samples(_ n: Int, count: Int) -> [Sample] {
        (0..<count).map { i in
            Sample(x: Int32(1000 + 3 * n + 7 * i), y: Int32(2000 + (n * 31 + i * i) % 997), radius: UInt16(10 + (n + i) % 5),
                   pressure: UInt16(300 + (n * 7 + i) % 600), time: UInt32(i * 4))
        }
    }

    @Test("write-loop is hidden from help and refuses bad usage with 64")
    func writeLoopUsage() async throws {
        let help = try await lnoteDev(["help"])
        #expect(help.status == 0 && help.stdout.contains("crashcheck") && !help.stdout.contains("write-loop"), "\(help.stdout)")
        #expect(try await lnoteDev(["write-loop", "--help"]).stdout.contains("lnote-dev write-loop LIBRARY DOCUMENT-ID"))
        #expect(try await lnoteDev(["write-loop"]).status == 64)
        #expect(try await lnoteDev(["write-loop", "/tmp", "not-a-uuid"]).status == 64)
        #expect(try await lnoteDev(["write-loop", "/tmp", UUID().uuidString, "--hold-at", "3"]).status == 64)
        // A document that is not there is a failure (1), not a usage error.
        let tmp = TempDir()
        let missing = try await lnoteDev(["write-loop", tmp.path, UUID().uuidString, "--saves", "1"])
        #expect(missing.status == 1 && !missing.stdout.contains("saved "), "\(missing.stdout) \(missing.stderr)")
    }

    @Test(arguments: EngineKind.allCases)
    func readingWhileAnotherProcessWritesSeesWholeSavesOnly(engine: EngineKind) async throws {
        let tmp = TempDir()
        let root = tmp.path + "/lib"
        let library = Library(root: root)
        let package = try await library.createDocument(title: "Live", engine: engine)
        let page = try await library.openReadOnly(package.id).pageIDs()[0]
        let saves = 150, sampleCount = 40

        let p = Process()
        p.executableURL = try lnoteURL("lnote-dev")
        // Halfway the writer waits until this file exists, which the reader makes once it has read
        // that far: at least one read falls strictly between the first and the last save even when
        // a parallel test run starves this loop (the other reads race the writer freely).
        let holdFile = tmp.path + "/reader-was-here"
        p.arguments = ["write-loop", root, package.id.uuidString, "--saves", "\(saves)", "--samples", "\(sampleCount)", "--pause-ms", "2",
                       "--hold-at", "\(saves / 2)", "--hold-file", holdFile]
        // The writer's output goes to files, read once it has exited (a pipe drained by a blocking
        // read would hold one of the few threads of Swift's cooperative pool on a 2-core machine).
        let outPath = tmp.path + "/writer.out", errPath = tmp.path + "/writer.err"
        try #require(FileManager.default.createFile(atPath: outPath, contents: nil))
        try #require(FileManager.default.createFile(atPath: errPath, contents: nil))
        let out = try #require(FileHandle(forWritingAtPath: outPath)), err = try #require(FileHandle(forWritingAtPath: errPath))
        p.standardOutput = out
        p.standardError = err
        try p.run()

        let reader = try await library.openReadOnly(package.id)
        /// Every read, as the strokes' (id, samples) in order.
        var reads: [[Stroke]] = []
        var lastCount = 0
        let deadline = Date().addingTimeInterval(600)
        // Bounded in time and in reads; ends once the writer has exited.
        while Date() < deadline, reads.count < 1_000_000 {
            let running = p.isRunning
            let elements = try await reader.content(of: page).elements
            let strokes = elements.compactMap { e -> Stroke? in if case .stroke(let s) = e { return s } else { return nil } }
            #expect(strokes.count == elements.count, "only strokes are written")
            #expect(strokes.count >= lastCount, "went back from \(lastCount) to \(strokes.count) strokes")
            for (n, s) in strokes.enumerated() {
                #expect(s.samples == Self.samples(n, count: sampleCount), "stroke \(n) of a read of \(strokes.count) is torn or not the writer's")
            }
            lastCount = strokes.count
            reads.append(strokes)
            if strokes.count >= saves / 2, !FileManager.default.fileExists(atPath: holdFile) {
                #expect(FileManager.default.createFile(atPath: holdFile, contents: nil), "the hold file could not be made")
            }
            if !running { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        p.waitUntilExit()
        try out.close()
        try err.close()
        let stdout = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        #expect(p.terminationStatus == 0, "\(stderr)")

        // The acknowledged saves, in order: "saved N <stroke id>".
        var acknowledged: [UUID] = []
        for line in stdout.split(separator: "\n") where line.hasPrefix("saved ") {
            let parts = line.split(separator: " ")
            #expect(parts.count == 3 && Int(parts[1]) == acknowledged.count + 1, "\(line)")
            if parts.count == 3, let id = UUID(uuidString: String(parts[2])) { acknowledged.append(id) }
        }
        #expect(acknowledged.count == saves, "\(stdout)\n\(stderr)")
        // Every read is a whole prefix of what the writer saved: no stroke it did not write, none torn.
        for (i, r) in reads.enumerated() {
            #expect(r.count <= acknowledged.count && r.map(\.id) == Array(acknowledged.prefix(r.count)),
                    "read \(i) (\(r.count) strokes) is not a prefix of the acknowledged saves")
        }
        // After the writer exits, a read sees every acknowledged stroke.
        let final = try await reader.content(of: page).elements
        #expect(final.map(\.id) == acknowledged, "the final read holds \(final.count) of \(acknowledged.count) acknowledged strokes")
        let distinct = Set(reads.map(\.count))
        print("cross-process reader (\(engine)): \(reads.count) reads, \(distinct.count) distinct stroke counts, \(acknowledged.count) acknowledged saves")
        // The read that let the writer go on saw exactly the halfway save (the writer was holding there).
        #expect(distinct.contains(saves / 2) && distinct.count >= 2,
                "the reads saw only \(distinct.sorted()) strokes in \(reads.count) reads: the loop did not overlap the writer")
        await reader.close()
        // A fresh reader (another open) agrees.
        let again = try await library.openReadOnly(package.id)
        #expect(try await again.content(of: page).elements.map(\.id) == acknowledged)
        await again.close()
    }
}
