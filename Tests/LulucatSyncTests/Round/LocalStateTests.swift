// The local side of a round that changed only here (docs/sync.md §6): the base and its page states
// in one file (format 2, format 1 still read), and a closed document read under its lock alone.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatSyncTesting
import Testing
@testable import LulucatSync

private func drawn(_ lib: Library, _ doc: UUID, page: Int = 0, count: Int, seed: UInt64) async throws -> [UUID] {
    var rng = TestRandom(seed: seed)
    return try await edit(lib, doc) { s in
        let p = await s.pageIDs()[page]
        var ids: [UUID] = []
        for _ in 0..<count { let st = makeStroke(&rng); try await s.append(st, to: p); ids.append(st.id) }
        return ids
    }
}

private func baseJSON(_ lib: Library, _ doc: UUID) throws -> [String: Any] {
    let data = try #require(FileManager.default.contents(atPath: lib.root + "/.sync/docs/\(doc.uuidString).base"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

private func stateFiles(_ lib: Library, _ doc: UUID) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: lib.root + "/.sync/docs/\(doc.uuidString)")) ?? []).filter { $0.hasSuffix(".state") }
}

@Suite(.serialized) struct LocalStateTests {
    init() { Library.enableSQLiteEngine() }
    /// A base written by the earlier round (format 1: a state file per page) is read by this one,
    /// which writes format 2 (the states inside the base) and removes the files; nothing is lost
    /// on the way and a round where nothing changed stays one request.
    @Test func aBaseOfFormat1IsReadAndRewrittenAsFormat2() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try a.createDocument(title: "Formats").id
        var strokes = try await drawn(a, doc, count: 3, seed: 1)
        _ = try await edit(a, doc) { s in try await s.addPage() }
        var earlier = testSyncOptions
        earlier.earlierRound = [.stateFiles, .sessionForEveryDocument]
        try await h.sync(0, options: earlier)
        var o = try baseJSON(a, doc)
        #expect(o["version"] == nil && o["states"] == nil && o["stateDigests"] != nil, "\(o.keys)")
        #expect(stateFiles(a, doc).count == 2)

        strokes += try await drawn(a, doc, count: 2, seed: 2)
        let r = try await h.sync(0)
        #expect(r.documentsPushed == 1 && r.pagesPushed == 1, "\(r)")
        o = try baseJSON(a, doc)
        #expect((o["version"] as? Int) == 2, "\(o.keys)")
        #expect((o["states"] as? [String: String])?.count == 2)
        #expect(o["stateDigests"] == nil)
        #expect(stateFiles(a, doc).isEmpty, "format 1's state files are removed once format 2 is written")

        // Format 2 read back: the next change is recorded against it (one page blob, not two).
        strokes += try await drawn(a, doc, page: 1, count: 1, seed: 3)
        let r2 = try await h.sync(0)
        #expect(r2.pagesPushed == 1, "\(r2)")
        #expect(try await h.sync(0).requests == 1)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }

    /// A base whose inline state does not decode is not used (the document is merged as new,
    /// which joins to the same state): nothing lost, converged.
    @Test func aDamagedFormat2BaseIsNotUsed() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try a.createDocument(title: "Damaged base").id
        var strokes = try await drawn(a, doc, count: 3, seed: 4)
        try await h.converge()
        var o = try baseJSON(a, doc)
        var states = try #require(o["states"] as? [String: String])
        for k in states.keys { states[k] = Data([1, 2, 3]).base64EncodedString() }
        o["states"] = states
        try JSONSerialization.data(withJSONObject: o).write(to: URL(fileURLWithPath: a.root + "/.sync/docs/\(doc.uuidString).base"))
        #expect(SyncStateStore(library: a).base(doc) == nil)
        strokes += try await drawn(a, doc, count: 1, seed: 5)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }

    /// A closed document that changed only here is read under its writer lock without a session:
    /// the round takes the lock (a holder makes it skip the document, as a session would), writes
    /// nothing into the package, and publishes the stroke. One left by a crash (its open marker
    /// there) goes through a session, which repairs it.
    @Test func aDocumentChangedOnlyHereIsReadUnderItsLockAlone() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try a.createDocument(title: "Lock").id
        var strokes = try await drawn(a, doc, count: 2, seed: 6)
        try await h.converge()
        var timed = testSyncOptions
        timed.timed = true

        strokes += try await drawn(a, doc, count: 1, seed: 7)
        let pkg = a.package(doc)
        let before = try FileManager.default.contentsOfDirectory(atPath: pkg.path).sorted()
        let documentJSON = FileManager.default.contents(atPath: pkg.documentPath)
        let r = try await h.sync(0, options: timed)
        let steps = r.timings.map(\.step)
        #expect(steps.contains("lock and read document.json") && !steps.contains("open session"), "\(steps)")
        #expect(r.documentsPushed == 1 && r.pagesPushed == 1 && r.requests == 3, "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: pkg.path).sorted() == before)
        #expect(FileManager.default.contents(atPath: pkg.documentPath) == documentJSON)
        try await h.sync(1)
        #expect(try await contents(of: h.libraries[1]).documents[doc]!.allElements == Set(strokes))

        // Its lock held elsewhere: skipped, and published once it is free.
        strokes += try await drawn(a, doc, count: 1, seed: 8)
        let lock = try a.fileSystem.lock(pkg.lockPath)
        let held = try await a.sync(with: h.remotes[0], options: timed)
        #expect(held.skipped[doc] != nil, "\(held)")
        a.fileSystem.unlock(lock)
        try await h.sync(0)

        // Left open by a crash: a session opens it (and removes the marker).
        strokes += try await drawn(a, doc, count: 1, seed: 9)
        let marker = pkg.path + "/.session"
        #expect(FileManager.default.createFile(atPath: marker, contents: Data()))
        let crashed = try await h.sync(0, options: timed)
        #expect(crashed.timings.map(\.step).contains("open session"), "\(crashed.timings.map(\.step))")
        #expect(crashed.documentsPushed == 1)
        #expect(!FileManager.default.fileExists(atPath: marker))
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }

    /// The same through the journal and SQLite engines: the page read under the lock alone is the
    /// one a session would read (the journal's records included).
    @Test(arguments: [EngineKind.journal, .sqlite])
    func otherEnginesAreReadUnderTheLockToo(engine: EngineKind) async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try a.createDocument(title: "Engines", engine: engine).id
        var strokes = try await drawn(a, doc, count: 2, seed: 10)
        try await h.converge()
        var timed = testSyncOptions
        timed.timed = true
        for k in 0..<3 {
            strokes += try await drawn(a, doc, count: 1, seed: 11 + UInt64(k))
            let r = try await h.sync(0, options: timed)
            #expect(r.timings.map(\.step).contains("lock and read document.json"), "\(r.timings.map(\.step))")
            #expect(r.pagesPushed == 1, "\(r)")
        }
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }
}
