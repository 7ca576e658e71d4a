// A SQLite document whose document.json is corrupt is rebuilt from its database (repair), and the
// raw pass over a database file cut short searches its last, partial page
// (docs/sqlite-engine.md §5.5, §5.6).

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite

@Suite struct SQLiteDocumentRebuildTests {
    init() { Library.enableSQLiteEngine() }
    let noAutosave = SessionOptions(autosaveDelay: nil, thumbnails: nil)

    /// A closed SQLite document of three pages, `strokes` strokes each (recoded compact at close).
    private func document(_ library: Library, strokes: Int) async throws -> (DocumentPackage, [UUID: PageContent]) {
        let package = try await library.createDocument(title: "Rebuild", engine: .sqlite)
        let session = try await library.open(package.id, options: noAutosave)
        var pages = await session.pageIDs()
        pages.append(try await session.addPage())
        pages.append(try await session.addPage())
        for (p, page) in pages.enumerated() {
            try await session.append((0..<strokes).map { .stroke(sampleStroke(150 + 29 * ($0 % 4), seed: 1_000 * p + $0)) }, to: page)
        }
        try await session.save()
        var contents: [UUID: PageContent] = [:]
        for page in pages { contents[page] = try await session.content(of: page) }
        try await session.close()
        return (package, contents)
    }

    private func reopened(_ library: Library, _ package: DocumentPackage, _ pages: [UUID]) async throws -> ([UUID: PageContent], [Finding]) {
        let session = try await library.open(package.id, options: noAutosave)
        var back: [UUID: PageContent] = [:]
        for page in pages { back[page] = try await session.content(of: page) }
        let report = await session.openReport
        try await session.close()
        return (back, report)
    }

    @Test func aCorruptDocumentJSONIsRebuiltFromTheDatabase() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 12)
        let before = try DocumentMetadata.read(package)
        try Data("{\"id\": 3".utf8).write(to: URL(fileURLWithPath: package.documentPath))
        #expect(throws: StoreError.self) { try DocumentMetadata.read(package) }

        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.path == package.documentPath && $0.message.contains("rebuilt from the manifest and 3 pages")
            && $0.message.contains("the order they were first stored") })
        let rebuilt = try DocumentMetadata.read(package)
        #expect(rebuilt.engine == .sqlite)
        // The pages in their order (the cover first, then as first stored: here as added).
        #expect(rebuilt.pages.map(\.id) == before.pages.map(\.id))
        #expect(rebuilt.pages.map(\.elementCount) == before.pages.map(\.elementCount))
        #expect(rebuilt.pages.map(\.canvasSize) == before.pages.map(\.canvasSize))
        #expect(readBytes(package.recoveredPath + "/document.json") == Array("{\"id\": 3".utf8))
        #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error })
        let (back, report) = try await reopened(library, package, before.pages.map(\.id))
        #expect(back == contents)
        #expect(report.isEmpty)
    }

    @Test func aCorruptDocumentJSONBesideADatabaseSQLiteCannotOpenIsRebuiltFromItsRows() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 10)
        let before = try DocumentMetadata.read(package)
        try Data().write(to: URL(fileURLWithPath: package.documentPath))
        var db = readBytes(package.contentDatabasePath)!
        for i in 0..<100 { db[i] ^= 0xFF }  // the header: SQLite cannot open the file
        try Data(db).write(to: URL(fileURLWithPath: package.contentDatabasePath))

        _ = try DocumentRepair().repair(package)
        let rebuilt = try DocumentMetadata.read(package)
        #expect(rebuilt.engine == .sqlite)
        // The cover page first; the page order is lost with the database's header (id order).
        #expect(rebuilt.pages.first?.id == before.pages.first?.id)
        #expect(Set(rebuilt.pages.map(\.id)) == Set(before.pages.map(\.id)))
        #expect(FileManager.default.fileExists(atPath: package.recoveredPath + "/content.sqlite.1"))
        #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error })
        let (back, _) = try await reopened(library, package, before.pages.map(\.id))
        #expect(back == contents)  // every stroke, in order, on its canvas
    }

    @Test func aPackageWithBothFormsIsNotGuessed() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, _) = try await document(library, strokes: 2)
        let stray = package.pagesPath + "/" + UUID().uuidString + ".content"
        try FileManager.default.createDirectory(atPath: package.pagesPath, withIntermediateDirectories: false)
        try Data(PageFile.encode(PageContent(elements: [.stroke(sampleStroke())]))).write(to: URL(fileURLWithPath: stray))
        let db = readBytes(package.contentDatabasePath)!
        try Data("{".utf8).write(to: URL(fileURLWithPath: package.documentPath))
        #expect(throws: StoreError.self) { try DocumentRepair().repair(package) }
        // Nothing of either form was removed.
        #expect(FileManager.default.fileExists(atPath: stray))
        #expect(readBytes(package.contentDatabasePath) == db)
        #expect(readBytes(package.documentPath) == Array("{".utf8))
    }

    @Test func theRawPassSearchesTheLastPartialPageOfAFileCutShort() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 12)
        let bytes = readBytes(package.contentDatabasePath)!
        #expect(bytes.count % 4_096 == 0)
        // Where each stroke's compact samples end in the file (found apart from the salvage code).
        var ends: [UUID: (start: Int, end: Int)] = [:]
        for content in contents.values {
            for case .stroke(let s) in content.elements {
                let blob = StrokeBlob.encodeCompact(s)
                let id = s.id.sqliteBytes
                var i = 0
                while i + 16 <= bytes.count {
                    if Array(bytes[i..<(i + 16)]) == id,
                       let at = (i + 16..<min(bytes.count - blob.count, i + 48)).first(where: { Array(bytes[$0..<($0 + blob.count)]) == blob }) {
                        ends[s.id] = (max(0, i - 32), at + blob.count)
                    }
                    i += 1
                }
            }
        }
        // (A row whose samples overflow onto another page is not found this way: not needed here.)
        #expect(ends.count >= contents.values.map(\.elements.count).reduce(0, +) - 3)
        // Cut just after the row that ends last: that row lies in the partial page left.
        let last = ends.max { $0.value.end < $1.value.end }!
        var cut = last.value.end + 1
        if cut % 4_096 == 0 { cut += 1 }
        #expect(last.value.start >= cut / 4_096 * 4_096, "the last row lies within the page the cut leaves partial")
        let raw = SQLiteFileSalvage(bytes: Array(bytes[0..<cut]), knownPages: Array(contents.keys))
        #expect(raw.pageSize == 4_096)
        let found = Set(raw.pages.values.flatMap { $0.elements.map(\.element.id) })
        let whole = Set(ends.filter { $0.value.end <= cut }.map(\.key))
        #expect(whole.contains(last.key))
        #expect(whole.isSubset(of: found))
        // Each found stroke is exactly the stroke written.
        for (page, content) in contents {
            let got = raw.pages[page]?.elements.map(\.element) ?? []
            #expect(got.allSatisfy { content.elements.contains($0) })
        }
    }

    @Test func aSessionReadsTheRowsBehindADamagedBTreePageFromTheFileBytes() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 30)
        let db = try Connection(path: package.contentDatabasePath)
        let root: Int = try {
            let s = try db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'strokes'")
            _ = try s.step()
            return Int(s.int64(at: 0))
        }()
        try db.close()
        var bytes = readBytes(package.contentDatabasePath)!
        let base = (root - 1) * 4_096
        #expect(bytes[base] == 5, "the strokes table's root is an interior page: its leaves hold every row")
        for i in base..<(base + 4_096) { bytes[i] = 0 }  // SQLite can reach no stroke row now
        try Data(bytes).write(to: URL(fileURLWithPath: package.contentDatabasePath))

        let session = try await library.open(package.id, options: noAutosave)
        for (page, content) in contents {
            // Every stroke, each exactly as written, in its order: their rows were not touched.
            #expect(try await session.content(of: page) == content)
        }
        // Never silent: each page says it was damaged and salvaged.
        let report = await session.openReport
        #expect(contents.keys.allSatisfy { page in report.contains { $0.severity == .error && $0.message.contains("page \(page) is damaged") } })
        #expect(report.allSatisfy { $0.message.contains("30 elements salvaged") })
        await session.abandon()
    }

    @Test func earlyWritebackOfTheWALIsStartedAndChangesNothingRead() throws {
        let tmp = TemporaryFolder()
        var configuration = SQLiteContentStore.Configuration()
        configuration.walWritebackBytes = 64 << 10
        configuration.compactsAtClose = false
        let path = tmp.path + "/" + SQLiteContentStore.fileName
        let store = try SQLiteContentStore(path: path, configuration: configuration)
        let page = UUID()
        let content = PageContent(elements: (0..<40).map { .stroke(sampleStroke(3_000, seed: $0)) })  // about 2 MB
        try store.replacePage(page, with: PageContent(canvasSize: content.canvasSize))
        let before = store.walStatistics()!
        try store.applyChanges(to: page, [.append(content.elements)])  // fixed16 rows: about 2 MB of frames
        let after = store.walStatistics()!
        #if os(Linux)
        #expect(after.writebacks - before.writebacks >= 10, "one start every 64 KiB of about 2 MB of frames")
        #else
        #expect(after.writebacks == before.writebacks)
        #endif
        #expect(after.syncs - before.syncs == 1, "the commit still syncs the WAL once")
        // Another connection sees the commit at once, and the database reads back equal.
        let other = try SQLiteContentStore(path: path, mode: .openExisting)
        #expect(try other.loadPage(page) == content)
        other.closeWithoutCheckpoint()
        try store.close()
        let reopened = try SQLiteContentStore(path: path, mode: .openExisting)
        #expect(try reopened.loadPage(page) == content)
        try reopened.close()
        // Off by default.
        #expect(SQLiteContentStore.Configuration().walWritebackBytes == 0)
    }
}
