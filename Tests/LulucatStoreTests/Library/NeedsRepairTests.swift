// The library view flags a document that needs repair: damage found by a session's open or a page
// read leaves the package's `.needs-repair` marker, which `list` reads and `repair` clears.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreMaintenance
import LulucatStoreTesting

@Suite struct NeedsRepairTests {
    func document(_ library: Library) async throws -> (DocumentPackage, UUID) {
        let package = try await library.createDocument(title: "Flagged")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        for i in 0..<4 { try await session.append(sampleStroke(30 + i, seed: i), to: page) }
        try await session.close()
        return (package, page)
    }

    func entry(_ library: Library, _ id: UUID) throws -> LibraryEntry {
        try #require(try library.documents().first { $0.id == id })
    }

    @Test func aDamagedPageFoundByAReadFlagsTheDocumentUntilRepair() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, page) = try await document(library)
        #expect(try !entry(library, package.id).needsRepair)
        var bytes = try #require(readBytes(package.pagePath(page)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: package.pagePath(page)))
        // list reads manifests only: the damage is not seen before something reads the page.
        #expect(try !entry(library, package.id).needsRepair)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        _ = try await session.content(of: page)
        await session.abandon()
        let flagged = try entry(library, package.id)
        #expect(flagged.needsRepair)
        #expect(flagged.problem?.hasPrefix("needs repair: ") == true)
        _ = try DocumentRepair().repair(package)
        let repaired = try entry(library, package.id)
        #expect(!repaired.needsRepair && repaired.problem == nil)
    }

    @Test func aCorruptDocumentJSONFoundByAnOpenFlagsTheDocumentUntilRepair() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, _) = try await document(library)
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: package.documentPath))
        #expect(try !entry(library, package.id).needsRepair)  // the manifest is intact
        await #expect(throws: StoreError.self) { try await library.open(package.id) }
        #expect(try entry(library, package.id).needsRepair)
        _ = try DocumentRepair().repair(package)  // rebuilt from the manifest and the page files
        #expect(try !entry(library, package.id).needsRepair)
        let session = try await library.open(package.id)
        #expect(await session.openReport.filter { $0.severity == .error }.isEmpty)
        try await session.close()
        #expect(try !entry(library, package.id).needsRepair)
    }
}
