import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreMaintenance
import LulucatStoreTesting

@Suite struct RepairTests {
    @Test func repairMovesDamageAsideAndLeavesAVerifiedDocument() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Hurt")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let good = await session.pageIDs()[0]
        let bad = try await session.addPage()
        let gone = try await session.addPage()
        try await session.append(sampleStroke(), to: good)
        try await session.append(sampleStroke(), to: bad)
        try await session.close()

        var bytes = readBytes(package.pagePath(bad))!
        bytes[30] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: package.pagePath(bad)))
        try FileManager.default.removeItem(atPath: package.pagePath(gone))
        // An unlisted page that shows an image: moved aside, its image kept.
        let stray = UUID(), strayAsset = UUID()
        try Data([9, 9]).write(to: URL(fileURLWithPath: package.assetPath(strayAsset, ext: "png")))
        let strayImage = ImageElement(assetID: strayAsset, frame: QuantizedRect(x: 0, y: 0, width: 5, height: 5))
        try Data(PageFile.encode(PageContent(elements: [.image(strayImage)]))).write(to: URL(fileURLWithPath: package.pagePath(stray)))
        let orphan = UUID()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: package.assetPath(orphan, ext: "png")))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: package.manifestPath))
        try Data().write(to: URL(fileURLWithPath: package.pagesPath + "/" + temporaryFilePrefix + "x-page.content"))

        let actions = try DocumentRepair().repair(package)
        #expect(actions.count >= 6)
        #expect(DocumentVerifier().verify(package).isEmpty)
        // Nothing was deleted: the damaged page's file and the stray page are in recovered/; the
        // damaged page keeps its place with what checks (its one stroke's record was hit: none).
        #expect(readBytes(package.recoveredPath + "/" + bad.uuidString + ".content")! == bytes)
        #expect(FileManager.default.fileExists(atPath: package.recoveredPath + "/" + stray.uuidString + ".content"))
        #expect(actions.contains { $0.path == package.pagePath(bad) && $0.message.contains("0 elements salvaged, 1 lost") })
        let doc = try DocumentMetadata.read(package)
        #expect(doc.pages.map(\.id) == [good, bad])
        #expect(doc.pages[1].elementCount == 0)
        #expect(FileManager.default.fileExists(atPath: package.assetPath(strayAsset, ext: "png")))
        #expect(!FileManager.default.fileExists(atPath: package.assetPath(orphan, ext: "png")))
        // Nor does the next session's close remove the recovered page's image.
        let later = try await Library(root: tmp.path).open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await later.close()
        #expect(FileManager.default.fileExists(atPath: package.assetPath(strayAsset, ext: "png")))
        // A second repair has nothing to do.
        #expect(try DocumentRepair().repair(package).isEmpty)
    }

    @Test func repairRefusesAnOpenDocumentAndACorruptTruth() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Open")
        let session = try await library.open(package.id)
        #expect(throws: StoreError.self) { try DocumentRepair().repair(package) }
        try await session.close()
        let before = try DocumentMetadata.read(package)
        // A corrupt document.json with the manifest intact is rebuilt from it and the page files,
        // the corrupt file kept in recovered/.
        try Data("{".utf8).write(to: URL(fileURLWithPath: package.documentPath))
        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.path == package.documentPath && $0.message.contains("rebuilt from the manifest") })
        let rebuilt = try DocumentMetadata.read(package)
        #expect(rebuilt.id == before.id && rebuilt.title == before.title && rebuilt.pages.map(\.id) == before.pages.map(\.id))
        #expect(rebuilt.pages.map(\.elementCount) == before.pages.map(\.elementCount))
        #expect(readBytes(package.recoveredPath + "/document.json")! == Array("{".utf8))
        #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error })
        // With the manifest corrupt too and no page file, there is nothing to rebuild from:
        // refused, nothing changed.
        for page in before.pages { try FileManager.default.removeItem(atPath: package.pagePath(page.id)) }
        try Data("{".utf8).write(to: URL(fileURLWithPath: package.documentPath))
        try Data("[".utf8).write(to: URL(fileURLWithPath: package.manifestPath))
        #expect(throws: StoreError.self) { try DocumentRepair().repair(package) }
        #expect(readBytes(package.documentPath)! == Array("{".utf8))
    }

    /// Both metadata files lost, every page file intact: the pages alone rebuild the document,
    /// every stroke kept, under a title that says it was recovered; a second repair has nothing
    /// to do (issue 33: it used to refuse, and say so again at every try).
    @Test(arguments: [EngineKind.snapshot, .journal])
    func bothMetadataFilesLostArePutBackFromThePages(_ engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Field notes", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let first = await session.pageIDs()[0]
        let second = try await session.addPage()
        for n in 0..<3 { try await session.append(sampleStroke(30, seed: n), to: first) }
        try await session.append(sampleStroke(30, seed: 9), to: second)
        try await session.close()
        let before = try DocumentMetadata.read(package)
        let contents = try before.pages.map { try StoredPage.read(package, page: $0.id) }
        try FileManager.default.removeItem(atPath: package.documentPath)
        try FileManager.default.removeItem(atPath: package.manifestPath)

        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.severity == .repaired && $0.message.contains("rebuilt from its 2 page") && $0.message.contains("'Recovered document'") },
                "\(findings)")
        let rebuilt = try DocumentMetadata.read(package)
        #expect(rebuilt.id == package.id && rebuilt.title == DocumentRepair.recoveredTitle && rebuilt.engine == engine)
        #expect(Set(rebuilt.pages.map(\.id)) == Set(before.pages.map(\.id)))
        for (page, content) in zip(before.pages, contents) {
            #expect(try StoredPage.read(package, page: page.id).elements == content.elements)
        }
        #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error })
        #expect(try await library.documents().map(\.title) == [DocumentRepair.recoveredTitle])
        #expect(try DocumentRepair().repair(package).isEmpty)
    }
}
