// The end of a session loses nothing: edits racing close(), a session dropped without close(),
// autosave retrying after failed saves, a package deleted or moved while open, a cancelled open.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreThumbnails
@testable import LulucatStoreSQLite
import LulucatStoreTesting

extension DocumentSession {
    func evictForTest(_ page: UUID) { loaded[page] = nil }
}

/// A two-sample stroke: small enough for a thousand rounds in a debug build.
private func tinyStroke(_ k: Int) -> Stroke {
    let x = Int32(100 + (k % 500) * 10), y = Int32(100 + (k / 500 % 500) * 10)
    return Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 10),
                  samples: [Sample(x: x, y: y, radius: 10, pressure: 500, time: 0),
                            Sample(x: x + 5, y: y + 5, radius: 10, pressure: 500, time: 4)])
}

/// The built `lnote` next to the test bundle, when it is there.
func builtLnote() -> URL? {
    let exe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [exe.appendingPathComponent("lnote"),
                      Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("lnote"),
                      Bundle.main.bundleURL.appendingPathComponent("lnote")]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// Runs the built `lnote` with `args`; its exit status and standard output. The wait is on a
/// thread of its own (`offThePool`), not one of the cooperative pool's few.
func runLnote(_ args: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await offThePool { try runLnoteBlocking(args) }
}

private func runLnoteBlocking(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let p = Process()
    p.executableURL = builtLnote()
    p.arguments = args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

@Suite struct SessionLifecycleTests {
    init() { Library.enableSQLiteEngine(); Library.enableThumbnails() }
    /// Appends racing close(): every append that returned is on disk after reopening, over 1,000
    /// rounds on the snapshot engine (100 on the others). Thumbnails are on, so close() awaits
    /// their writer: the reentrant window in which appends used to be accepted and dropped.
    @Test(arguments: [(EngineKind.snapshot, 1000), (.journal, 100), (.sqlite, 100)])
    func appendsRacingCloseAreNeverDropped(engine: EngineKind, rounds: Int) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let options = SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 8))
        var package = try await library.createDocument(title: "Race", engine: engine)
        var expected: Set<UUID> = []
        var attempted: Set<UUID> = []
        var next = 0
        var lost = 0, refused = 0
        for round in 0..<rounds {
            // A fresh document every 25 rounds keeps the page small, so each round stays quick.
            if round > 0 && round % 25 == 0 {
                package = try await library.createDocument(title: "Race \(round)", engine: engine)
                expected = []
                attempted = []
            }
            let session = try await library.open(package.id, options: options)
            let page = await session.pageIDs()[0]
            let onDisk = Set(try await session.content(of: page).elements.map(\.id))
            lost += expected.subtracting(onDisk).count
            #expect(expected.isSubset(of: onDisk), "round \(round): acknowledged strokes missing after reopen")
            #expect(onDisk.isSubset(of: attempted), "round \(round): strokes nobody appended")
            let strokes = (0..<30).map { tinyStroke(next + $0) }
            next += strokes.count
            attempted.formUnion(strokes.map(\.id))
            let appender = Task { () -> (acked: [UUID], refused: Bool) in
                var acked: [UUID] = []
                for s in strokes {
                    do {
                        try await session.append(s, to: page)
                        acked.append(s.id)
                    } catch StoreError.sessionClosed {
                        return (acked, true)
                    } catch {
                        Issue.record("append failed with \(error)")
                        return (acked, false)
                    }
                }
                return (acked, false)
            }
            for _ in 0..<(round % 5) { await Task.yield() }
            try await session.close()
            let result = await appender.value
            if result.refused { refused += 1 }
            expected.formUnion(result.acked)
            // Once close() returned, every edit is refused.
            await #expect(throws: StoreError.self) { try await session.append(tinyStroke(0), to: page) }
        }
        let last = try await library.open(package.id, options: options)
        let onDisk = Set(try await last.content(of: last.pageIDs()[0]).elements.map(\.id))
        lost += expected.subtracting(onDisk).count
        try await last.close()
        #expect(lost == 0)
        _ = refused  // how often close() overtook the appender; it varies with scheduling
    }

    /// A session dropped with unsaved edits saves them and unlocks, in this process.
    @Test(arguments: EngineKind.allCases)
    func droppedSessionSavesAndUnlocks(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Dropped", engine: engine)
        var session: DocumentSession? = try await library.open(package.id, options: SessionOptions(autosaveDelay: .seconds(60)))
        let page = await session!.pageIDs()[0]
        let strokes = (0..<20).map(tinyStroke)
        for s in strokes { try await session!.append(s, to: page) }
        #expect(await session!.dirtyPageIDs == [page])
        session = nil
        // No documentInUse: the lock went with the session.
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        #expect(try await again.content(of: page).elements.map(\.id) == strokes.map(\.id))
        #expect(await again.pageEntries()[0].elementCount == strokes.count)
        // It was a clean end: no unclean-shutdown repair was needed.
        #expect(await again.openReport.isEmpty)
        try await again.close()
    }

    /// A session dropped with pending edits; one second later another process (the built `lnote`)
    /// takes the document's lock (`compact` opens a session) and sees every stroke (`info`, `verify`).
    @Test(.enabled(if: builtLnote() != nil, "the lnote executable is not built next to the tests"))
    func droppedSessionIsReadableFromAnotherProcess() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Other process")
        var session: DocumentSession? = try await library.open(package.id, options: SessionOptions(autosaveDelay: .milliseconds(300)))
        let page = await session!.pageIDs()[0]
        for k in 0..<37 { try await session!.append(tinyStroke(k), to: page) }
        session = nil
        try await Task.sleep(for: .seconds(1))
        let compact = try await runLnote(["compact", package.path, "--json"])
        #expect(compact.status == 0, "lnote compact could not open the document: \(compact.stderr)")
        let info = try await runLnote(["info", package.id.uuidString, "--library", tmp.path, "--json"])
        #expect(info.status == 0, "\(info.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        let pages = json?["pages"] as? [[String: Any]]
        #expect(pages?.first?["elements"] as? Int == 37)
        let verify = try await runLnote(["verify", package.path])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(try PageFile.decode(readBytes(package.pagePath(page))!).elements.count == 37)
    }

    /// A flush that fails does not stop autosave: once writing works again, the page is saved
    /// without another edit.
    @Test func failedFlushKeepsRetrying() async throws {
        let tmp = TemporaryFolder()
        let fs = InstrumentedFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try await library.createDocument(title: "Retry")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: .milliseconds(20), thumbnails: nil))
        let page = await session.pageIDs()[0]
        fs.failPathContaining = ".content"
        try await session.append(tinyStroke(1), to: page)
        await #expect(throws: StoreError.self) { try await session.flush() }
        // Autosave retries too, and keeps failing while the disk is full.
        try await Task.sleep(for: .milliseconds(150))
        #expect(await session.dirtyPageIDs == [page])
        #expect(await session.lastSaveError != nil)
        fs.failPathContaining = nil
        await eventually { await session.dirtyPageIDs.isEmpty }
        #expect(await session.dirtyPageIDs.isEmpty)
        #expect(await session.lastSaveError == nil)
        #expect(try PageFile.decode(readBytes(package.pagePath(page))!).elements.count == 1)
        try await session.close()
    }

    /// Deleted or moved while open: saving says `documentGone`; moved back, autosave saves it.
    @Test(arguments: EngineKind.allCases)
    func packageMovedOrDeletedWhileOpen(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Gone", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: .milliseconds(20), thumbnails: nil))
        let page = await session.pageIDs()[0]
        let second = try await session.addPage()
        _ = try await session.content(of: page)
        let aside = tmp.path + "/moved-away.lnote"
        try FileManager.default.moveItem(atPath: package.path, toPath: aside)
        // A page not in memory cannot be read from a package that is gone; the error says so.
        if engine != .sqlite {
            await session.evictForTest(second)
            do {
                try await session.append(tinyStroke(0), to: second)
                Issue.record("append to an unloaded page of a moved package succeeded")
            } catch {
                guard case .documentGone = error else { Issue.record("expected documentGone, got \(error)"); return }
            }
        }
        try await session.append(tinyStroke(1), to: page)
        do {
            try await session.flush()
            Issue.record("flush into a moved package succeeded")
        } catch {
            guard case .documentGone(let path) = error else { Issue.record("expected documentGone, got \(error)"); return }
            #expect(path == package.path)
        }
        try FileManager.default.moveItem(atPath: aside, toPath: package.path)
        await eventually { await session.dirtyPageIDs.isEmpty }
        #expect(await session.dirtyPageIDs.isEmpty)
        try await session.close()
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        #expect(try await again.content(of: page).elements.count == 1)

        try FileManager.default.removeItem(atPath: package.path)
        try await again.append(tinyStroke(2), to: page)
        do {
            try await again.flush()
            Issue.record("flush into a deleted package succeeded")
        } catch {
            guard case .documentGone(let path) = error else { Issue.record("expected documentGone, got \(error)"); return }
            #expect(path == package.path)
        }
        await again.abandon()
    }

    /// A cancelled task's open returns no session and leaves the document unlocked.
    @Test func cancelledOpenReturnsNoSession() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Cancelled")
        let task = Task { () async throws(StoreError) -> DocumentSession in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await library.open(package.id)
        }
        do {
            _ = try await task.value
            Issue.record("a cancelled open returned a session")
        } catch {
            guard case .cancelled? = error as? StoreError else { Issue.record("expected cancelled, got \(error)"); return }
        }
        let session = try await library.open(package.id)
        try await session.close()
    }

    /// A second close() while one is under way waits for it; both return with the session closed.
    @Test func concurrentClosesBothFinish() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Two closes")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: ThumbnailOptions(width: 8)))
        let page = await session.pageIDs()[0]
        try await session.append(tinyStroke(1), to: page)
        async let a: Void = session.close()
        async let b: Void = session.close()
        _ = try await (a, b)
        do {
            try await session.append(tinyStroke(2), to: page)
            Issue.record("an append after close() was accepted")
        } catch {
            guard case .sessionClosed = error else { Issue.record("expected sessionClosed, got \(error)"); return }
        }
        let again = try await library.open(package.id)
        try await again.close()
    }
}
