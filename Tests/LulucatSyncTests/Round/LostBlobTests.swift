// A blob lost on the server comes back after one round of a device that holds it, once a device
// that needs it has asked (docs/sync.md §8.1); a new device then converges. A round where nothing
// changed and nobody asked stays one request.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite(.serialized) struct LostBlobTests {
    @Test func aLostBlobIsUploadedAgainByTheDeviceThatHoldsItAndANewDeviceConverges() async throws {
        let remote = MemoryRemote()
        let a = Library(root: temporaryFolder("lost-a")), b = Library(root: temporaryFolder("lost-b"))
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        let doc = try a.createDocument(title: "Lost and found").id
        let drawn = try await drawStrokes(a, doc, 3, seed: 31)
        let picture = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let image = try await edit(a, doc) { s in
            try await s.insertImage(picture, fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 100, height: 100), on: await s.pageIDs()[0])
        }
        _ = try await a.sync(with: remote, options: testSyncOptions)
        #expect(try await a.sync(with: remote, options: testSyncOptions).requests == 1)

        // The server loses every blob (a restore from an older backup, a cleanup).
        let blobs = remote.storedFiles.keys.filter { $0.hasPrefix("blobs/") }
        #expect(blobs.count == 2, "the page and the image: \(blobs)")
        for path in blobs { try await remote.delete(path) }

        // A new device cannot have the document; it says which blob of which page, and asks.
        let first = try await b.sync(with: remote, options: testSyncOptions)
        #expect(first.problems.count == 1, "\(first.problems)")
        #expect(first.problems.first?.contains("is missing on the server; the devices that hold it are asked to upload it again") == true, "\(first.problems)")
        let requests = remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }
        #expect(requests.count == 1, "\(requests)")
        // Asked again next round: no second request written while one is listed.
        let before = remote.statistics.requests
        _ = try await b.sync(with: remote, options: testSyncOptions)
        #expect(remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }.count == 1)
        #expect(remote.statistics.requests - before <= 3, "listing, the head, the blob: no PUT")

        // One round of the device that holds it: both blobs back, by the same names, the request gone.
        let healed = try await a.sync(with: remote, options: testSyncOptions)
        #expect(Set(healed.blobsRestored.map { "blobs/" + $0 }).isSubset(of: Set(blobs)) && !healed.blobsRestored.isEmpty, "\(healed)")
        #expect(Set(remote.storedFiles.keys.filter { $0.hasPrefix("blobs/") }) == Set(blobs), "the same blobs, by the same names")
        #expect(remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }.isEmpty)
        #expect(healed.problems.isEmpty && healed.skipped.isEmpty, "\(healed)")
        #expect(try await a.sync(with: remote, options: testSyncOptions).requests == 1, "idle again")

        // The new device converges in its next round.
        let second = try await b.sync(with: remote, options: testSyncOptions)
        #expect(second.problems.isEmpty && second.skipped.isEmpty, "\(second)")
        let c = try await contents(of: b)
        #expect(c.documents[doc]?.allElements == Set(drawn + [image.id]))
    }

    /// The same on an encrypted remote: the request is named by the blob's sealed name, the
    /// device that needs the blob goes on with the rest, and the holder serves it.
    @Test func onAnEncryptedRemoteALostBlobIsAskedForUnderItsSealedNameAndComesBack() async throws {
        let remote = MemoryRemote()
        let a = Library(root: temporaryFolder("lost-enc-a")), b = Library(root: temporaryFolder("lost-enc-b"))
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        let doc = try a.createDocument(title: "Sealed and found").id
        let drawn = try await drawStrokes(a, doc, 3, seed: 32)
        let other = try b.createDocument(title: "B's own").id
        for lib in [a, b] { try await RemoteEncryption.setUp(library: lib, remote: remote, passphrase: passphrase, cost: testCost) }
        _ = try await a.sync(with: remote, options: testSyncOptions)
        let blobs = remote.storedFiles.keys.filter { $0.hasPrefix("blobs/") }
        #expect(blobs.count == 1, "\(blobs)")
        for path in blobs { try await remote.delete(path) }

        // B cannot have A's document: it says so, asks under the sealed name, and its own
        // document still goes up (the round is not stopped).
        let first = try await b.sync(with: remote, options: testSyncOptions)
        #expect(first.problems.count == 1 && first.problems[0].contains("the devices that hold it are asked"), "\(first.problems)")
        #expect(first.documentsPushed == 1, "\(first)")
        let requests = remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }
        let key = try LocalEncryption.readKey(a)
        let published = try #require(SyncStateStore(library: a).baseHead(doc)?.pages.values.first?.blob)
        let sealed = try EncryptedRemote.sealedRequestName(key: key, document: doc, blob: published)
        #expect(requests == ["heads/" + sealed], "\(requests)")
        #expect(!requests[0].contains(doc.uuidString.lowercased()) && !requests[0].contains(doc.uuidString), "the request names the document")
        // Asked again next round: no second request while one is listed.
        _ = try await b.sync(with: remote, options: testSyncOptions)
        #expect(remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }.count == 1)

        // One round of A: the blob is back under its sealed name, the request gone.
        let healed = try await a.sync(with: remote, options: testSyncOptions)
        #expect(!healed.blobsRestored.isEmpty && healed.problems.isEmpty, "\(healed)")
        #expect(Set(remote.storedFiles.keys.filter { $0.hasPrefix("blobs/") }).isSuperset(of: Set(blobs)), "the same sealed name")
        #expect(remote.storedFiles.keys.filter { $0.hasSuffix(".lost") }.isEmpty)

        // B converges with A's document, and A gets B's.
        let second = try await b.sync(with: remote, options: testSyncOptions)
        #expect(second.problems.isEmpty && second.skipped.isEmpty, "\(second)")
        #expect(try await contents(of: b).documents[doc]?.allElements == Set(drawn))
        _ = try await a.sync(with: remote, options: testSyncOptions)
        #expect(try a.list().contains { $0.id == other })
    }

    @Test func aRequestNoDeviceHereCanServeIsLeftAndCostsNothing() async throws {
        let remote = MemoryRemote()
        let a = Library(root: temporaryFolder("lost-none"))
        defer { try? FileManager.default.removeItem(atPath: a.root) }
        let doc = try a.createDocument(title: "Intact").id
        _ = try await a.sync(with: remote, options: testSyncOptions)
        // Requests for a blob our head does not name, for a document we do not have, and a name
        // that is almost one: each ignored, the round stays one request.
        let stranger = LostBlobRequest.name(document: doc, blob: BlobName(of: [1]))
        let elsewhere = LostBlobRequest.name(document: UUID(), blob: BlobName(of: [2]))
        for name in [stranger, elsewhere, stranger.uppercased(), String(stranger.dropLast())] {
            try await remote.put("heads/" + name, [])
        }
        let r = try await a.sync(with: remote, options: testSyncOptions)
        #expect(r.requests == 1 && r.blobsRestored.isEmpty && r.problems.isEmpty, "\(r)")
        #expect(remote.storedFiles["heads/" + stranger] != nil, "left for a device that holds it")
    }

    @Test func requestNamesParseExactly() {
        let doc = UUID(), blob = BlobName(of: [9])
        let name = LostBlobRequest.name(document: doc, blob: blob)
        #expect(name.count == 106 && RemotePath.isSafeName(name))
        #expect(LostBlobRequest.parse(name)?.document == doc && LostBlobRequest.parse(name)?.blob == blob)
        for bad in [name + "x", String(name.dropFirst()), name.replacingOccurrences(of: ".lost", with: ".head"),
                    doc.uuidString + "." + blob.hex.uppercased() + ".lost", doc.uuidString + "-" + blob.hex + ".lost"] {
            #expect(LostBlobRequest.parse(bad) == nil, "\(bad)")
        }
    }
}
