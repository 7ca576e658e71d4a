// A server that acknowledges every write and keeps nothing is noticed in the first round after
// the writes (docs/sync.md §6 step 1): our own heads must be in the next listing as written.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite struct BlackholeTests {
    @Test func aServerThatAcknowledgesAndDoesNotKeepIsNoticedInTheNextRound() async throws {
        let lib = Library(root: temporaryFolder("blackhole"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let doc = try await lib.createDocument(title: "Into the void").id
        var rng = TestRandom(seed: 3)
        try await edit(lib, doc) { s in try await s.append(makeStroke(&rng), to: await s.pageIDs()[0]) }
        let remote = MemoryRemote(blackhole: true)
        let sync = try LibrarySync(library: lib, remote: remote)
        let first = try await sync.sync(options: testSyncOptions)
        #expect(first.documentsPushed == 1, "acknowledged: \(first)")
        #expect(remote.storedFiles.isEmpty, "kept nothing")

        // The first round after the writes: our head is not in the listing.
        let head = "heads/" + Head.fileName(document: doc, device: sync.device)
        var caught: SyncError?
        do { _ = try await sync.sync(options: testSyncOptions) } catch { caught = error }
        guard case .notKept(let paths) = caught else { Issue.record("expected notKept, got \(String(describing: caught))"); return }
        #expect(paths == [head])
        #expect(caught!.localizedDescription.contains("acknowledged but did not keep"), "\(caught!.localizedDescription)")
        // Not "nothing to push": the document is to be published again.
        #expect(try await sync.status().unpublished == [doc])
        // Every round on the blackhole fails, none says pushed-and-done.
        await #expect(throws: SyncError.self) { try await sync.sync(options: testSyncOptions) }

        // The server keeps again: the next round still reports what the last one lost, and
        // writes the head and its blob back; the one after finds them and idles.
        remote.dropsWrites = false
        await #expect(throws: SyncError.self) { try await sync.sync(options: testSyncOptions) }
        #expect(remote.storedFiles[head] != nil)
        #expect(remote.storedFiles.keys.contains { $0.hasPrefix("blobs/") })
        let idle = try await sync.sync(options: testSyncOptions)
        #expect(idle.requests == 1, "an idle round stays one request: \(idle)")
        // A new device gets the stroke.
        let other = Library(root: temporaryFolder("blackhole-b"))
        defer { try? FileManager.default.removeItem(atPath: other.root) }
        let pulled = try await other.sync(with: remote, options: testSyncOptions)
        #expect(pulled.documentsCreated == 1 && pulled.problems.isEmpty, "\(pulled)")
    }

    @Test func ourHeadListedAtAnotherSizeFailsTheRoundAndIsWrittenAgain() async throws {
        let lib = Library(root: temporaryFolder("shortened"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let doc = try await lib.createDocument(title: "Cut short").id
        let remote = MemoryRemote()
        let sync = try LibrarySync(library: lib, remote: remote)
        _ = try await sync.sync(options: testSyncOptions)
        #expect(try await sync.sync(options: testSyncOptions).requests == 1)
        let head = "heads/" + Head.fileName(document: doc, device: sync.device)
        let written = try #require(remote.storedFiles[head])
        // The server keeps a truncated copy (a full disk that wrote part of it).
        try await remote.put(head, Array(written.prefix(10)))
        await #expect { try await sync.sync(options: testSyncOptions) } throws: { e in
            guard case .notKept(let paths) = e as? SyncError else { return false }
            return paths == [head]
        }
        // Written again in that round: the next one finds it as written and idles.
        #expect(remote.storedFiles[head] == written)
        let idle = try await sync.sync(options: testSyncOptions)
        #expect(idle.requests == 1, "\(idle)")
    }

    @Test func anotherRemoteGetsEveryDocumentInItsFirstRoundWithoutAnAlarm() async throws {
        let lib = Library(root: temporaryFolder("moved"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let docs = try (0..<3).map { try lib.createDocument(title: "Note \($0)").id }
        let first = MemoryRemote(), second = MemoryRemote()
        _ = try await lib.sync(with: first, options: testSyncOptions)
        // Another remote (lnote remote add OTHER): nothing changed here, yet everything goes there,
        // and it is not "the server did not keep": this library never wrote there.
        let moved = try await lib.sync(with: second, options: testSyncOptions)
        #expect(moved.problems.isEmpty && moved.skipped.isEmpty, "\(moved)")
        let device = try LibrarySync(library: lib, remote: second).device
        for d in docs { #expect(second.storedFiles["heads/" + Head.fileName(document: d, device: device)] != nil) }
        #expect(try await lib.sync(with: second, options: testSyncOptions).requests == 1)
        // The first remote, used again, holds what it held: one request, no alarm.
        #expect(try await lib.sync(with: first, options: testSyncOptions).requests == 1)
    }
}
