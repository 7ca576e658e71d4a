// Scenarios over real libraries syncing through a folder and through a real Apache WebDAV server:
// each ends converged, with no lost stroke, no resurrection, verify clean and blobs intact.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreMaintenance
import LulucatStoreSQLite
import LulucatSyncTesting
import Testing
@testable import LulucatSync
import LulucatSyncTestSupport

// Through a folder here; through Apache in WebDAVSyncTests, which is skipped without apache2.
private let kinds: [RemoteKind] = [.folder]

/// Makes a document with `pages` pages and `strokes` strokes on each; returns its id and strokes.
private func makeDocument(_ lib: Library, title: String, pages: Int = 2, strokes: Int = 3, engine: EngineKind = .snapshot,
                          seed: UInt64) async throws -> (UUID, [[UUID]]) {
    var rng = TestRandom(seed: seed)
    let pkg = try await lib.createDocument(title: title, engine: engine)
    let ids = try await edit(lib, pkg.id) { s in
        var out: [[UUID]] = []
        for i in 0..<pages {
            let page = i == 0 ? await s.pageIDs()[0] : try await s.addPage()
            var ids: [UUID] = []
            for _ in 0..<strokes {
                let st = makeStroke(&rng)
                try await s.append(st, to: page)
                ids.append(st.id)
            }
            out.append(ids)
        }
        return out
    }
    return (pkg.id, ids)
}

private func addStrokes(_ lib: Library, _ doc: UUID, page index: Int, count: Int, seed: UInt64) async throws -> [UUID] {
    var rng = TestRandom(seed: seed)
    return try await edit(lib, doc) { s in
        let page = await s.pageIDs()[index]
        var ids: [UUID] = []
        for _ in 0..<count {
            let st = makeStroke(&rng)
            try await s.append(st, to: page)
            ids.append(st.id)
        }
        return ids
    }
}

@Suite(.serialized) struct LibrarySyncTests {
    init() { Library.enableSQLiteEngine() }
    @Test(arguments: kinds)
    func twoLibrariesConvergeAndANoChangeRoundIsOneRequest(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (a, strokesA) = try await makeDocument(h.libraries[0], title: "Lecture", seed: 1)
        let (b, _) = try await makeDocument(h.libraries[1], title: "Sketches", engine: .journal, seed: 2)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents.count == 2)
        #expect(c.documents[a]?.title == "Lecture")
        #expect(c.documents[a]?.elements == strokesA)
        #expect(c.documents[b]?.title == "Sketches")
        for i in 0..<2 {
            let r = try await h.sync(i)
            #expect(r.requests == 1, "a round with nothing changed made \(r.requests) requests")
            #expect(r.bytesSent == (kind == .webdav ? r.bytesSent : 0))
        }
    }

    @Test(arguments: kinds)
    func threeLibrariesWithConcurrentStrokesOnOnePage(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 3)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Shared", seed: 3)
        try await h.converge()
        var added: [UUID] = []
        for i in 0..<3 { added += try await addStrokes(h.libraries[i], doc, page: 0, count: 4, seed: 10 + UInt64(i)) }
        // All three at once.
        async let r0 = h.libraries[0].sync(with: h.remotes[0], options: testSyncOptions)
        async let r1 = h.libraries[1].sync(with: h.remotes[1], options: testSyncOptions)
        async let r2 = h.libraries[2].sync(with: h.remotes[2], options: testSyncOptions)
        _ = try await (r0, r1, r2)
        try await h.converge()
        let c = try await h.checkConverged()
        let page0 = Set(c.documents[doc]!.elements[0])
        #expect(page0.isSuperset(of: added))
        #expect(page0.isSuperset(of: initial[0]))
        #expect(page0.count == initial[0].count + 12)
    }

    @Test(arguments: kinds)
    func eraseVersusAddAndBothErase(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Erase", seed: 4)
        try await h.converge()
        let target = initial[0][1], shared = initial[0][2]
        // A erases the middle of `target` and part of `shared`; B adds a stroke and erases `shared` too.
        let piecesA = try await edit(h.libraries[0], doc) { s -> [UUID] in
            let page = await s.pageIDs()[0]
            let p1 = try await s.erase(stroke: target, keeping: [0..<5, 12..<20], on: page)
            let p2 = try await s.erase(stroke: shared, keeping: [0..<8], on: page)
            return p1 + p2
        }
        let addedB = try await addStrokes(h.libraries[1], doc, page: 0, count: 1, seed: 40)
        let piecesB = try await edit(h.libraries[1], doc) { s -> [UUID] in
            try await s.erase(stroke: shared, keeping: [10..<20], on: await s.pageIDs()[0])
        }
        try await h.converge()
        let c = try await h.checkConverged()
        let page0 = Set(c.documents[doc]!.elements[0])
        #expect(!page0.contains(target) && !page0.contains(shared), "an erased stroke came back")
        #expect(page0.isSuperset(of: piecesA + piecesB + addedB))
        #expect(page0.contains(initial[0][0]))
    }

    @Test(arguments: kinds)
    func deletePageVersusEditPageKeepsTheEdit(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Pages", pages: 3, seed: 5)
        try await h.converge()
        let page1 = try await edit(h.libraries[0], doc) { s in await s.pageIDs()[1] }
        try await edit(h.libraries[0], doc) { s in try await s.removePage(page1) }
        let added = try await addStrokes(h.libraries[1], doc, page: 1, count: 2, seed: 50)
        try await h.sync(0)
        try await h.sync(1)
        try await h.converge()
        let c = try await h.checkConverged()
        let d = c.documents[doc]!
        #expect(d.pages.contains(page1), "the edited page did not come back")
        // It comes back with the edit its remover had not seen; what the remover had seen on it
        // went with it (docs/sync.md §5.4: the remover's erasures before the removal cannot be
        // told apart from the rest, and an erased stroke must never come back).
        #expect(d.elements[d.pages.firstIndex(of: page1)!] == added)
        #expect(Set(d.elements.joined()).isDisjoint(with: initial[1]))
        // Removed again, having seen the edit: it goes everywhere.
        try await edit(h.libraries[0], doc) { s in try await s.removePage(page1) }
        try await h.converge()
        let c2 = try await h.checkConverged()
        #expect(!c2.documents[doc]!.pages.contains(page1))
    }

    // No resurrection (docs/sync.md §5.2, §5.4): a stroke erased here never comes back, whatever
    // this device did to its page or document before syncing, and whatever another device did
    // meanwhile.

    /// Erased, then its page removed, both before a round, while another device draws on that
    /// page: the page comes back with the other device's strokes, and the erased stroke nowhere.
    @Test(arguments: [true, false])
    func eraseThenRemovePageWhileAnotherEditsItResurrectsNothing(removerSyncsFirst: Bool) async throws {
        let h = try SyncHarness(.folder, libraries: 3)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Gone", pages: 3, seed: 13)
        try await h.converge()
        let page = try await edit(h.libraries[0], doc) { s in await s.pageIDs()[1] }
        let erased = initial[1][1]
        try await edit(h.libraries[0], doc) { s in
            _ = try await s.erase(stroke: erased, keeping: [0..<4, 14..<20], on: page)
            try await s.removePage(page)
        }
        let added = try await addStrokes(h.libraries[1], doc, page: 1, count: 2, seed: 130)
        if removerSyncsFirst { try await h.sync(0); try await h.sync(1) } else { try await h.sync(1); try await h.sync(0) }
        try await h.converge()
        let c = try await h.checkConverged()
        let d = c.documents[doc]!
        #expect(!d.allElements.contains(erased), "the erased stroke came back")
        #expect(d.pages.contains(page), "the page drawn on elsewhere did not come back")
        // The remover had seen everything else on the page: it went with the page.
        #expect(d.elements[d.pages.firstIndex(of: page)!] == added)
        #expect(d.allElements.isSuperset(of: initial[0] + initial[2]))
    }

    /// Erased, then the page moved, before a round, while another device draws on it.
    @Test func eraseThenMovePageWhileAnotherEditsItResurrectsNothing() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Moved", pages: 3, seed: 14)
        try await h.converge()
        let erased = initial[2][0]
        let (page, pieces) = try await edit(h.libraries[0], doc) { s -> (UUID, [UUID]) in
            let page = await s.pageIDs()[2]
            let pieces = try await s.erase(stroke: erased, keeping: [0..<6], on: page)
            try await s.movePage(page, to: 0)
            return (page, pieces)
        }
        let added = try await addStrokes(h.libraries[1], doc, page: 2, count: 1, seed: 140)
        try await h.converge()
        let c = try await h.checkConverged()
        let d = c.documents[doc]!
        #expect(d.pages.first == page)
        #expect(!d.allElements.contains(erased), "the erased stroke came back")
        #expect(Set(d.elements[0]) == Set(initial[2].dropFirst() + pieces + added))
    }

    /// Erased, then the document duplicated, before a round, while another device draws on the
    /// page: neither the document nor its copy shows the erased stroke anywhere.
    @Test func eraseThenDuplicateDocumentResurrectsNothing() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Original", seed: 15)
        try await h.converge()
        let erased = initial[0][2]
        try await edit(h.libraries[0], doc) { s in _ = try await s.erase(stroke: erased, keeping: [0..<3], on: await s.pageIDs()[0]) }
        let copy = try await h.libraries[0].duplicate(doc, title: "Copy").id
        let added = try await addStrokes(h.libraries[1], doc, page: 0, count: 1, seed: 150)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents.count == 2)
        for id in [doc, copy] { #expect(!c.documents[id]!.allElements.contains(erased), "the erased stroke came back in \(id)") }
        #expect(c.documents[doc]!.allElements.isSuperset(of: added))
        #expect(c.documents[copy]!.allElements.isDisjoint(with: added))
    }

    /// Erased, then the document moved to the trash, before a round, while another device draws
    /// on it: it comes back here from the trash with every stroke but the erased one.
    @Test func eraseThenTrashDocumentWhileAnotherEditsItResurrectsNothing() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Trashed", seed: 16)
        try await h.converge()
        let erased = initial[1][0]
        let pieces = try await edit(h.libraries[0], doc) { s in
            try await s.erase(stroke: erased, keeping: [0..<5, 15..<20], on: await s.pageIDs()[1])
        }
        try await h.libraries[0].moveToTrash(doc)
        let added = try await addStrokes(h.libraries[1], doc, page: 1, count: 2, seed: 160)
        try await h.converge()
        let c = try await h.checkConverged()
        let d = try #require(c.documents[doc], "the document drawn on elsewhere did not come back")
        #expect(!d.allElements.contains(erased), "the erased stroke came back")
        #expect(d.allElements == Set(initial.joined()).subtracting([erased]).union(pieces).union(added))
    }

    /// Erased on one device while another moves the document to the trash and, after syncing,
    /// restores it from there (its copy still holding the stroke): the stroke stays erased.
    @Test func eraseOnADocumentAnotherDeviceRestoresFromTheTrash() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Restored", seed: 17)
        try await h.converge()
        let erased = initial[0][0]
        // Erased whole (no pieces: no new stamp), so the deletion covers every stamp and wins.
        try await edit(h.libraries[0], doc) { s in _ = try await s.erase(stroke: erased, keeping: [], on: await s.pageIDs()[0]) }
        try await h.libraries[1].moveToTrash(doc)
        try await h.sync(1)
        try await h.sync(0)
        try await h.sync(1)
        #expect(try await h.libraries[0].trashedDocuments().map(\.id) == [doc])
        try await h.libraries[1].restoreFromTrash(doc)
        try await h.converge()
        let c = try await h.checkConverged()
        let d = try #require(c.documents[doc], "the restored document is not everywhere")
        #expect(!d.allElements.contains(erased), "the erased stroke came back")
        #expect(d.allElements == Set(initial.joined()).subtracting([erased]))
    }

    /// A page removed (as repair removes an unreadable one, its file kept in recovered/), the
    /// removal synced (its strokes tombstoned everywhere, §5.4), then put back from recovered/:
    /// its strokes come back under new ids on every library, none dropped by the next round.
    @Test func aPageRestoredFromRecoveredAfterItsRemovalSyncedComesBackEverywhere() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Restored page", pages: 3, seed: 18)
        try await h.converge()
        let lib = h.libraries[0]
        let page = try await edit(lib, doc) { s in await s.pageIDs()[1] }
        let pkg = lib.package(doc)
        try FileManager.default.createDirectory(atPath: pkg.recoveredPath, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pkg.pagePath(page), toPath: pkg.recoveredPath + "/" + page.uuidString + ".content")
        try await edit(lib, doc) { s in try await s.removePage(page) }
        try await h.converge()
        #expect(try await h.checkConverged().documents[doc]!.pages.count == 2)
        let restored = try await lib.restorePage(doc, from: page.uuidString + ".content")
        #expect(restored.restored == initial[1].count)
        try await h.converge()
        let c = try await h.checkConverged()
        let d = c.documents[doc]!
        let i = try #require(d.pages.firstIndex(of: restored.page), "the restored page is not everywhere")
        #expect(d.elements[i].count == initial[1].count, "restored strokes were dropped")
        #expect(Set(d.elements[i]).isDisjoint(with: initial[1]))
    }

    @Test(arguments: kinds)
    func reorderVersusInsertAndTitles(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (doc, _) = try await makeDocument(h.libraries[0], title: "Order", pages: 4, strokes: 1, seed: 6)
        try await h.converge()
        let before = try await edit(h.libraries[0], doc) { s in await s.pageIDs() }
        try await edit(h.libraries[0], doc) { s in
            try await s.movePage(before[3], to: 0)
            try await s.rename(to: "Order (A)")
        }
        let inserted = try await edit(h.libraries[1], doc) { s in try await s.addPage(at: 2) }
        try await h.sync(0)
        try await edit(h.libraries[1], doc) { s in try await s.rename(to: "Order (B, later)") }
        try await h.sync(1)
        try await h.converge()
        let c = try await h.checkConverged()
        let pages = c.documents[doc]!.pages
        #expect(pages.count == 5)
        #expect(pages.first == before[3])
        let i = pages.firstIndex(of: inserted)!
        #expect(pages[i - 1] == before[1] && pages[i + 1] == before[2])
        #expect(c.documents[doc]!.title == "Order (B, later)")
    }

    @Test(arguments: kinds)
    func documentDeletedVersusEditedAndDeletedToTrash(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (kept, _) = try await makeDocument(h.libraries[0], title: "Kept", seed: 7)
        let (gone, _) = try await makeDocument(h.libraries[0], title: "Gone", seed: 8)
        try await h.converge()
        // `kept`: trashed on A while B draws on it: it comes back on A. `gone`: trashed on A only.
        try await h.libraries[0].moveToTrash(kept)
        try await h.libraries[0].moveToTrash(gone)
        let added = try await addStrokes(h.libraries[1], kept, page: 0, count: 2, seed: 70)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[kept] != nil)
        #expect(Set(c.documents[kept]!.elements.joined()).isSuperset(of: added))
        #expect(c.documents[gone] == nil)
        #expect(try await h.libraries[1].trashedDocuments().map(\.id).contains(gone), "a deleted document must go to the trash")
    }

    @Test(arguments: kinds)
    func massDeletionStopsBeforeAnythingChanges(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        var ids: [UUID] = []
        for i in 0..<4 { ids.append(try await makeDocument(h.libraries[0], title: "Doc \(i)", pages: 1, strokes: 1, seed: 80 + UInt64(i)).0) }
        try await h.converge()
        for id in ids { try await h.libraries[0].moveToTrash(id) }
        try await h.sync(0)
        var strict = testSyncOptions
        strict.trashLimit = 2
        await #expect(throws: SyncError.self) { try await h.libraries[1].sync(with: h.remotes[1], options: strict) }
        #expect(try await h.libraries[1].documents().count == 4)
        // Asked and answered: a larger limit goes ahead.
        try await h.sync(1)
        #expect(try await h.libraries[1].documents().isEmpty)
        #expect(try await h.libraries[1].trashedDocuments().count == 4)
    }

    @Test func aDocumentOpenInAnotherProcessIsSkippedAndSyncedWhenClosed() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let (doc, _) = try await makeDocument(h.libraries[0], title: "Open", seed: 9)
        try await h.converge()
        let added = try await addStrokes(h.libraries[0], doc, page: 0, count: 1, seed: 90)
        try await h.sync(0)
        // Another process's session: its writer lock, and no session of this process to merge into.
        let lib = h.libraries[1]
        let lock = try lib.fileSystem.lock(lib.package(doc).lockPath)
        let r = try await h.libraries[1].sync(with: h.remotes[1], options: testSyncOptions)
        #expect(r.skipped[doc] != nil)
        lib.fileSystem.unlock(lock)
        try await h.sync(1)
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements.isSuperset(of: added))
    }

    @Test func aDamagedHeadOrAMissingBlobIsLeftOutReportedAndBothKept() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Damaged", seed: 13)
        try await h.converge()
        let remote = FolderRemote(root: h.remoteFolder)
        // A head that does not parse, and a well-formed head naming a blob that is not there.
        try await remote.put("heads/" + Head.fileName(document: doc, device: UUID()), Array("not a head".utf8))
        var rng = TestRandom(seed: 14)
        let other = UUID()
        let ghostPage = rng.uuid()
        var ghost = Head(document: doc, device: other, clock: 99, title: Register("Ghost", stamp: Stamp(clock: 99, device: other)),
                         origin: DocumentOrigin(created: 0, engine: "snapshot", codec: "compact"), deleted: nil)
        ghost.pages = [ghostPage: HeadPage(fields: Register(PageFields(key: PositionKey([9]), width: 100, height: 100),
                                                             stamp: Stamp(clock: 99, device: other)),
                                           removed: nil, blob: BlobName(of: [1, 2, 3]))]
        try await remote.put("heads/" + Head.fileName(document: doc, device: other), ghost.encode())
        let added = try await addStrokes(h.libraries[1], doc, page: 0, count: 1, seed: 130)
        for i in [1, 0] {
            let r = try await h.libraries[i].sync(with: h.remotes[i], options: testSyncOptions)
            #expect(r.problems.count == 2, "\(r.problems)")
        }
        let c = try await contents(of: h.libraries[0])
        #expect(c.documents[doc]!.title == "Damaged", "a head left out must not win")
        #expect(!c.documents[doc]!.pages.contains(ghostPage))
        #expect(c.documents[doc]!.allElements == Set(initial.joined() + added))
    }

    @Test func aTransformKeepsItsIdAndArrivesWithItsNewSamples() async throws {
        let h = try SyncHarness(.folder, libraries: 3)
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "Move", pages: 1, strokes: 3, seed: 15)
        try await h.converge()
        let moved = initial[0][1]
        try await edit(h.libraries[1], doc) { s in
            try await s.transform([moved], by: .translation(dx: 300, dy: -200), on: await s.pageIDs()[0])
        }
        let added = try await addStrokes(h.libraries[0], doc, page: 0, count: 1, seed: 150)
        try await h.sync(1)
        try await h.sync(0)  // merges B's transform with its own stroke: a new blob of A's
        try await h.converge()
        _ = try await h.checkConverged()
        var pages: [PageContent] = []
        for lib in h.libraries { pages.append(try await edit(lib, doc) { s in try await s.content(of: await s.pageIDs()[0]) }) }
        #expect(pages[0] == pages[1] && pages[1] == pages[2], "the same ids with different samples")
        #expect(pages[0].elements.map(\.id).contains(added[0]))
        let original = try await edit(h.libraries[1], doc) { s in try await s.content(of: await s.pageIDs()[0]) }
        #expect(original.elements.first { $0.id == moved } == pages[0].elements.first { $0.id == moved })
    }

    @Test func aCancelledRoundStopsBetweenDocumentsAndTheNextOneFinishes() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        for i in 0..<6 { _ = try await makeDocument(h.libraries[0], title: "Doc \(i)", pages: 1, strokes: 2, seed: 200 + UInt64(i)) }
        let lib = h.libraries[0], remote = h.remotes[0]
        let task = Task { try await lib.sync(with: remote, options: testSyncOptions) { p in
            if p.done == 2 { withUnsafeCurrentTask { $0?.cancel() } }
        } }
        await #expect { try await task.value } throws: { e in
            if case .cancelled = e as? SyncError { return true }
            return false
        }
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents.count == 6)
    }

    @Test(arguments: kinds)
    func anImageArrivesWithItsAssetBeforeThePageThatShowsIt(kind: RemoteKind) async throws {
        let h = try SyncHarness(kind, libraries: 2)
        defer { h.stop() }
        let (doc, _) = try await makeDocument(h.libraries[0], title: "Pictures", pages: 1, strokes: 1, seed: 16)
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let image = try await edit(h.libraries[0], doc) { s in
            try await s.insertImage(bytes, fileExtension: "png", frame: QuantizedRect(x: 10, y: 20, width: 300, height: 200), on: await s.pageIDs()[0])
        }
        try await h.converge()
        _ = try await h.checkConverged()
        let other = h.libraries[1].package(doc)
        #expect(FileManager.default.contents(atPath: other.assetPath(image.assetID, ext: "png")) == bytes)
        let page = try await edit(h.libraries[1], doc) { s in try await s.content(of: await s.pageIDs()[0]) }
        #expect(page.images.first == image)
    }

    @Test func theSQLiteEngineSyncsLikeTheOthers() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let (doc, initial) = try await makeDocument(h.libraries[0], title: "SQL", engine: .sqlite, seed: 12)
        try await h.converge()
        let added = try await addStrokes(h.libraries[1], doc, page: 1, count: 2, seed: 120)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(initial.joined() + added))
    }
}

/// Three libraries through one server at once (strokes on one page, a stroke erased and its page
/// removed while another library draws on it), then idle: converged, nothing lost or resurrected,
/// and a round where nothing changed is one request. On a server that lists no ETag (nginx) a
/// head's change token is given once it is 2 s old (`WebDAVRemote.changeToken`): the heads are
/// awaited (the listing polled, bounded), one round takes their tokens, then rounds are one request.
func threeLibrariesThroughAServer(_ kind: RemoteKind) async throws {
    let h = try SyncHarness(kind, libraries: 3)
    defer { h.stop() }
    let (doc, initial) = try await makeDocument(h.libraries[0], title: "Shared", pages: 3, seed: 20)
    try await h.converge()
    let erased = initial[2][0]
    var added = try await addStrokes(h.libraries[0], doc, page: 0, count: 3, seed: 21)
    try await edit(h.libraries[1], doc) { s in
        let page = await s.pageIDs()[2]
        _ = try await s.erase(stroke: erased, keeping: [0..<5], on: page)
        try await s.removePage(page)
    }
    added += try await addStrokes(h.libraries[2], doc, page: 2, count: 2, seed: 22)
    added += try await addStrokes(h.libraries[2], doc, page: 0, count: 2, seed: 23)
    async let r0 = h.libraries[0].sync(with: h.remotes[0], options: testSyncOptions)
    async let r1 = h.libraries[1].sync(with: h.remotes[1], options: testSyncOptions)
    async let r2 = h.libraries[2].sync(with: h.remotes[2], options: testSyncOptions)
    for r in try await [r0, r1, r2] { #expect(r.problems.isEmpty && r.skipped.isEmpty, "\(r.problems) \(r.skipped)") }
    try await h.converge()
    let c = try await h.checkConverged()
    let all = c.documents[doc]!.allElements
    #expect(all.isSuperset(of: added), "lost: \(Set(added).subtracting(all))")
    #expect(!all.contains(erased), "the erased stroke came back")
    #expect(all.isSuperset(of: initial[0] + initial[1]))
    // Idle.
    let watcher = try h.makeRemote()
    for _ in 0..<150 where try await watcher.list("heads").contains(where: { $0.etag == nil }) { try await Task.sleep(for: .milliseconds(100)) }
    for i in 0..<3 { try await h.sync(i) }
    for i in 0..<3 {
        let r = try await h.sync(i)
        #expect(r.requests == 1, "\(kind): library \(i)'s round with nothing changed made \(r.requests) requests")
    }
}

/// The three-library scenario through each WebDAV server the tests can start (skipped, and
/// reported so, where one is not installed).
@Suite(.serialized) struct WebDAVServersSyncTests {
    init() { Library.enableSQLiteEngine() }
    @Test(.enabled(if: ApacheServer.isAvailable, "apache2 with mod_dav is not installed (apt-get install apache2-bin)"))
    func apache() async throws { try await threeLibrariesThroughAServer(.webdav) }
    @Test("nginx + dav-ext", .enabled(if: WebDAVServer.Kind.nginx.isAvailable, Comment(rawValue: WebDAVServer.Kind.nginx.missing)))
    func nginx() async throws { try await threeLibrariesThroughAServer(.nginx) }
    @Test("lighttpd mod_webdav", .enabled(if: WebDAVServer.Kind.lighttpd.isAvailable, Comment(rawValue: WebDAVServer.Kind.lighttpd.missing)))
    func lighttpd() async throws { try await threeLibrariesThroughAServer(.lighttpd) }
    @Test("rclone serve webdav", .enabled(if: WebDAVServer.Kind.rclone.isAvailable, Comment(rawValue: WebDAVServer.Kind.rclone.missing)))
    func rclone() async throws { try await threeLibrariesThroughAServer(.rclone) }
}

/// The same scenarios through a real Apache mod_dav server on 127.0.0.1.
@Suite(.serialized, .enabled(if: ApacheServer.isAvailable, "apache2 with mod_dav is not installed (apt-get install apache2-bin)"))
struct WebDAVSyncTests {
    init() { Library.enableSQLiteEngine() }
    @Test func twoLibrariesConvergeAndANoChangeRoundIsOneRequest() async throws { try await LibrarySyncTests().twoLibrariesConvergeAndANoChangeRoundIsOneRequest(kind: .webdav) }
    @Test func threeLibrariesWithConcurrentStrokesOnOnePage() async throws { try await LibrarySyncTests().threeLibrariesWithConcurrentStrokesOnOnePage(kind: .webdav) }
    @Test func eraseVersusAddAndBothErase() async throws { try await LibrarySyncTests().eraseVersusAddAndBothErase(kind: .webdav) }
    @Test func deletePageVersusEditPageKeepsTheEdit() async throws { try await LibrarySyncTests().deletePageVersusEditPageKeepsTheEdit(kind: .webdav) }
    @Test func reorderVersusInsertAndTitles() async throws { try await LibrarySyncTests().reorderVersusInsertAndTitles(kind: .webdav) }
    @Test func documentDeletedVersusEditedAndDeletedToTrash() async throws { try await LibrarySyncTests().documentDeletedVersusEditedAndDeletedToTrash(kind: .webdav) }
    @Test func massDeletionStopsBeforeAnythingChanges() async throws { try await LibrarySyncTests().massDeletionStopsBeforeAnythingChanges(kind: .webdav) }
    @Test func anImageArrivesWithItsAssetBeforeThePageThatShowsIt() async throws {
        try await LibrarySyncTests().anImageArrivesWithItsAssetBeforeThePageThatShowsIt(kind: .webdav)
    }
}
