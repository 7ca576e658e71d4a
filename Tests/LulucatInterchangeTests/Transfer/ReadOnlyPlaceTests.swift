// A library on a read-only volume: export, render's page read, info and verify work without the
// write lock, and SQLite documents open read-only. The read-only place is a read-only bind mount
// (chmod does not stop root); where mounting is not allowed the tests are skipped, not passed.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatInterchange
import LulucatStoreTesting

@Suite(.serialized) struct ReadOnlyPlaceTests {
    init() { Library.enableSQLiteEngine() }
    @Test(.enabled(if: ReadOnlyMount.available, "needs a read-only bind mount (root with CAP_SYS_ADMIN)"))
    func aReadOnlyLibraryIsExportedReadAndVerified() async throws {
        let base = NSTemporaryDirectory() + "lnote-ro-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let writable = Library(root: base + "/src")
        var documents: [(UUID, UUID, PageContent)] = []
        for engine in [EngineKind.snapshot, .journal, .sqlite] {
            let package = try await writable.createDocument(title: "On a read-only disk (\(engine.rawValue))", engine: engine)
            let session = try await writable.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            let page = await session.pageIDs()[0]
            try await session.append(Stroke(samples: (0..<40).map { Sample(x: Int32($0 * 11), y: 70, radius: 10, pressure: 500, time: UInt32($0 * 4)) }), to: page)
            _ = try await session.insertImage(Data([9, 9, 9]), fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: page)
            try await session.close()
            documents.append((package.id, page, try StoredPage.read(package, page: page)))
        }
        let mountPoint = base + "/ro"
        try #require(ReadOnlyMount.mount(base + "/src", at: mountPoint))
        defer { ReadOnlyMount.unmount(mountPoint) }
        let readOnly = Library(root: mountPoint)
        #expect(!FileManager.default.createFile(atPath: mountPoint + "/x", contents: Data()))

        #expect(try await readOnly.documents().count == 3)
        let target = Library(root: base + "/target")
        for (id, page, content) in documents {
            let package = readOnly.package(id)
            #expect(try StoredPage.read(package, page: page) == content)
            #expect(try DocumentMetadata.read(package).id == id)
            let findings = DocumentVerifier().verify(package)
            #expect(findings.allSatisfy { $0.severity != .error }, "\(findings)")
            let zip = base + "/\(id.uuidString).zip"
            try await DocumentTransfer.exportArchive(id, from: readOnly, to: zip)
            let imported = try DocumentTransfer.importArchive(try Data(contentsOf: URL(fileURLWithPath: zip)), into: target)
            #expect(try StoredPage.read(imported.package, page: page) == content)
        }
        // Writing is refused with an error, never half done.
        await #expect(throws: (any Error).self) { _ = try await readOnly.open(documents[0].0) }
    }
}
