// Imports whose cost an archive must not be able to inflate: bombs within the zip limits, orphan
// and unlisted entries, a document.json that fails after gigabytes would have been written,
// concurrent imports of one archive, killed imports. And our own most compressible export.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatInterchange
import LulucatStoreTesting

/// A temporary folder with a source library, a target library and a sibling folder.
final class ImportPlace: @unchecked Sendable {
    let root = NSTemporaryDirectory() + "lnote-import-" + UUID().uuidString
    lazy var source = Library(root: root + "/source")
    lazy var target = Library(root: root + "/target")
    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A small valid document exported: (zip files, document id, page id).
    func smallDocument() async throws -> (files: [(relativePath: String, data: Data)], id: UUID, page: UUID) {
        let package = try await source.createDocument(title: "Small")
        let session = try await source.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.append(Stroke(samples: (0..<30).map { Sample(x: Int32($0 * 9), y: 40, radius: 10, pressure: 500, time: UInt32($0 * 4)) }), to: page)
        try await session.close()
        let files = try ["document.json", "manifest.json", "pages/\(page.uuidString).content"].map {
            ($0, try Data(contentsOf: URL(fileURLWithPath: package.path + "/" + $0)))
        }
        return (files, package.id, page)
    }

    func filesUnder(_ path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
    }

    func bytesUnder(_ path: String) -> Int {
        filesUnder(path).reduce(0) { sum, rel in
            sum + (((try? FileManager.default.attributesOfItem(atPath: path + "/" + rel))?[.size] as? Int) ?? 0)
        }
    }
}

@Suite struct HostileImportTests {
    @Test func theMostCompressibleValidPageExportsAndImportsBack() async throws {
        let place = ImportPlace()
        // Fixed 16-byte samples that never move: the page deflates about 1000:1, past the old
        // 200:1 "zip bomb" refusal.
        let package = try await place.source.createDocument(title: "Dots", codec: .fixed16)
        let session = try await place.source.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let still = Sample(x: 500, y: 500, radius: 10, pressure: 500, time: 0)
        let strokes = (0..<40).map { _ in Stroke(samples: Array(repeating: still, count: 50_000)) }
        try await session.append(strokes.map { .stroke($0) }, to: page)
        try await session.close()
        let zip = place.root + "/dots.zip"
        try await DocumentTransfer.exportArchive(package.id, from: place.source, to: zip)
        let data = try Data(contentsOf: URL(fileURLWithPath: zip))
        let (_, files, _) = try PackageArchive.files(in: data)
        let pageEntry = try #require(files.first { $0.path.hasPrefix("pages/") }?.entry)
        #expect(pageEntry.uncompressedSize > 1 << 20 && pageEntry.uncompressedSize / pageEntry.compressedSize > 200)

        let result = try DocumentTransfer.importArchive(data, into: place.target)
        #expect(try StoredPage.read(result.package, page: page) == StoredPage.read(package, page: page))
        #expect(DocumentVerifier().verify(result.package).allSatisfy { $0.severity != .error })
    }

    @Test func anInvalidDocumentJSONIsRefusedBeforeAnyEntryIsWritten() throws {
        let place = ImportPlace()
        let fs = CountingFileSystem()
        let target = Library(root: place.root + "/target", fileSystem: fs)
        let page = UUID()
        let writer = ZipWriter()
        // 64 MiB of zeros first, as a page, then a document.json that is not one.
        try writer.add(path: "pages/\(page.uuidString).content", data: Data(count: 64 << 20))
        try writer.add(path: "document.json", data: Data("{\"format\": \"lulucat.document\", \"formatVersion\": 1, \"id\": 12}".utf8))
        let zip = try writer.finish()
        #expect(zip.count < 1 << 20)
        #expect { try DocumentTransfer.importArchive(zip, into: target) } throws: { "\($0)".contains("document.json") }
        #expect(fs.bytesWritten == 0 && fs.writeOpens.isEmpty)
        #expect(place.filesUnder(target.root).isEmpty)
    }

    @Test func unlistedPagesAndOrphanAssetsAreNotWrittenBeyondTheirBounds() async throws {
        let place = ImportPlace()
        let (files, _, page) = try await place.smallDocument()
        let writer = ZipWriter()
        var entries = files
        // 500 junk pages document.json does not list, and 300 orphan assets of 1 MiB of zeros.
        let junk = Data(count: 4096)
        for _ in 0..<500 { entries.append(("pages/\(UUID().uuidString).content", junk)) }
        let zeros = Data(count: 1 << 20)
        for _ in 0..<300 { entries.append(("assets/\(UUID().uuidString).png", zeros)) }
        for file in entries { try writer.add(path: file.relativePath, data: file.data, method: .deflated) }
        let zip = try writer.finish()
        #expect(zip.count < 4 << 20)

        let result = try DocumentTransfer.importArchive(zip, into: place.target)
        let pages = try FileManager.default.contentsOfDirectory(atPath: result.package.pagesPath)
        #expect(pages == ["\(page.uuidString).content"])
        let assets = try FileManager.default.contentsOfDirectory(atPath: result.package.assetsPath)
        #expect(assets.count <= ImportLimits.maxOrphanAssets)
        #expect(UInt64(place.bytesUnder(result.package.path)) <= ImportLimits.maxOrphanBytes + (1 << 20))
        #expect(result.findings.filter { $0.message.hasPrefix("not imported") }.count == 500 + 300 - assets.count)
    }

    @Test func aPageDeclaredLargerThanTheLimitIsRefusedByItsSize() async throws {
        let place = ImportPlace()
        let (files, _, page) = try await place.smallDocument()
        // A stored entry whose header declares 600 MiB: refused before a byte is read or written.
        var raw = files.filter { !$0.relativePath.hasPrefix("pages/") }.map { RawEntry.stored($0.relativePath, [UInt8]($0.data)) }
        var big = RawEntry.deflated("pages/\(page.uuidString).content", [UInt8](repeating: 0, count: 1 << 16))
        big.uncompressedSize = 600 << 20
        raw.append(big)
        let zip = RawZip.build(raw)
        let fs = CountingFileSystem()
        let target = Library(root: place.target.root, fileSystem: fs)
        #expect { try DocumentTransfer.importArchive(zip, into: target) } throws: { "\($0)".contains("more than the limit") }
        #expect(fs.bytesWritten == 0)
    }

    @Test func aLyingEntryFailsWhileStreamingAndLeavesNothing() async throws {
        let place = ImportPlace()
        let (files, _, page) = try await place.smallDocument()
        var raw = files.filter { !$0.relativePath.hasPrefix("pages/") }.map { RawEntry.stored($0.relativePath, [UInt8]($0.data)) }
        let content = files.first { $0.relativePath.hasPrefix("pages/") }!.data
        var bad = RawEntry.deflated("pages/\(page.uuidString).content", [UInt8](content))
        bad.crc ^= 1
        raw.append(bad)
        #expect { try DocumentTransfer.importArchive(RawZip.build(raw), into: place.target) } throws: { (($0 as? StoreError)?.importRefusal?.cause as? ArchiveError)?.kind == .checksumMismatch }
        #expect(place.filesUnder(place.target.root).isEmpty)
    }

    @Test func concurrentImportsOfOneArchiveGetDistinctIDs() async throws {
        let place = ImportPlace()
        let (files, id, _) = try await place.smallDocument()
        let zip = try PackageArchive.export(files: files, topFolder: id)
        let target = place.target
        try target.prepare()
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do { results.add(try DocumentTransfer.importArchive(zip, into: target).package.id) } catch { results.fail("\(error)") }
        }
        #expect(results.failures.isEmpty, "\(results.failures)")
        #expect(Set(results.ids).count == 4 && results.ids.contains(id))
        #expect(try await target.documents().count == 4)
        #expect(target.stagingFolders().isEmpty)
    }

    /// The next process to open the library (its first import here) removes it; the open is once
    /// per process, so no later import or create lists the library.
    @Test func aKilledImportsStagingFolderIsReportedAndRemovedAtTheLibrarysNextOpen() async throws {
        let place = ImportPlace()
        let (files, id, _) = try await place.smallDocument()
        // What a SIGKILL leaves: a staging folder with its (now free) lock and some files.
        let staging = place.target.root + "/" + temporaryFilePrefix + "import-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: staging + "/pages", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: staging + "/.lock", contents: Data())
        _ = FileManager.default.createFile(atPath: staging + "/pages/x", contents: Data(count: 1000))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: staging)
        #expect(place.target.stagingFolders() == [staging])
        _ = try DocumentTransfer.importArchive(try PackageArchive.export(files: files, topFolder: id), into: place.target)
        #expect(place.target.stagingFolders().isEmpty)
    }
}

final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var ids: [UUID] = []
    private(set) var failures: [String] = []
    func add(_ id: UUID) { lock.withLock { ids.append(id) } }
    func fail(_ s: String) { lock.withLock { failures.append(s) } }
}
