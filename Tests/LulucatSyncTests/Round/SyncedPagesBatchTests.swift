// New pages from sync go in by batches (`DocumentSession.insertSyncedPages`): the same pages in the
// same order as one `insertSyncedPage` after the other, one document.json write a batch, and a
// batch that cannot go in whole writes nothing.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing

@Suite struct SyncedPagesBatchTests {
    func files(under root: String) -> Set<String> {
        Set((FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? [])
    }

    func pages(_ n: Int, seed: UInt64) -> [(UUID, PageContent)] {
        var rng = TestRandom(seed: seed)
        return (0..<n).map { _ in
            let c = PageContent(canvasSize: .letter, elements: [.stroke(makeStroke(&rng))])
            return (rng.uuid(), c)
        }
    }

    @Test func aBatchIsTheSameAsOneAfterTheOtherAndABadOneWritesNothing() async throws {
        let lib = Library(root: temporaryFolder("batch"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        let made = pages(6, seed: 5)
        // Indices counted as one after the other: at the start, at the end, in the middle, past the end (refused below).
        let indices = [0, 0, 2, 3, 1, 5]
        let one = try await lib.createDocument(title: "One by one").id
        let batch = try await lib.createDocument(title: "Batch").id
        try await edit(lib, one) { s in
            for (k, (id, c)) in made.enumerated() { try await s.insertSyncedPage(id: id, content: c, at: indices[k] + 1) }
        }
        try await edit(lib, batch) { s in
            try await s.insertSyncedPages(made.enumerated().map { k, p in (p.0, p.1, indices[k] + 1) })
        }
        let (a, b) = try await (contents(of: lib).documents[one]!, contents(of: lib).documents[batch]!)
        // Each document began with a page of its own: compared as "the first page" (nil).
        let synced = Set(made.map(\.0))
        #expect(a.pages.map { synced.contains($0) ? $0 : nil } == b.pages.map { synced.contains($0) ? $0 : nil }, "\(a) \(b)")
        #expect(a.elements == b.elements && a.pages.count == 7, "\(a) \(b)")

        // A batch whose third page's index is past the end, or that names a page twice: refused whole.
        let package = lib.root + "/" + batch.uuidString + ".lnote"
        let before = files(under: package)
        let more = pages(3, seed: 6)
        try await edit(lib, batch) { s in
            await #expect(throws: StoreError.self) { try await s.insertSyncedPages([(more[0].0, more[0].1, 0), (more[1].0, more[1].1, 9), (more[2].0, more[2].1, 20)]) }
            await #expect(throws: StoreError.self) { try await s.insertSyncedPages([(more[0].0, more[0].1, 0), (more[0].0, more[1].1, 1)]) }
            await #expect(throws: StoreError.self) { try await s.insertSyncedPages([(made[0].0, more[1].1, 0)]) }
        }
        #expect(files(under: package) == before, "nothing written by a refused batch")
        #expect(try await contents(of: lib).documents[batch]! == b)
    }
}
