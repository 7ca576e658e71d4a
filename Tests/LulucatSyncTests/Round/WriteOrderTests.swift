// The order of a round's writes (docs/sync.md §6 step 5.5): blobs may go up before the listing is
// in and while the base is written, but a head's PUT starts only once every blob it names was
// acknowledged and the base it came from is durable; a blob that fails stops the head.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

/// A folder remote that records each PUT's start and end, holds blob PUTs back a while (so a head
/// sent too early would overtake them) and checks, when a head's PUT starts, what must be true then.
private final class OrderRemote: Remote, @unchecked Sendable {
    let inner: FolderRemote
    let lock = NSLock()
    var events: [String] = []
    var failBlobs = false
    var blobDelay: Duration = .milliseconds(60)
    /// Runs when a head's PUT starts, with the bytes of the head.
    var atHeadPut: (String, [UInt8]) -> Void = { _, _ in }
    var statistics: RemoteStatistics { inner.statistics }
    var identity: String { inner.identity }

    init(root: String) { inner = FolderRemote(root: root) }

    func record(_ e: String) { lock.withLock { events.append(e) } }
    var log: [String] { lock.withLock { events } }

    func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        // Slow, so that what a round does while it waits shows in the log.
        try? await Task.sleep(for: .milliseconds(60))
        let entries = try await inner.list(folder)
        record("listed \(folder)")
        return entries
    }
    func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) { try await inner.get(path, maxBytes: maxBytes) }
    func delete(_ path: String) async throws(RemoteError) { try await inner.delete(path) }
    func makeFolder(_ path: String) async throws(RemoteError) { try await inner.makeFolder(path) }

    func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        record("start \(path)")
        if path.hasPrefix("blobs/") {
            try? await Task.sleep(for: blobDelay)
            if lock.withLock({ failBlobs }) {
                record("failed \(path)")
                throw .failed(path, "refused by the test")
            }
        } else {
            atHeadPut(path, bytes)
        }
        try await inner.put(path, bytes)
        record("done \(path)")
    }
}

@Suite(.serialized) struct WriteOrderTests {
    /// `openInTheApp`: the document is open in this process all along, so the round is not
    /// prepared before the listing (it merges through the app's session once the listing is in).
    @Test(arguments: [false, true])
    func aHeadGoesUpOnlyAfterItsBlobsAndItsDurableBase(openInTheApp: Bool) async throws {
        let folder = temporaryFolder("order-remote")
        let lib = Library(root: temporaryFolder("order-lib"))
        defer { for p in [folder, lib.root] { try? FileManager.default.removeItem(atPath: p) } }
        let remote = OrderRemote(root: folder)
        let options = testSyncOptions
        let doc = try await lib.createDocument(title: "Order").id
        let app: DocumentSession? = openInTheApp ? try await lib.open(doc) : nil
        func draw(_ stroke: Stroke) async throws {
            if let app { try await app.append(stroke, to: await app.pageIDs()[0]) }
            else { try await edit(lib, doc) { s in try await s.append(stroke, to: await s.pageIDs()[0]) } }
        }
        var rng = TestRandom(seed: 31)
        var checks = 0
        remote.atHeadPut = { path, bytes in
            // Every blob PUT begun so far has been acknowledged.
            let log = remote.log
            let started = log.filter { $0.hasPrefix("start blobs/") }.map { String($0.dropFirst(6)) }
            let done = Set(log.filter { $0.hasPrefix("done blobs/") }.map { String($0.dropFirst(5)) })
            #expect(started.allSatisfy { done.contains($0) }, "a head before its blobs: \(log)")
            // The base on disk is this head's, unpublished (written before the head, §6 5.5).
            let base = SyncStateStore(library: lib).base(doc)
            #expect(base?.head.encode() == bytes && base?.published == false, "the base is not ahead of the head")
            // Every blob the head names is on the remote already.
            if let head = try? Head.decode(bytes) {
                for p in head.pages.values {
                    #expect(FileManager.default.fileExists(atPath: folder + "/blobs/" + p.blob.hex), "head names a missing blob")
                }
            }
            checks += 1
        }
        for round in 0..<3 {
            try await draw(makeStroke(&rng))
            let r = try await lib.sync(with: remote, options: options)
            // Closed and never synced, the first round opens a session; then the lock alone.
            #expect(r.paths[doc] == (openInTheApp ? .appSession : round == 0 ? .session : .underLock), "\(r.paths)")
            #expect(r.problems.isEmpty && r.skipped.isEmpty, "\(r)")
            #expect(r.blobsUploaded == 1 && r.pagesPushed == 1, "round \(round): \(r)")
        }
        #expect(checks == 3)
        // With speculation the last round's blob PUT started before the listing of heads answered;
        // open in the app, after it.
        let log = remote.log
        let listedAt = try #require(log.lastIndex(of: "listed heads"))
        let blobAt = try #require(log.lastIndex { $0.hasPrefix("start blobs/") })
        #expect(openInTheApp ? blobAt > listedAt : blobAt < listedAt, "\(log.suffix(8))")

        // A blob that fails: no head PUT in that round, the base stays unpublished, and the next
        // round publishes it.
        remote.lock.withLock { remote.failBlobs = true }
        try await draw(makeStroke(&rng))
        let before = remote.log.count
        let failed = try await lib.sync(with: remote, options: options)
        #expect(failed.skipped[doc] != nil, "\(failed)")
        #expect(!remote.log[before...].contains { $0.hasPrefix("start heads/") }, "\(remote.log[before...])")
        #expect(SyncStateStore(library: lib).base(doc)?.published == false)
        remote.lock.withLock { remote.failBlobs = false }
        let again = try await lib.sync(with: remote, options: options)
        #expect(again.skipped.isEmpty && again.blobsUploaded >= 1, "\(again)")
        #expect(SyncStateStore(library: lib).base(doc)?.published == true)
        #expect(checks == 4)
        #expect(try await lib.sync(with: remote, options: options).requests == 1)
        try await app?.close()
    }

    /// A document prepared before the listing, whose head changed on another device meanwhile: the
    /// prepared work is let go and the document merged; nothing lost on either side.
    @Test func aPreparedDocumentWhoseHeadChangedElsewhereIsMerged() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let a = h.libraries[0], b = h.libraries[1]
        let doc = try await a.createDocument(title: "Both").id
        var rng = TestRandom(seed: 32)
        var strokes: [UUID] = []
        func draw(_ lib: Library) async throws {
            let st = makeStroke(&rng)
            strokes.append(st.id)
            try await edit(lib, doc) { s in try await s.append(st, to: await s.pageIDs()[0]) }
        }
        try await draw(a)
        try await h.converge()
        try await draw(a)
        try await draw(b)
        try await h.sync(0)
        let r = try await h.sync(1)
        #expect(r.documentsMerged == 1, "\(r)")
        #expect(r.paths[doc] == .session, "merged through a session: \(r.paths)")
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements == Set(strokes))
    }
}
