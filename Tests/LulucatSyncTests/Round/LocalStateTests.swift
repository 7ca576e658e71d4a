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

/// Rewrites a document's base as the rounds before format 2 wrote it (format 1: no "version", each
/// page state in its own synced file, checked against the base's "stateDigests"): the product
/// reads formats 1 and 2 and writes only 3, so the tests of old bases make them here.
private func rewriteBaseAsFormat1(_ lib: Library, _ doc: UUID) throws {
    let store = SyncStateStore(library: lib)
    let base = try #require(store.readBase(doc))
    try store.fs.ensureDirectory(store.statesFolder(doc))
    var digests: [String: String] = [:]
    for (page, st) in base.states {
        let bytes = PageBlob.encodeState(st)
        try store.fs.writeAtomically(bytes, to: store.statePath(doc, page: page))
        digests[page.uuidString] = SyncStateStore.stateDigest(bytes)
    }
    var pm: [String: Int64] = [:]
    for (k, v) in base.pageModified { pm[k.uuidString] = v }
    let o: [String: Any] = ["head": Data(base.head.encode()).base64EncodedString(), "docModified": base.docModified,
                            "pageModified": pm, "published": base.published, "stateDigests": digests]
    try store.fs.writeAtomically(Array(try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])), to: store.basePath(doc))
}

/// Rewrites a document's base as format 2 (the states inline, no print tables).
private func rewriteBaseAsFormat2(_ lib: Library, _ doc: UUID) throws {
    var o = try baseJSON(lib, doc)
    o["prints"] = nil
    o["version"] = 2
    let store = SyncStateStore(library: lib)
    try store.fs.writeAtomically(Array(try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])), to: store.basePath(doc))
}

@Suite(.serialized) struct LocalStateTests {
    init() { Library.enableSQLiteEngine() }
    /// A base written by the earlier round (format 1: a state file per page) is read by this one,
    /// which writes the current format (3: the states and print tables inside the base) and
    /// removes the files; nothing is lost on the way and a round where nothing changed stays one
    /// request.
    @Test func aBaseOfFormat1IsReadAndRewrittenInTheCurrentFormat() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Formats").id
        var strokes = try await drawn(a, doc, count: 3, seed: 1)
        _ = try await edit(a, doc) { s in try await s.addPage() }
        try await h.sync(0)
        try rewriteBaseAsFormat1(a, doc)
        var o = try baseJSON(a, doc)
        #expect(o["version"] == nil && o["states"] == nil && o["stateDigests"] != nil, "\(o.keys)")
        #expect(stateFiles(a, doc).count == 2)

        strokes += try await drawn(a, doc, count: 2, seed: 2)
        let r = try await h.sync(0)
        #expect(r.documentsPushed == 1 && r.pagesPushed == 1, "\(r)")
        o = try baseJSON(a, doc)
        #expect((o["version"] as? Int) == 3, "\(o.keys)")
        #expect((o["states"] as? [String: String])?.count == 2)
        #expect(o["stateDigests"] == nil)
        #expect(stateFiles(a, doc).isEmpty, "format 1's state files are removed once format 3 is written")

        // Format 3 read back: the next change is recorded against it (one page blob, not two).
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
        let doc = try await a.createDocument(title: "Damaged base").id
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
        let doc = try await a.createDocument(title: "Lock").id
        var strokes = try await drawn(a, doc, count: 2, seed: 6)
        try await h.converge()
        strokes += try await drawn(a, doc, count: 1, seed: 7)
        let pkg = a.package(doc)
        let before = try FileManager.default.contentsOfDirectory(atPath: pkg.path).sorted()
        let documentJSON = FileManager.default.contents(atPath: pkg.documentPath)
        let r = try await h.sync(0)
        #expect(r.paths[doc] == .underLock, "\(r.paths)")
        #expect(r.documentsPushed == 1 && r.pagesPushed == 1 && r.requests == 3, "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: pkg.path).sorted() == before)
        #expect(FileManager.default.contents(atPath: pkg.documentPath) == documentJSON)
        try await h.sync(1)
        #expect(try await contents(of: h.libraries[1]).documents[doc]!.allElements == Set(strokes))

        // Its lock held elsewhere: skipped, and published once it is free.
        strokes += try await drawn(a, doc, count: 1, seed: 8)
        let lock = try a.fileSystem.lock(pkg.lockPath)
        let held = try await a.sync(with: h.remotes[0], options: testSyncOptions)
        #expect(held.skipped[doc] != nil, "\(held)")
        a.fileSystem.unlock(lock)
        try await h.sync(0)

        // Left open by a crash: a session opens it (and removes the marker).
        strokes += try await drawn(a, doc, count: 1, seed: 9)
        let marker = pkg.path + "/.session"
        #expect(FileManager.default.createFile(atPath: marker, contents: Data()))
        let crashed = try await h.sync(0)
        #expect(crashed.paths[doc] == .session, "\(crashed.paths)")
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
        let doc = try await a.createDocument(title: "Engines", engine: engine).id
        var strokes = try await drawn(a, doc, count: 2, seed: 10)
        try await h.converge()
        for k in 0..<3 {
            strokes += try await drawn(a, doc, count: 1, seed: 11 + UInt64(k))
            let r = try await h.sync(0)
            #expect(r.paths[doc] == .underLock, "\(r.paths)")
            #expect(r.pagesPushed == 1, "\(r)")
        }
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }
    /// Base format 2 (no print tables, written by the round before format 3) is read by this one:
    /// its changed page is fingerprinted whole once, the base is rewritten as format 3 with the
    /// page's print table, and from then on a round fingerprints only the strokes whose coded
    /// bytes it has not seen. Nothing lost on the way.
    @Test func aBaseOfFormat2IsReadAndItsPrintTablesSpareFingerprints() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Prints").id
        var strokes = try await drawn(a, doc, count: 4, seed: 20)
        try await h.sync(0)
        try rewriteBaseAsFormat2(a, doc)
        var o = try baseJSON(a, doc)
        #expect((o["version"] as? Int) == 2 && o["prints"] == nil, "\(o.keys)")

        strokes += try await drawn(a, doc, count: 1, seed: 21)
        let r = try await h.sync(0)
        #expect(r.pagesPushed == 1 && r.fingerprinted == 5, "format 2 has no tables: the whole page, \(r)")
        o = try baseJSON(a, doc)
        #expect((o["version"] as? Int) == 3, "\(o.keys)")
        let tables = try #require(o["prints"] as? [String: String])
        #expect(tables.count == 1)
        let page = try await edit(a, doc) { s in await s.pageIDs()[0] }
        let b64 = try #require(tables[page.uuidString])
        let tableBytes = try #require(Data(base64Encoded: b64))
        let table = try PrintTable.decode(Array(tableBytes))
        #expect(Set(table.keys) == Set(strokes))
        let content = try await edit(a, doc) { s in try await s.content(of: page) }
        for e in content.elements { #expect(table[e.id]?.fingerprint == PageBlob.fingerprint(e), "a cached fingerprint is the fingerprint") }

        strokes += try await drawn(a, doc, count: 2, seed: 22)
        let r2 = try await h.sync(0)
        #expect(r2.pagesPushed == 1 && r2.fingerprinted == 2, "only the new strokes: \(r2)")
        #expect(r2.readHollow == 5, "the strokes seen before are not decoded: \(r2)")
        #expect(try await h.sync(0).requests == 1)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }

    /// A stroke transformed here keeps its id and gets new samples: its coded bytes differ from
    /// the ones its cached fingerprint was computed from, so it is fingerprinted again, recorded
    /// as a new version and arrives with its new samples (a cache keyed by id alone would miss it).
    @Test func aTransformedStrokeIsNotTakenFromThePrintTable() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Moved").id
        let strokes = try await drawn(a, doc, count: 3, seed: 23)
        try await h.converge()
        try await edit(a, doc) { s in try await s.transform([strokes[1]], by: .translation(dx: 250, dy: 40), on: await s.pageIDs()[0]) }
        let r = try await h.sync(0)
        #expect(r.pagesPushed == 1 && r.fingerprinted == 1 && r.readHollow == 2, "\(r)")
        try await h.sync(1)
        let pages = try await [a, h.libraries[1]].asyncMap { lib in try await edit(lib, doc) { s in try await s.content(of: await s.pageIDs()[0]) } }
        #expect(pages[0] == pages[1], "the moved stroke arrives with its new samples")
        _ = try await h.checkConverged()
    }

    /// A print table that does not decode is dropped: the base is still used (its states are
    /// fine), the page is fingerprinted whole, nothing is lost.
    @Test func aDamagedPrintTableOnlyCostsFingerprints() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Damaged table").id
        var strokes = try await drawn(a, doc, count: 3, seed: 25)
        try await h.converge()
        var o = try baseJSON(a, doc)
        var tables = try #require(o["prints"] as? [String: String])
        for k in tables.keys { tables[k] = Data([0x4C, 0x53, 0x46, 0x50, 9, 9]).base64EncodedString() }
        o["prints"] = tables
        try JSONSerialization.data(withJSONObject: o).write(to: URL(fileURLWithPath: a.root + "/.sync/docs/\(doc.uuidString).base"))
        let read = try #require(SyncStateStore(library: a).base(doc))
        #expect(read.prints.isEmpty && read.states.count == 1)
        strokes += try await drawn(a, doc, count: 1, seed: 26)
        let r = try await h.sync(0)
        #expect(r.pagesPushed == 1 && r.fingerprinted == 4 && r.readHollow == 0, "\(r)")
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }
    /// The bases kept in memory are the files' as long as the files are the ones saved: a base
    /// replaced on disk by anything else is read again.
    @Test func aBaseReplacedOnDiskIsReadAgainNotTakenFromMemory() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Kept").id
        _ = try await drawn(a, doc, count: 2, seed: 27)
        try await h.sync(0)
        let store = SyncStateStore(library: a)
        let saved = try #require(store.base(doc))
        let read = try #require(store.readBase(doc))
        #expect(saved.head == read.head && saved.states == read.states && saved.published == read.published)
        #expect(saved.prints.mapValues(\.entries) == read.prints.mapValues(\.entries))
        var o = try baseJSON(a, doc)
        o["published"] = false
        o["docModified"] = 12345
        try JSONSerialization.data(withJSONObject: o).write(to: URL(fileURLWithPath: a.root + "/.sync/docs/\(doc.uuidString).base"), options: .atomic)
        let again = try #require(store.base(doc))
        #expect(!again.published && again.docModified == 12345)
        // The next round publishes it again (nothing else changed) and the one after is one request.
        let r = try await h.sync(0)
        #expect(r.requests > 1, "\(r)")
        #expect(try await h.sync(0).requests == 1)
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ f: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for e in self { out.append(try await f(e)) }
        return out
    }
}
