// A failing upload is not sent twice in one round (docs/sync.md §7): the round remembers the
// uploads that failed, by blob and by document, so a document whose early upload failed is not
// uploaded again once merged.

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing
import LulucatStoreTesting
@testable import LulucatSync
import LulucatSyncTestSupport

@Suite(.serialized, .timeLimit(.minutes(3)))
struct FailedUploadTests {
    /// A folder remote whose blob uploads fail with a full server, counting them; its listing of
    /// heads can wait for the first upload to be tried, so that the round's early upload (sent
    /// while the listing is on its way) happens.
    final class FullRemote: Remote, @unchecked Sendable {
        let inner: FolderRemote
        private let lock = NSLock()
        private var _creates: [String] = []
        private var _full = false
        private var _holdListing = false
        private var holdFrom = 0
        private var _heldUntilUpload = false

        init(root: String) { inner = FolderRemote(root: root) }

        var creates: [String] { lock.withLock { _creates } }
        var full: Bool {
            get { lock.withLock { _full } }
            set { lock.withLock { _full = newValue } }
        }
        var holdListing: Bool {
            get { lock.withLock { _holdListing } }
            set {
                lock.withLock {
                    _holdListing = newValue
                    holdFrom = _creates.count
                }
            }
        }
        /// Whether a held listing saw an upload start before it answered.
        var heldUntilUpload: Bool { lock.withLock { _heldUntilUpload } }

        var statistics: RemoteStatistics { inner.statistics }
        var identity: String { inner.identity }

        func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] { try await list(folder, maxBytes: RemoteLimits.listingBytes) }
        func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry] {
            if holdListing {
                // The event itself, with a generous bound (the upload starts within milliseconds).
                let end = ContinuousClock.now + .seconds(120)
                func started() -> Bool { lock.withLock { _creates.count > holdFrom } }
                while !started() && ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(5)) }
                lock.withLock { _heldUntilUpload = _creates.count > holdFrom }
            }
            return try await inner.list(folder, maxBytes: maxBytes)
        }
        func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
            try await inner.get(path, maxBytes: maxBytes)
        }
        func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) { try await inner.put(path, bytes) }
        func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
            let full = lock.withLock {
                _creates.append(path)
                return _full
            }
            if full { throw .refused(path, .storageFull) }
            try await inner.create(path, bytes)
        }
        func delete(_ path: String) async throws(RemoteError) { try await inner.delete(path) }
        func makeFolder(_ path: String) async throws(RemoteError) { try await inner.makeFolder(path) }
    }

    /// A document changed here whose early upload failed (the server is full) and that another
    /// device changed too: its merge is not uploaded again in the same round. It is skipped with
    /// the cause in words, nothing is lost, and the next round (room again) publishes it.
    @Test func aFailingUploadIsNotSentTwiceInARound() async throws {
        let root = temporaryFolder("full-remote")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let a = Library(root: temporaryFolder("full-a")), b = Library(root: temporaryFolder("full-b"))
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        var rng = TestRandom(seed: 77)
        let doc = try await b.createDocument(title: "Shared").id
        try await edit(b, doc) { s in try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        let full = FullRemote(root: root)
        var options = testSyncOptions
        options.garbage = nil
        _ = try await b.sync(with: full, options: options)
        _ = try await a.sync(with: FolderRemote(root: root), options: options)
        // Both change it: A publishes first.
        try await edit(a, doc) { s in try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        _ = try await a.sync(with: FolderRemote(root: root), options: options)
        let mine = makeStroke(&rng)
        try await edit(b, doc) { s in try await s.append(mine, to: await s.pageIDs()[0]) }
        let before = full.creates.count
        full.full = true
        full.holdListing = true
        let report = try await b.sync(with: full, options: options)
        full.holdListing = false
        #expect(full.heldUntilUpload, "the early upload did not start before the listing answered")
        #expect(full.creates.count - before == 1, "uploads tried this round: \(full.creates.dropFirst(before))")
        #expect(report.skipped[doc]?.contains("out of storage") == true, "\(report.skipped)")
        #expect(report.skipped[doc]?.contains("may or may not") == false, "\(report.skipped)")
        #expect(try await contents(of: b).documents[doc]?.allElements.contains(mine.id) == true)
        // Room again: the next round publishes it, and A gets both strokes.
        full.full = false
        let again = try await b.sync(with: full, options: options)
        #expect(again.skipped.isEmpty && again.problems.isEmpty, "\(again)")
        _ = try await a.sync(with: FolderRemote(root: root), options: options)
        #expect(try await contents(of: a) == contents(of: b))
    }
}
