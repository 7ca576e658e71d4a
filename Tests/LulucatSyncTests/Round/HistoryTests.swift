// History (docs/sync.md §12) through real libraries: every published state of a page listed on
// every device at no request, read back, restored as a new edit that syncs and can be undone; a
// removed page and a deleted document brought back; history chunks after each 32 versions; garbage
// collection keeping what retention keeps and removing what it lets go; an encrypted remote; and
// a seeded crowd of three devices whose every published state stays restorable.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreThumbnails
import LulucatSyncTesting
import LulucatSyncTestSupport
import Testing
@testable import LulucatSync

/// The page's elements without their ids (a restore re-adds erased elements under new ids) and
/// their images' asset ids.
private func withoutIDs(_ content: PageContent) -> [Element] {
    content.elements.map { e in
        switch e {
        case .stroke(var s): s.id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)); return .stroke(s)
        case .image(var i):
            i.id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            i.assetID = i.id  // a document made again stores its images as new assets
            return .image(i)
        case .unknown: return e
        }
    }
}

private func pageContent(_ lib: Library, _ doc: UUID, page: UUID) async throws -> PageContent {
    try await edit(lib, doc) { s in try await s.content(of: page) }
}

private func firstPage(_ lib: Library, _ doc: UUID) async throws -> UUID {
    try await edit(lib, doc) { s in await s.pageIDs()[0] }
}

@Suite(.serialized) struct HistoryTests {
    /// Two devices: each state A published is listed on B, newest first, with A's name, at no
    /// request; the older one read back exactly; restored on B as a new edit (the erased stroke
    /// back under a new id), which syncs to A, is itself a version, and is undone by its changes.
    @Test func versionsAreListedEverywhereAndARestoreIsAnEditThatSyncsAndUndoes() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        var options = testSyncOptions
        options.history.deviceName = "Ada's iPad"
        let (a, b) = (h.libraries[0], h.libraries[1])
        let doc = try await a.createDocument(title: "Versions").id
        let page = try await firstPage(a, doc)
        let drawn = try await drawStrokes(a, doc, 3, seed: 351)
        try await h.sync(0, options: options)
        let three = try await pageContent(a, doc, page: page)
        try await edit(a, doc) { s in try await s.delete([drawn[1]], from: page) }
        try await h.sync(0, options: options)
        try await h.sync(1)

        let syncB = try LibrarySync(library: b, remote: h.remotes[1])
        let syncA = try LibrarySync(library: a, remote: h.remotes[0])
        let before = h.remotes[1].statistics.requests
        let versions = syncB.history(of: doc, page: page)
        #expect(h.remotes[1].statistics.requests == before, "listing costs no request")
        #expect(versions.map(\.strokes) == [2, 3], "\(versions)")
        #expect(versions.allSatisfy { $0.device == syncA.device && $0.deviceName == "Ada's iPad" && $0.pageIsLive && $0.page == page })
        #expect(versions[0].isCurrent && !versions[1].isCurrent)
        #expect(versions[0].time >= versions[1].time)
        #expect(syncB.history(of: doc) == versions, "one page: the same list")
        #expect(syncA.history(of: doc, page: page).map(\.id) == versions.map(\.id), "A lists what it published")

        // The older state, exactly as A had it; its thumbnail on demand, drawn from it.
        let old = try await syncB.content(of: doc, page: page, at: versions[1])
        #expect(old == three)
        Library.enableThumbnails()
        let thumb = try await syncB.thumbnail(of: doc, page: page, at: versions[1])
        #expect(thumb == (try ThumbnailWriter.jpeg(three, images: nil).data) && thumb.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(thumb != (try await syncB.thumbnail(of: doc, page: page, at: versions[0])))

        // Restored on B: a new edit; the erased stroke back under a new id.
        let restore = try await syncB.restore(page: page, of: doc, to: versions[1])
        #expect(!restore.isNewPage && restore.page == page)
        let restored = try await pageContent(b, doc, page: page)
        #expect(withoutIDs(restored) == withoutIDs(three))
        #expect(restored.elements.map(\.id).filter { $0 != drawn[1] }.count == 3)
        #expect(Set(restored.elements.map(\.id)).isSuperset(of: [drawn[0], drawn[2]]) && !restored.elements.map(\.id).contains(drawn[1]))
        try await h.sync(1, options: options)
        try await h.sync(0, options: options)
        #expect(withoutIDs(try await pageContent(a, doc, page: page)) == withoutIDs(three), "the restore reached A")
        #expect(syncA.history(of: doc, page: page).count == 3, "the restore is itself a version")

        // Undone: the changes it returned give the page back as it was before it.
        try await edit(b, doc) { s in _ = try await s.apply(restore.undo, to: page) }
        #expect(try await pageContent(b, doc, page: page).elements.map(\.id) == [drawn[0], drawn[2]])
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]?.elements == [[drawn[0], drawn[2]]])
        #expect(try await h.sync(0).requests == 1, "a round where nothing changed is one request")
    }

    /// Past 32 versions a device rolls its entries into a history chunk its head names (each
    /// chunk written once); a new device reads them in its first round and lists every version,
    /// the oldest readable.
    @Test func versionsRollIntoAHistoryBlobThatANewDeviceReads() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Forty").id
        let page = try await firstPage(a, doc)
        var contents: [PageContent] = []
        let syncA = try LibrarySync(library: a, remote: h.remotes[0])
        let remote = FolderRemote(root: h.remoteFolder)
        func headOfA() async throws -> Head {
            try Head.decode(try await remote.get("heads/" + Head.fileName(document: doc, device: syncA.device), maxBytes: Head.maxBytes).bytes)
        }
        var firstChunk: BlobName?
        for i in 0..<70 {
            _ = try await drawStrokes(a, doc, 1, seed: UInt64(1000 + i))
            try await h.sync(0)
            contents.append(try await pageContent(a, doc, page: page))
            if i == 32 { firstChunk = try await headOfA().history.chunks.first }
        }
        // Two chunks of 33 versions, the first written once and never again; 4 versions inline.
        let head = try await headOfA()
        #expect(head.history.chunks.count == 2 && head.history.chunks.first == firstChunk && head.history.entries.count == 70 - 66,
                "\(head.history.chunks.count) \(head.history.entries.count)")
        for c in head.history.chunks {
            let blob = try HistoryBlob.decode(try await remote.get("blobs/" + c.hex, maxBytes: HistoryBlob.maxBytes).bytes)
            #expect(blob.entries.count == 33 && blob.document == doc && blob.device == syncA.device)
        }

        let report = try await h.sync(1)
        #expect(report.problems.isEmpty, "\(report.problems)")
        let syncB = try LibrarySync(library: h.libraries[1], remote: h.remotes[1])
        let versions = syncB.history(of: doc, page: page)
        #expect(versions.count == 70)
        #expect(versions.map(\.strokes) == Array((1...70).reversed()))
        #expect(try await syncB.content(of: doc, page: page, at: versions.last!) == contents[0])
        #expect(try await syncB.content(of: doc, page: page, at: versions[20]) == contents[49])
        // `refresh` from nothing gives the same list (the local files removed).
        try FileManager.default.removeItem(atPath: h.libraries[1].root + "/.sync/history/\(doc.uuidString)")
        #expect(syncB.history(of: doc).isEmpty)
        let requests = try await syncB.refreshHistory(of: doc)
        #expect(requests == 1 + 2 + 2, "the listing, A's head and B's, A's two chunks: \(requests)")
        #expect(syncB.history(of: doc, page: page).map(\.id) == versions.map(\.id))
        // The local copy of one of A's chunks damaged: its versions are not listed until read
        // again; the others still are. A's head names it, so `refresh` reads it (only it).
        let copy = h.libraries[1].root + "/.sync/history/\(doc.uuidString)/chunks/\(firstChunk!.hex)"
        try Data([0x4C, 0x53, 0x48, 0x49, 9]).write(to: URL(fileURLWithPath: copy))
        #expect(syncB.history(of: doc, page: page).count == 70 - 33)
        #expect(try await syncB.refreshHistory(of: doc) == 4)
        #expect(syncB.history(of: doc, page: page).map(\.id) == versions.map(\.id))
        #expect(try await syncB.refreshHistory(of: doc) == 3, "held: the listing and the two heads")
    }

    /// Garbage collection keeps every blob a retained version names and removes, after the grace
    /// period, the versions retention let go.
    @Test func garbageCollectionKeepsRetainedVersionsAndRemovesWhatRetentionLetsGo() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        defer { h.stop() }
        let clock = FakeClock()
        var options = testSyncOptions
        options.garbage = nil
        options.history.now = { clock.now }
        let gc = GarbageOptions(grace: 7 * 86_400, interval: 86_400, now: { clock.now })
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Kept").id
        let page = try await firstPage(a, doc)
        for i in 0..<3 {
            _ = try await drawStrokes(a, doc, 1, seed: UInt64(2000 + i))
            try await h.sync(0, options: options)
            clock.advance(days: 1.0 / 1440)
        }
        let sync = try LibrarySync(library: a, remote: h.remotes[0])
        let first = sync.history(of: doc, page: page, options: options.history)
        #expect(first.count == 3)
        // Nothing unreferenced: every version is retained.
        var r = try await sync.collectGarbage(gc)
        #expect(r.waiting == 0 && r.deleted.isEmpty && r.referenced == 3, "\(r)")
        // Eight days on, a fourth version: the first three are one UTC day's, so only its
        // newest is kept; the two others are let go and collected after the grace period.
        clock.advance(days: 8)
        _ = try await drawStrokes(a, doc, 1, seed: 2010)
        try await h.sync(0, options: options)
        let later = sync.history(of: doc, page: page, options: options.history)
        #expect(later.map(\.strokes) == [4, 3], "\(later)")
        r = try await sync.collectGarbage(gc)
        #expect(r.waiting == 2 && r.deleted.isEmpty, "\(r)")
        clock.advance(days: 7.5)
        r = try await sync.collectGarbage(gc)
        #expect(Set(r.deleted) == Set(first.dropFirst().map(\.id)), "\(r)")
        for v in later { #expect(try await sync.content(of: doc, page: page, at: v).elements.count == v.strokes) }
        await #expect(throws: SyncError.self) { try await sync.content(of: doc, page: page, at: first[2]) }
    }

    /// A page removed on another device comes back from its last version as a new page; a
    /// document deleted everywhere (its trash emptied) comes back from what this device last
    /// synced, as a new document.
    @Test func aRemovedPageAndADeletedDocumentComeBack() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        defer { h.stop() }
        let (a, b) = (h.libraries[0], h.libraries[1])
        let doc = try await a.createDocument(title: "Two pages").id
        let second = try await edit(a, doc) { s in try await s.addPage() }
        _ = try await drawStrokes(a, doc, 2, seed: 360)
        var rng = TestRandom(seed: 361)
        let onSecond = makeStroke(&rng)
        try await edit(a, doc) { s in try await s.append(onSecond, to: second) }
        try await h.converge()
        let secondContent = try await pageContent(a, doc, page: second)
        try await edit(b, doc) { s in try await s.removePage(second) }
        try await h.converge()
        let syncA = try LibrarySync(library: a, remote: h.remotes[0])
        let versions = syncA.history(of: doc, page: second)
        #expect(versions.count == 1 && !versions[0].pageIsLive, "\(versions)")
        let restore = try await syncA.restore(page: second, of: doc, to: versions[0])
        #expect(restore.isNewPage && restore.page != second)
        let back = try await pageContent(a, doc, page: restore.page)
        #expect(withoutIDs(back) == withoutIDs(secondContent))
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]?.pages.count == 2)

        // An image between the first page's strokes, then the document deleted everywhere.
        let picture = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let first = try await firstPage(a, doc)
        try await edit(a, doc) { s in
            let image = try await s.insertImage(picture, fileExtension: "png", frame: QuantizedRect(x: 40, y: 50, width: 600, height: 400),
                                                rotation: 1500, on: first)
            try await s.move([image.id], to: .index(1), on: first)
        }
        try await h.converge()
        let pagesBefore = try await edit(a, doc) { s in
            var out: [PageContent] = []
            for p in await s.pageIDs() { out.append(try await s.content(of: p)) }
            return out
        }
        try await b.moveToTrash(doc)
        try await h.converge()
        try await a.emptyTrash()
        try await b.emptyTrash()
        #expect(try await a.documents().isEmpty)
        let made = try await syncA.restoreDocument(doc)
        #expect(made != doc)
        let (title, pagesAgain, pictureAgain) = try await edit(a, made) { s in
            var out: [PageContent] = []
            for p in await s.pageIDs() { out.append(try await s.content(of: p)) }
            let image = try #require(out[0].elements.compactMap(\.image).first)
            let data = try Data(contentsOf: URL(fileURLWithPath: try await s.assetPath(of: image)))
            return (await s.title, out, data)
        }
        #expect(title == "Two pages")
        // Strokes by id, the image in its place with its frame and its file (a new id and asset).
        #expect(pagesAgain.map(withoutIDs) == pagesBefore.map(withoutIDs))
        #expect(pagesAgain.map { $0.elements.compactMap(\.stroke).map(\.id) } == pagesBefore.map { $0.elements.compactMap(\.stroke).map(\.id) })
        #expect(pagesAgain[0].elements[1].image != nil && pictureAgain == picture)
        try await h.converge()
        #expect(try await contents(of: b).documents[made]?.elements.map(\.count) == pagesAgain.map(\.elements.count))
        await #expect(throws: SyncError.self) { try await syncA.restoreDocument(UUID()) }
    }

    /// A restore on a document open in the app goes through the app's session: the app sees it.
    @Test func anOpenSessionReceivesTheRestore() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        defer { h.stop() }
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Open").id
        let page = try await firstPage(a, doc)
        _ = try await drawStrokes(a, doc, 2, seed: 370)
        try await h.sync(0)
        let two = try await pageContent(a, doc, page: page)
        let session = try await a.open(doc, options: quietSession)
        let all = try await session.content(of: page).elements.map(\.id)
        try await session.delete(all, from: page)
        try await session.save()
        try await h.sync(0)
        let sync = try LibrarySync(library: a, remote: h.remotes[0])
        let versions = sync.history(of: doc, page: page)
        #expect(versions.map(\.strokes) == [0, 2])
        _ = try await sync.restore(page: page, of: doc, to: versions[1])
        #expect(withoutIDs(try await session.content(of: page)) == withoutIDs(two), "the app's session holds the restore")
        try await session.close()
        try await h.sync(0)
        #expect(sync.history(of: doc, page: page).map(\.strokes) == [2, 0, 2])
    }

    /// `.keepNothing` writes no history: heads stay version 1, nothing is listed.
    @Test func keepNothingWritesVersion1Heads() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        defer { h.stop() }
        var options = testSyncOptions
        options.history.retention = .keepNothing
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "None").id
        _ = try await drawStrokes(a, doc, 2, seed: 380)
        try await h.sync(0, options: options)
        let sync = try LibrarySync(library: a, remote: h.remotes[0])
        let bytes = try await FolderRemote(root: h.remoteFolder).get("heads/" + Head.fileName(document: doc, device: sync.device), maxBytes: Head.maxBytes).bytes
        #expect(bytes[4] == 1 && bytes[5] == 0)
        #expect(sync.history(of: doc).isEmpty)
    }

    /// On an encrypted remote history is sealed like the rest (names included): another device
    /// lists and reads it; the device's name is nowhere on the server in clear.
    @Test func historyOnAnEncryptedRemoteIsSealedAndReadable() async throws {
        let remoteFolder = temporaryFolder("hist-enc-remote")
        let a = Library(root: temporaryFolder("hist-enc-a")), b = Library(root: temporaryFolder("hist-enc-b"))
        defer { for p in [remoteFolder, a.root, b.root] { try? FileManager.default.removeItem(atPath: p) } }
        #expect(try await RemoteEncryption.setUp(library: a, remote: FolderRemote(root: remoteFolder), passphrase: passphrase, cost: testCost))
        #expect(try await !RemoteEncryption.setUp(library: b, remote: FolderRemote(root: remoteFolder), passphrase: passphrase, cost: testCost))
        var options = testSyncOptions
        options.history.deviceName = "Secret-Device-Name-7"
        let doc = try await a.createDocument(title: "Sealed").id
        let page = try await firstPage(a, doc)
        _ = try await drawStrokes(a, doc, 1, seed: 390)
        _ = try await a.sync(with: FolderRemote(root: remoteFolder), options: options)
        let one = try await pageContent(a, doc, page: page)
        _ = try await drawStrokes(a, doc, 1, seed: 391)
        _ = try await a.sync(with: FolderRemote(root: remoteFolder), options: options)
        let r = try await b.sync(with: FolderRemote(root: remoteFolder), options: testSyncOptions)
        #expect(r.problems.isEmpty, "\(r.problems)")
        let syncB = try LibrarySync(library: b, remote: FolderRemote(root: remoteFolder))
        let versions = syncB.history(of: doc, page: page)
        #expect(versions.map(\.strokes) == [2, 1] && versions.allSatisfy { $0.deviceName == "Secret-Device-Name-7" })
        #expect(try await syncB.content(of: doc, page: page, at: versions[1]) == one)
        let needle = Array("Secret-Device-Name-7".utf8)
        for case let file as String in FileManager.default.enumerator(atPath: remoteFolder)! {
            guard let bytes = FileManager.default.contents(atPath: remoteFolder + "/" + file) else { continue }
            #expect(!Array(bytes).contains(subsequence: needle), "\(file) holds the device name in clear")
            #expect(!Array(bytes).contains(subsequence: HistoryBlob.magic), "\(file) holds a history chunk in clear")
        }
    }

    /// A seeded crowd of three devices (drawing, erasing, adding and removing pages, two devices
    /// on one page between rounds): every page state any device published is listed on every
    /// device and reads back exactly, also after a garbage collection with no grace period; a
    /// restore converges everywhere.
    @Test func everyPublishedStateOfACrowdIsRestorable() async throws {
        let h = try SyncHarness(.folder, libraries: 3)
        defer { h.stop() }
        try await crowd(h, rounds: 36, seed: 3535)
    }

    /// The same crowd over Apache, library 0 through the fault proxy: uploads of blobs (history
    /// blobs among them) and heads cut halfway or their replies lost after the server committed.
    @Test(.enabled(if: ApacheServer.isAvailable, "apache2 with mod_dav is not installed (apt-get install apache2-bin)"))
    func everyPublishedStateOfACrowdIsRestorableThroughFaults() async throws {
        let h = try SyncHarness(.webdav, libraries: 3)
        let proxy = try FaultProxy(upstreamPort: h.server!.port)
        defer { proxy.stop(); h.stop() }
        h.remotes[0] = try WebDAVRemote(url: proxy.url, credentials: nil, timeout: 120)
        try await crowd(h, rounds: 60, seed: 3536) { rng in
            proxy.clearFaults()
            guard Bool.random(using: &rng) else { return }
            let fault: FaultProxy.Fault = Bool.random(using: &rng) ? .cutUpload : .dropReplyAfterCommit
            proxy.inject(fault, method: "PUT", pathContains: Bool.random(using: &rng) ? "/blobs/" : "/heads/")
        }
        #expect(proxy.injected > 3, "faults met: \(proxy.injected)")
    }

    /// Runs the crowd on `h` (library 0's rounds after `faults`, whose failed rounds are let be:
    /// what a device publishes is recorded only after a round that reported nothing).
    func crowd(_ h: SyncHarness, rounds: Int, seed: UInt64, faults: ((inout TestRandom) -> Void)? = nil) async throws {
        var rng = TestRandom(seed: seed)
        let doc = try await h.libraries[0].createDocument(title: "Crowd").id
        try await h.converge()
        var published: [UUID: [PageContent]] = [:]  // by page
        for _ in 0..<rounds {
            let i = Int.random(in: 0..<3, using: &rng)
            let lib = h.libraries[i]
            try await edit(lib, doc) { s in
                let pages = await s.pageIDs()
                let p = pages[Int.random(in: 0..<pages.count, using: &rng)]
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<5: try await s.append(makeStroke(&rng), to: p)
                case 5..<7:
                    let ids = try await s.content(of: p).elements.map(\.id)
                    if let e = ids.randomElement(using: &rng) { try await s.delete([e], from: p) }
                case 7: _ = try await s.addPage()
                case 8: if pages.count > 1 { try await s.removePage(p) }
                default:
                    try await s.append(makeStroke(&rng), to: p)
                    try await s.append(makeStroke(&rng), to: p)
                }
            }
            if i == 0, let faults { faults(&rng) }
            let r = try await lib.sync(with: h.remotes[i], options: testSyncOptions)
            guard r.skipped.isEmpty, r.problems.isEmpty else { continue }
            try await edit(lib, doc) { s in
                for p in await s.pageIDs() { published[p, default: []].append(try await s.content(of: p)) }
            }
        }
        try await h.converge()
        // No grace: everything unreferenced goes; what history names must stay.
        let collect = try LibrarySync(library: h.libraries[1], remote: h.remotes[1])
        _ = try await collect.collectGarbage(GarbageOptions(grace: 0))
        let gc = try await collect.collectGarbage(GarbageOptions(grace: 0))
        #expect(gc.stopped == nil, "\(gc)")
        var checked = 0
        for (k, lib) in h.libraries.enumerated() {
            let sync = try LibrarySync(library: lib, remote: h.remotes[k])
            var byPage: [UUID: [PageContent]] = [:]
            for v in sync.history(of: doc) { byPage[v.page, default: []].append(try await sync.content(of: doc, page: v.page, at: v)) }
            for (p, states) in published {
                for st in states {
                    #expect(byPage[p]?.contains(st) == true, "device \(k): a published state of page \(p) is not in history")
                    checked += 1
                }
            }
        }
        #expect(checked > 90, "\(checked)")
        // A restore of an old version converges on every device.
        let sync0 = try LibrarySync(library: h.libraries[0], remote: h.remotes[0])
        let live = try await contents(of: h.libraries[0]).documents[doc]!.pages
        let candidates = sync0.history(of: doc).filter { live.contains($0.page) && !$0.isCurrent }
        let v = try #require(candidates.randomElement(using: &rng))
        let target = try await sync0.content(of: doc, page: v.page, at: v)
        _ = try await sync0.restore(page: v.page, of: doc, to: v)
        try await h.converge()
        _ = try await h.checkConverged()
        for lib in h.libraries { #expect(withoutIDs(try await pageContent(lib, doc, page: v.page)) == withoutIDs(target)) }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence s: [UInt8]) -> Bool {
        guard !s.isEmpty, count >= s.count else { return false }
        for i in 0...(count - s.count) where self[i] == s[0] && Array(self[i..<(i + s.count)]) == s { return true }
        return false
    }
}
