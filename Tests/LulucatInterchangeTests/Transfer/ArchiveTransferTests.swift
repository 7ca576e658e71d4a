// One-file export and checked import through the library: round trips, renumbering, rejection.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatInterchange

@Suite struct ArchiveTransferTests {
    func stroke(_ seed: Int) -> Stroke {
        Stroke(samples: (0..<20).map { Sample(x: Int32(100 + $0 * 5 + seed), y: Int32(200 + $0), radius: 10, pressure: 500, time: UInt32($0 * 4)) })
    }

    @Test func exportOfAKilledSessionImportsWithItsPagesAsTruth() async throws {
        let root = NSTemporaryDirectory() + "lnote-archive-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root + "/a")
        let package = try await library.createDocument(title: "Killed")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.append(stroke(1), to: page)
        try await session.insertImage(Data([1, 2, 3]), fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: page)
        try await session.save()  // autosave only: document.json still says 0 elements
        await session.abandon()
        let expected = try StoredPage.read(package, page: page)

        let zip = root + "/killed.zip"
        try await DocumentTransfer.exportArchive(package.id, from: library, to: zip)
        let other = Library(root: root + "/b")
        let result = try DocumentTransfer.importArchive(try Data(contentsOf: URL(fileURLWithPath: zip)), into: other)
        #expect(!result.renumbered)
        let doc = try DocumentMetadata.read(result.package)
        #expect(doc.pages[0].elementCount == 2)
        #expect(try StoredPage.read(result.package, page: page) == expected)
        #expect(DocumentVerifier().verify(result.package).filter { $0.severity == .error }.isEmpty)

        // The same archive again: the id is taken, so it gets a new one.
        let again = try DocumentTransfer.importArchive(try Data(contentsOf: URL(fileURLWithPath: zip)), into: other)
        #expect(again.renumbered && again.package.id != package.id)
        #expect(try await other.documents().count == 2)
    }

    /// Export to a file URL (its `async` and synchronous overloads) writes the archive that export
    /// to the URL's path writes, at the file the URL names (a space in its name, percent-encoded
    /// in the URL and not in the path).
    @Test func exportToAURLWritesWhatExportToItsPathWrites() async throws {
        let root = NSTemporaryDirectory() + "lnote-archive-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: URL(fileURLWithPath: root + "/a", isDirectory: true))
        let package = try await library.createDocument(title: "Both ways")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(stroke(2), to: await session.pageIDs()[0])
        try await session.close()
        let byPath = root + "/by path.zip"
        let asyncURL = URL(fileURLWithPath: root + "/by url.zip"), syncURL = URL(fileURLWithPath: root + "/by url, sync.zip")
        let written = try await DocumentTransfer.exportArchive(package.id, from: library, to: byPath)
        #expect(try await DocumentTransfer.exportArchive(package.id, from: library, to: asyncURL) == written)
        #expect(try exportSynchronously(package.id, from: library, to: syncURL) == written)
        let bytes = try #require(FileManager.default.contents(atPath: byPath))
        #expect(bytes.count == written)
        #expect(FileManager.default.contents(atPath: root + "/by url.zip") == bytes)
        #expect(FileManager.default.contents(atPath: root + "/by url, sync.zip") == bytes)
    }

    /// The synchronous overload, as synchronous code (the CLI) calls it.
    func exportSynchronously(_ id: UUID, from library: Library, to url: URL) throws -> Int {
        try DocumentTransfer.exportArchive(id, from: library, to: url)
    }

    @Test func anArchiveWhosePageReferencesAMissingAssetIsRejectedAndLeavesNothing() async throws {
        let root = NSTemporaryDirectory() + "lnote-archive-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root + "/a")
        let package = try await library.createDocument(title: "Dangling")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let image = try await session.insertImage(Data([1, 2, 3]), fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: page)
        try await session.close()
        let files = try ["document.json", "manifest.json", "pages/\(page.uuidString).content"].map {
            ($0, try Data(contentsOf: URL(fileURLWithPath: package.path + "/" + $0)))
        }
        // The asset is left out of the archive on purpose.
        let zip = try PackageArchive.export(files: files, topFolder: package.id)
        let other = Library(root: root + "/b")
        #expect(throws: (any Error).self) { try DocumentTransfer.importArchive(zip, into: other) }
        #expect(try await other.documents().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.root).isEmpty)
        _ = image
    }

    @Test func aHostileArchiveIsRefusedBeforeAnythingIsWritten() throws {
        let root = NSTemporaryDirectory() + "lnote-archive-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let other = Library(root: root + "/b")
        let writer = ZipWriter()
        try writer.add(path: "document.json", data: Data("{}".utf8))
        let zip = try writer.finish()
        #expect(throws: (any Error).self) { try DocumentTransfer.importArchive(zip, into: other) }
        #expect(throws: (any Error).self) { try DocumentTransfer.importArchive(Data("not a zip".utf8), into: other) }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: other.root)) ?? []).isEmpty)
    }
}
