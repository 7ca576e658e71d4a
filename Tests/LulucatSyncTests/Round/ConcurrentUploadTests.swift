// A document's blobs go up `Remote.concurrentTransfers` at a time after the first, which goes
// alone; the head only after all of them (docs/sync.md §6 step 5); a head's pages come down as
// many at a time; and the progress callback counts each page as its blob goes up or comes down
// (`SyncProgress.pagesMoved`).

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite(.serialized, .timeLimit(.minutes(3)))
struct ConcurrentUploadTests {
    /// A folder remote that takes four uploads at once and records, for each `create`, how many
    /// were under way when it started. A `create` waits (bounded) until as many are under way as
    /// the round can have (four, or the uploads not yet finished of the `total` expected; one for
    /// the first), or another under way with it has finished (which waited for the same), so the
    /// test sees the most the round starts, not how fast the disk is. Blob
    /// uploads fail with a full server when `full` is set. The head's `put` records how many
    /// uploads were still under way.
    final class WideRemote: Remote, @unchecked Sendable {
        let inner: FolderRemote
        private let lock = NSLock()
        private var inFlight = 0
        private var finished = 0
        private var total = 0
        private var starts: [Int] = []
        private var headPutsDuringUploads = 0
        private var _full = false
        private var fetching = 0
        private var fetched = 0
        private var fetchStarts: [Int] = []
        private var fetchPaths: [String] = []
        private var pageBlobs: Set<String> = []
        private var waitsPastBound = 0

        init(root: String) { inner = FolderRemote(root: root) }

        var statistics: RemoteStatistics { inner.statistics }
        var identity: String { inner.identity }
        var concurrentTransfers: Int { 4 }
        var record: (starts: [Int], headPutsDuringUploads: Int) { lock.withLock { (starts, headPutsDuringUploads) } }
        var full: Bool {
            get { lock.withLock { _full } }
            set { lock.withLock { _full = newValue } }
        }

        /// A round that uploads `total` blobs comes next: the counts start again.
        func expect(_ total: Int) {
            lock.withLock { (self.total, finished, starts, headPutsDuringUploads, fetched, fetchStarts) = (total, 0, [], 0, 0, []) }
        }
        /// For each fetch of a page blob, how many were under way when it started; the blobs fetched.
        var blobFetches: (starts: [Int], paths: [String]) { lock.withLock { (fetchStarts, fetchPaths) } }
        /// Waits that met their bound (the round started fewer at once than expected).
        var slowWaits: Int { lock.withLock { waitsPastBound } }
        /// The page blobs whose fetches are counted (and wait for each other): those on the remote now.
        func countFetchesOfTheBlobsHeld() throws {
            let names = try FileManager.default.contentsOfDirectory(atPath: inner.root + "/blobs")
            lock.withLock { pageBlobs = Set(names.map { "blobs/" + $0 }) }
        }

        func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] { try await inner.list(folder) }
        func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
            let (counted, fetchedBefore): (Bool, Int) = lock.withLock {
                fetchPaths.append(path)
                guard pageBlobs.contains(path) else { return (false, 0) }
                fetching += 1
                fetchStarts.append(fetching)
                return (true, fetched)
            }
            guard counted else { return try await inner.get(path, maxBytes: maxBytes) }
            defer { lock.withLock { fetching -= 1; fetched += 1 } }
            // As for uploads: as many under way as the round can have (four, or the rest).
            func enough() -> Bool { lock.withLock { fetching >= min(4, total - fetched) || fetched > fetchedBefore } }
            await wait(until: enough)
            return try await inner.get(path, maxBytes: maxBytes)
        }
        func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
            lock.withLock { if inFlight > 0 { headPutsDuringUploads += 1 } }
            try await inner.put(path, bytes)
        }
        func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
            let (isFull, first, finishedBefore) = lock.withLock {
                inFlight += 1
                starts.append(inFlight)
                return (_full, starts.count == 1, finished)
            }
            defer { lock.withLock { inFlight -= 1; finished += 1 } }
            if isFull { throw .refused(path, .storageFull) }
            // The event itself (as many under way as can be), with a generous bound.
            func enough() -> Bool { lock.withLock { first || inFlight >= min(4, total - finished) || finished > finishedBefore } }
            await wait(until: enough)
            try await inner.create(path, bytes)
        }

        /// The event itself, with a generous bound (counted when it is met).
        private func wait(until done: () -> Bool) async {
            let end = ContinuousClock.now + .seconds(20)
            while !done() && ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(2)) }
            if !done() { lock.withLock { waitsPastBound += 1 } }
        }
        func delete(_ path: String) async throws(RemoteError) { try await inner.delete(path) }
        func makeFolder(_ path: String) async throws(RemoteError) { try await inner.makeFolder(path) }
    }

    /// A library holding one document of `pages` pages, each with strokes of its own (so each page
    /// is a blob of its own).
    func notebook(_ label: String, pages: Int) async throws -> (Library, UUID) {
        let lib = Library(root: temporaryFolder(label))
        let doc = try await lib.createDocument(title: "Wide").id
        var rng = TestRandom(seed: 91)
        try await edit(lib, doc) { s in
            for _ in 1..<pages { _ = try await s.addPage() }
            for p in await s.pageIDs() { try await s.append(makeStroke(&rng), to: p) }
        }
        return (lib, doc)
    }

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [SyncProgress] = []
        func add(_ p: SyncProgress) { lock.withLock { all.append(p) } }
        var events: [SyncProgress] { lock.withLock { all } }
    }

    /// The events of one document count its pages one at a time, from 0 to `pages`, never past
    /// the pages to move, which end at `pages`.
    func countsEachPageOnce(_ events: [SyncProgress], _ pages: Int) -> Bool {
        let moved = events.map(\.pagesMoved)
        return moved.first == 0 && moved.last == pages && zip(moved, moved.dropFirst()).allSatisfy { $1 == $0 || $1 == $0 + 1 }
            && events.allSatisfy { $0.pagesMoved <= $0.pagesToMove } && events.last?.pagesToMove == pages
    }

    @Test func blobsGoUpFourAtOnceAfterTheFirstAndComeDownFourAtOnceWithEveryPageCounted() async throws {
        let (a, doc) = try await notebook("wide-a", pages: 11)
        let root = temporaryFolder("wide-remote"), b = Library(root: temporaryFolder("wide-b"))
        defer { for p in [a.root, root, b.root] { try? FileManager.default.removeItem(atPath: p) } }
        let remote = WideRemote(root: root)
        remote.expect(11)
        let pushed = Collected()
        let report = try await a.sync(with: remote, options: testSyncOptions) { pushed.add($0) }
        #expect(report.skipped.isEmpty && report.problems.isEmpty, "\(report)")
        #expect(report.pagesPushed == 11 && report.blobsUploaded == 11, "\(report)")
        let (starts, headDuring) = remote.record
        #expect(starts.count == 11, "\(starts)")
        #expect(starts.first == 1, "the first upload alone: \(starts)")
        #expect(starts.max() == 4, "four at once after the first, never more: \(starts)")
        #expect(headDuring == 0, "the head only once every blob was acknowledged")
        #expect(remote.slowWaits == 0, "every wait of the push ended by its event: \(starts)")
        // Every page counted once, in order, against the 11 to move.
        let mine = pushed.events.filter { $0.document == doc }
        #expect(countsEachPageOnce(mine, 11), "\(mine.map { ($0.pagesMoved, $0.pagesToMove) })")
        #expect(pushed.events.last.map { $0.document == nil && $0.done == $0.total } == true)

        // A new device fetches the 11 pages, four at a time, each counted as it comes down.
        remote.expect(11)
        try remote.countFetchesOfTheBlobsHeld()
        let pulled = Collected()
        let pull = try await b.sync(with: remote, options: testSyncOptions) { pulled.add($0) }
        #expect(pull.documentsPulled == 1 && pull.pagesPulled == 11, "\(pull)")
        let fetches = remote.blobFetches
        #expect(fetches.starts.count == 11 && fetches.starts.max() == 4, "\(fetches)")
        #expect(remote.slowWaits == 0, "every wait ended by its event: \(fetches.paths) \(remote.record) \(pull) \(fetches.starts)")
        let theirs = pulled.events.filter { $0.document == doc }
        #expect(countsEachPageOnce(theirs, 11), "\(theirs.map { ($0.pagesMoved, $0.pagesToMove) })")
        #expect(try await contents(of: b) == (try await contents(of: a)))
    }

    /// A server that refuses every write sees one upload, not four: the first goes alone.
    @Test func aFullServerSeesOneUploadOfTheDocument() async throws {
        let (a, doc) = try await notebook("wide-full-a", pages: 9)
        let root = temporaryFolder("wide-full-remote")
        defer { for p in [a.root, root] { try? FileManager.default.removeItem(atPath: p) } }
        let remote = WideRemote(root: root)
        remote.expect(9)
        remote.full = true
        let report = try await a.sync(with: remote, options: testSyncOptions)
        #expect(report.skipped[doc] != nil, "\(report)")
        #expect(remote.record.starts == [1], "\(remote.record.starts)")
        // Room again: the next round publishes all nine pages.
        remote.full = false
        remote.expect(9)
        let again = try await a.sync(with: remote, options: testSyncOptions)
        #expect(again.skipped.isEmpty && again.pagesPushed == 9, "\(again)")
    }
}
