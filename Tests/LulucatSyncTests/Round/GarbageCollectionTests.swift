// Garbage collection of unreferenced blobs (docs/sync.md §8) on a fake clock: nothing goes before
// the grace period, exactly the unreferenced blobs go after it, a blob written again starts its
// grace anew, and a head that cannot be read stops the collection before any delete.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

/// A clock the tests move by hand (garbage collection's grace, history's retention).
final class FakeClock: @unchecked Sendable {
    private let lock = NSLock()
    private var t = Date(timeIntervalSince1970: 1_800_000_000)
    var now: Date { lock.withLock { t } }
    func advance(days: Double) { lock.withLock { t += days * 86_400 } }
}

private func strokes(_ lib: Library, _ doc: UUID, _ n: Int, seed: UInt64) async throws -> [UUID] {
    try await drawStrokes(lib, doc, n, seed: seed)
}

/// Every blob some head names.
private func referencedBlobs(_ remote: any Remote) async throws -> Set<String> {
    var out = Set<String>()
    for e in try await remote.list("heads") where Head.parseFileName(e.name) != nil {
        let head = try Head.decode(try await remote.get("heads/" + e.name, maxBytes: Head.maxBytes).bytes)
        for p in head.pages.values { out.insert(p.blob.hex) }
        for a in head.assets.values { out.insert(a.blob.hex) }
    }
    return out
}

@Suite(.serialized) struct GarbageCollectionTests {
    /// A blob the server lost (a restore, a cleanup) is uploaded again by the device that holds
    /// it: its collection sees its own head name a blob the listing lacks, marks the base
    /// unpublished, and its next round codes and uploads the blob, then the head; a new device
    /// then converges (issue 30: the remote heals).
    @Test func aBlobLostOnTheServerIsUploadedAgainByItsDevice() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        var options = testSyncOptions
        options.garbage = nil
        let a = h.libraries[0]
        let doc = try await a.createDocument(title: "Lost and found").id
        let drawn = try await strokes(a, doc, 3, seed: 80)
        let picture = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        let image = try await edit(a, doc) { s in
            try await s.insertImage(picture, fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 100, height: 100), on: await s.pageIDs()[0])
        }
        try await h.sync(0, options: options)
        // The server loses every blob (a restore from an older backup, say).
        let blobs = h.remoteFolder + "/blobs"
        let lost = try FileManager.default.contentsOfDirectory(atPath: blobs)
        #expect(lost.count == 2, "the page and the image: \(lost)")
        for name in lost { try FileManager.default.removeItem(atPath: blobs + "/" + name) }

        let report = try await LibrarySync(library: a, remote: h.remotes[0]).collectGarbage()
        #expect(report.republished == [doc], "\(report)")
        let again = try await h.sync(0, options: options)
        #expect(again.blobsUploaded == 2, "\(again)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: blobs)) == Set(lost), "the same blobs, by the same names")
        #expect(try await LibrarySync(library: a, remote: h.remotes[0]).collectGarbage().republished.isEmpty)
        // A device that never saw the document gets all of it.
        try await h.sync(1, options: options)
        let c = try await contents(of: h.libraries[1])
        #expect(c.documents[doc]?.allElements == Set(drawn + [image.id]))
    }

    @Test func unreferencedBlobsGoAfterTheGracePeriodAndOnlyThey() async throws {
        let h = try SyncHarness(.folder, libraries: 2)
        let clock = FakeClock()
        let gc = GarbageOptions(grace: 7 * 86_400, interval: 86_400, now: { clock.now })
        var options = testSyncOptions
        options.garbage = nil  // collections are run by hand here
        // Earlier versions of a page are garbage only without history (HistoryTests has it on).
        options.history.retention = .keepNothing
        let doc = try await h.libraries[0].createDocument(title: "GC").id
        var all: [UUID] = []
        for i in 0..<3 {
            all += try await strokes(h.libraries[i % 2], doc, 2, seed: UInt64(70 + i))
            for l in 0..<2 { try await h.sync(l, options: options) }
        }
        let remote = FolderRemote(root: h.remoteFolder)
        let listed = Set(try await remote.list("blobs").map(\.name))
        let referenced = try await referencedBlobs(remote)
        let garbage = listed.subtracting(referenced)
        #expect(!garbage.isEmpty, "earlier versions of the page are unreferenced blobs")
        let sync0 = try LibrarySync(library: h.libraries[0], remote: h.remotes[0])
        // First seen: recorded, nothing deleted; still nothing a day before the grace ends.
        var r = try await sync0.collectGarbage(gc)
        #expect(r.deleted.isEmpty && r.waiting == garbage.count && r.referenced == referenced.count, "\(r)")
        clock.advance(days: 6)
        r = try await sync0.collectGarbage(gc)
        #expect(r.deleted.isEmpty, "\(r)")
        #expect(Set(try await remote.list("blobs").map(\.name)) == listed)
        // After the grace: exactly the unreferenced ones.
        clock.advance(days: 1.5)
        r = try await sync0.collectGarbage(gc)
        #expect(Set(r.deleted) == garbage, "\(r)")
        #expect(Set(try await remote.list("blobs").map(\.name)) == referenced)
        // The libraries still converge and hold every stroke; every head's blobs are there.
        all += try await strokes(h.libraries[1], doc, 1, seed: 79)
        try await h.converge()
        let c = try await h.checkConverged()
        #expect(c.documents[doc]!.allElements.isSuperset(of: all))
    }

    /// Temporary files of uploads left in blobs/ (a lost MOVE's `<hex>.<16 hex>.tmp`, nginx's
    /// `<hex>.NNNNNNNNNN` from a full disk) go after the same wait; other names stay.
    @Test func uploadDebrisGoesAfterTheGracePeriodAndOtherNamesStay() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        let clock = FakeClock()
        let gc = GarbageOptions(grace: 7 * 86_400, interval: 86_400, now: { clock.now })
        var options = testSyncOptions
        options.garbage = nil
        let doc = try await h.libraries[0].createDocument(title: "Debris").id
        _ = try await strokes(h.libraries[0], doc, 2, seed: 90)
        try await h.sync(0, options: options)
        let remote = FolderRemote(root: h.remoteFolder)
        let referenced = try await referencedBlobs(remote)
        let blob = try #require(referenced.first)
        let debris: Set = [blob + ".0123456789abcdef.tmp", blob + ".0000012345"]
        let others: Set = ["README", "zz.tmp", String(blob.dropLast()) + ".tmp"]
        for name in debris.union(others) { try await remote.put("blobs/" + name, [1, 2, 3]) }
        let sync0 = try LibrarySync(library: h.libraries[0], remote: h.remotes[0])
        var r = try await sync0.collectGarbage(gc)
        #expect(r.deleted.isEmpty && r.waiting == debris.count, "\(r)")
        clock.advance(days: 7.5)
        r = try await sync0.collectGarbage(gc)
        #expect(Set(r.deleted) == debris, "\(r)")
        #expect(Set(try await remote.list("blobs").map(\.name)) == referenced.union(others))
    }

    @Test func aBlobWrittenAgainStartsItsGraceAnewAndAnUnreadableHeadStopsTheCollection() async throws {
        let h = try SyncHarness(.folder, libraries: 1)
        let clock = FakeClock()
        let gc = GarbageOptions(grace: 7 * 86_400, now: { clock.now })
        let remote = FolderRemote(root: h.remoteFolder)
        try await remote.makeFolder("heads")
        try await remote.makeFolder("blobs")
        let bytes: [UInt8] = Array("an old page".utf8)
        let name = BlobName(of: bytes).hex
        try await remote.put("blobs/" + name, bytes)
        let sync = try LibrarySync(library: h.libraries[0], remote: h.remotes[0])
        var r = try await sync.collectGarbage(gc)
        #expect(r.waiting == 1 && r.deleted.isEmpty)
        clock.advance(days: 6)
        // Another device uploads the same bytes again (its head will name them): a new ETag.
        try await Task.sleep(for: .milliseconds(5))
        try await remote.put("blobs/" + name, bytes)
        r = try await sync.collectGarbage(gc)
        clock.advance(days: 2)
        r = try await sync.collectGarbage(gc)
        #expect(r.deleted.isEmpty, "the grace restarts when the blob is written again: \(r)")
        // A head that does not parse may name it: nothing is deleted, however late.
        try await remote.put("heads/" + Head.fileName(document: UUID(), device: UUID()), Array("not a head".utf8))
        clock.advance(days: 30)
        r = try await sync.collectGarbage(gc)
        #expect(r.stopped != nil && r.deleted.isEmpty, "\(r)")
        #expect(try await remote.list("blobs").map(\.name) == [name])
        // Without it, the blob goes.
        try await remote.delete("heads/" + (try await remote.list("heads"))[0].name)
        r = try await sync.collectGarbage(gc)
        #expect(r.deleted == [name], "\(r)")
    }
}
