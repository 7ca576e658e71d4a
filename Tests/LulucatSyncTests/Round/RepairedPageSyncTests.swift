// A page salvaged by `lnote repair` is read by the next round like any edit (docs/sync.md §6 step
// 5.3): what the damage took is not an erasure, so it comes back from the blobs, here and on the
// other devices nothing is lost, and the devices converge.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreMaintenance
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite(.serialized) struct RepairedPageSyncTests {
    @Test func aRepairedPageIsReadByTheNextRoundAndWhatTheDamageTookComesBack() async throws {
        let remote = MemoryRemote()
        let a = Library(root: temporaryFolder("repair-a")), b = Library(root: temporaryFolder("repair-b"))
        defer { for l in [a, b] { try? FileManager.default.removeItem(atPath: l.root) } }
        let doc = try await a.createDocument(title: "Salvaged").id
        let drawn = try await drawStrokes(a, doc, 6, seed: 41, samples: 40)
        for l in [a, b, a] { _ = try await l.sync(with: remote, options: testSyncOptions) }

        // The page file of A is damaged inside its last stroke; repair salvages the others.
        let package = a.package(doc)
        let page = try await #require(try a.documents().first { $0.id == doc }).coverPageID!
        let path = package.pagePath(page)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 30] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.message.contains("5 elements salvaged, 1 lost") }, "\(findings)")
        let afterRepair = try await contents(of: a)
        #expect(afterRepair.documents[doc]?.allElements.count == 5)

        // Not "nothing to push": the salvaged page counts as changed here.
        let sync = try LibrarySync(library: a, remote: remote)
        #expect(try await sync.status().localChanges == [doc])
        // The round reads it, and takes back the lost stroke from the blob it published: no
        // erasure goes out.
        let r = try await sync.sync(options: testSyncOptions)
        #expect(r.problems.isEmpty && r.skipped.isEmpty, "\(r)")
        let healed = try await contents(of: a)
        #expect(healed.documents[doc]?.allElements == Set(drawn), "the lost stroke is back")
        _ = try await b.sync(with: remote, options: testSyncOptions)
        let other = try await contents(of: b)
        #expect(other.documents[doc]?.allElements == Set(drawn), "nothing lost on the other device")
        #expect(other == healed)
        // Settled: nothing to push or pull, verify clean, the next round is one request.
        let status = try await sync.status()
        #expect(status.localChanges.isEmpty && status.unpublished.isEmpty && status.remoteChanges == 0, "\(status)")
        #expect(DocumentVerifier(fileSystem: a.fileSystem).verify(package).filter { $0.severity == .error }.isEmpty)
        #expect(try await sync.sync(options: testSyncOptions).requests == 1)

        // An erasure after the repair is an erasure again (the salvage is older than the base).
        try await edit(a, doc) { s in try await s.delete([drawn[0]], from: page) }
        _ = try await sync.sync(options: testSyncOptions)
        _ = try await b.sync(with: remote, options: testSyncOptions)
        #expect(try await contents(of: b).documents[doc]?.allElements == Set(drawn.dropFirst()))
    }
}
