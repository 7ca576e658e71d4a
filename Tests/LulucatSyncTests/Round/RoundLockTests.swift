// One round per library at a time (issue 30): a second round, in this process or another, waits for
// the one that runs (`SyncOptions.waitForOtherRound`) or, past the wait, does nothing and says so.

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing
import LulucatStoreTesting
@testable import LulucatSync

/// Opens once, for everyone waiting on it.
private actor Gate {
    private var open = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    func wait() async {
        if open { return }
        await withCheckedContinuation { waiters.append($0) }
    }
    func release() {
        open = true
        for w in waiters { w.resume() }
        waiters = []
    }
}

/// A folder remote whose first listing waits at the gate, and which counts its listings.
private final class GatedRemote: Remote, @unchecked Sendable {
    let inner: FolderRemote
    let gate = Gate()
    private let lock = NSLock()
    private var lists = 0
    var statistics: RemoteStatistics { inner.statistics }
    var identity: String { inner.identity }
    var listings: Int { lock.withLock { lists } }

    init(root: String) { inner = FolderRemote(root: root) }

    func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        let first = lock.withLock { lists += 1; return lists == 1 }
        if first { await gate.wait() }
        return try await inner.list(folder)
    }
    func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) { try await inner.get(path, maxBytes: maxBytes) }
    func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) { try await inner.put(path, bytes) }
    func delete(_ path: String) async throws(RemoteError) { try await inner.delete(path) }
    func makeFolder(_ path: String) async throws(RemoteError) { try await inner.makeFolder(path) }
}

private func isAnotherRoundRunning(_ e: any Error) -> Bool {
    if case .anotherRoundRunning = e as? SyncError { return true }
    return false
}

@Suite struct RoundLockTests {
    @Test func aSecondRoundOfTheSameLibraryWaitsOrDoesNothing() async throws {
        let folder = temporaryFolder("lock-remote")
        let lib = Library(root: temporaryFolder("lock-lib"))
        defer { for p in [folder, lib.root] { try? FileManager.default.removeItem(atPath: p) } }
        let doc = try await lib.createDocument(title: "Once at a time").id
        let remote = GatedRemote(root: folder)
        let first = Task { try await lib.sync(with: remote, options: testSyncOptions) }
        // The first round is in its listing (holding the library's round lock): wait for that event.
        await eventually(poll: .milliseconds(5)) { remote.listings > 0 }
        #expect(remote.listings == 1)

        // A second round that will not wait does nothing, and says why.
        var impatient = testSyncOptions
        impatient.waitForOtherRound = .zero
        let before = remote.statistics.requests
        await #expect { try await lib.sync(with: remote, options: impatient) } throws: { isAnotherRoundRunning($0) }
        #expect(remote.statistics.requests == before, "it made no request")
        #expect(SyncError.anotherRoundRunning.recoverySuggestion != nil)

        // One that waits runs once the first is done: both publish, one after the other.
        var patient = testSyncOptions
        patient.waitForOtherRound = .seconds(120)
        let second = Task { try await lib.sync(with: remote, options: patient) }
        await remote.gate.release()
        let r1 = try await first.value
        let r2 = try await second.value
        #expect(r1.documentsPushed == 1, "\(r1)")
        #expect(r2.documentsPushed == 0 && r2.requests == 1, "the second round found the first's work done: \(r2)")
        #expect(try await lib.sync(with: remote, options: impatient).requests == 1, "the lock is free again")
        _ = doc
    }

    @Test func aLockHeldElsewhereIsWaitedForThenTaken() async throws {
        let folder = temporaryFolder("lock-remote")
        let lib = Library(root: temporaryFolder("lock-lib"))
        defer { for p in [folder, lib.root] { try? FileManager.default.removeItem(atPath: p) } }
        _ = try await lib.createDocument(title: "Held")
        let store = SyncStateStore(library: lib)
        try store.prepare()
        // As another process holding the round lock would.
        let held = try lib.fileSystem.lock(store.roundLockPath)
        var impatient = testSyncOptions
        impatient.waitForOtherRound = .milliseconds(50)
        await #expect { try await lib.sync(with: FolderRemote(root: folder), options: impatient) } throws: { isAnotherRoundRunning($0) }
        #expect(!FileManager.default.fileExists(atPath: folder + "/heads"), "nothing reached the remote")
        lib.fileSystem.unlock(held)
        let r = try await lib.sync(with: FolderRemote(root: folder), options: impatient)
        #expect(r.documentsPushed == 1, "\(r)")
    }
}
