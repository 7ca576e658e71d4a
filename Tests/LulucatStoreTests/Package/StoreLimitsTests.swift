// Times from the clock are checked before they are written (a clock past year 9999 makes a
// document.json no reader can parse), and export and duplicate refuse a file over its limit from
// its size, as verify and import do, before reading it whole.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct StoreLimitsTests {
    /// 10000-01-01T00:00:00Z.
    static let year10000 = Date(timeIntervalSince1970: 253_402_300_800)

    @Test func theStorableTimesAreThoseTheJSONHolds() throws {
        let last = Date(timeIntervalSince1970: 253_402_300_799.999)
        #expect(try Date.storeNow(clock: last) == last)
        #expect(ISO8601.date(ISO8601.string(last)) == last, "the last time writes and reads back")
        #expect(ISO8601.date(ISO8601.string(Self.year10000)) == nil, "what the check keeps out: a five-digit year does not read")
        for bad in [Self.year10000, Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: -1)] {
            #expect(throws: StoreError.self) { try Date.storeNow(clock: bad) }
        }
    }

    @Test func aClockPastTheStorableTimesWritesNothing() async throws {
        let folder = TemporaryFolder()
        let library = Library(root: folder.path + "/lib")
        let package = try await library.createDocument(title: "Before")
        let page = try DocumentMetadata.read(package).pages[0].id
        let before = try Data(contentsOf: URL(fileURLWithPath: package.documentPath))
        try await StoreClock.$reading.withValue(Self.year10000) {
            // new: refused, no document made.
            #expect { try library.createDocument(title: "From the future") } throws: { e in
                guard case .invalidArgument(let why) = e as? StoreError else { return false }
                return why.contains("system clock") && why.contains("nothing was written")
            }
            #expect(try await library.documents().count == 1)
            // rename, a page, a stroke: each refused, the document as it was.
            let session = try await library.open(package.id)
            await #expect(throws: StoreError.self) { try await session.rename(to: "After") }
            await #expect(throws: StoreError.self) { try await session.addPage() }
            await #expect(throws: StoreError.self) { try await session.append(sampleStroke(), to: page) }
            #expect(await session.title == "Before")
            #expect(await session.pageIDs() == [page])
            #expect(try await session.content(of: page).elements.isEmpty)
            try await session.close()
            #expect(throws: StoreError.self) { try library.duplicate(package.id) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: package.documentPath)) == before)
        #expect(try await library.documents().map(\.title) == ["Before"])
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
        // With the clock right again, the same edits go through.
        let session = try await library.open(package.id)
        try await session.rename(to: "After")
        try await session.close()
        #expect(try await library.documents().map(\.title) == ["After"])
    }

    @Test func exportAndDuplicateRefuseAPageOverTheLimitBeforeReadingIt() throws {
        let folder = TemporaryFolder()
        let library = Library(root: folder.path + "/lib")
        let package = try library.createDocument(title: "Huge page")
        let page = try DocumentMetadata.read(package).pages[0].id
        // A sparse page file just over the limit: its size alone says it is too large.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: package.pagePath(page)))
        try handle.truncate(atOffset: UInt64(PackageLimits.maxPageFileSize) + 1)
        try handle.close()
        let tooLarge: (any Error) -> Bool = { e in
            guard case .invalidArgument(let why) = e as? StoreError else { return false }
            return why.contains("pages/\(page.uuidString).content") && why.contains("more than the \(PackageLimits.maxPageFileSize)")
        }
        #expect { try library.withConsistentFiles(package.id) { _, _ in Issue.record("read a file over its limit") } } throws: { tooLarge($0) }
        #expect { try library.duplicate(package.id) } throws: { tooLarge($0) }
        #expect(try library.documents().count == 1, "no copy left behind")
        #expect(library.stagingFolders().isEmpty)
    }

    @Test func theSizeLimitsByPath() {
        #expect(ImportLimits.maxSize(of: "pages/\(UUID().uuidString).content") == UInt64(PackageLimits.maxPageFileSize))
        #expect(ImportLimits.maxSize(of: "pages/\(UUID().uuidString).journal") == UInt64(PackageLimits.maxJournalFileSize))
        #expect(ImportLimits.maxSize(of: "assets/\(UUID().uuidString).png") == ImportLimits.maxAssetSize)
        #expect(ImportLimits.maxSize(of: "thumbnails/\(UUID().uuidString).jpg") == ImportLimits.maxThumbnailSize)
        #expect(ImportLimits.maxSize(of: "document.json") == UInt64(PackageJSON.maxFileSize))
        #expect(ImportLimits.maxSize(of: "recovered/x") == nil)
    }
}

@Suite struct StreamedImportCheckTests {
    /// Imports a copy of a one-page document whose page file (or database) is declared `size`
    /// bytes and streams as zeros after `prefix`; returns the error and the bytes streamed.
    static func importZeros(engine: EngineKind, prefix: [UInt8] = [], size: UInt64) throws -> (StoreError?, Int) {
        let folder = TemporaryFolder()
        let source = Library(root: folder.path + "/source"), target = Library(root: folder.path + "/target")
        let package = try source.createDocument(title: "Zeros", engine: engine)
        let doc = try Data(contentsOf: URL(fileURLWithPath: package.documentPath))
        let page = try DocumentMetadata.read(package).pages[0].id
        let path = engine == .sqlite ? DocumentPackage.contentDatabaseFileName : "pages/\(page.uuidString).content"
        var streamed = 0
        var caught: StoreError?
        do {
            _ = try target.importPackage(document: doc, files: [ImportFile(path: path, size: size)]) { _, append in
                var left = Int(size)
                var first = true
                while left > 0 {
                    var piece = [UInt8](repeating: 0, count: min(left, 1 << 20))
                    if first { for (i, b) in prefix.enumerated() { piece[i] = b }; first = false }
                    try piece.withUnsafeBytes { try append($0) }
                    streamed += piece.count
                    left -= piece.count
                }
            }
        } catch { caught = error }
        #expect(try target.documents().isEmpty)
        #expect(target.stagingFolders().isEmpty)
        return (caught, streamed)
    }

    @Test func aPageFileOfZerosIsRefusedAtItsFirstPiece() throws {
        let (error, streamed) = try Self.importZeros(engine: .snapshot, size: 512 << 20)
        guard case .importRefused(let why, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(why.contains("does not start as a page file"), "\(why)")
        #expect(streamed <= 1 << 20, "\(streamed) bytes inflated before the refusal")
    }

    @Test func aDatabaseOfZerosIsRefusedAtItsFirstPiece() throws {
        Library.enableSQLiteEngine()
        let (error, streamed) = try Self.importZeros(engine: .sqlite, size: 3 << 30)
        guard case .importRefused(let why, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(why.contains("does not start as a SQLite database"), "\(why)")
        #expect(streamed <= 1 << 20)
        // The magic with a page size that does not divide the declared size.
        let header = Array("SQLite format 3\u{0}".utf8) + [0x10, 0x00]
        let (odd, _) = try Self.importZeros(engine: .sqlite, prefix: header, size: (1 << 20) + 100)
        guard case .importRefused(let oddWhy, _)? = odd else { Issue.record("\(String(describing: odd))"); return }
        #expect(oddWhy.contains("whole number of SQLite pages"), "\(oddWhy)")
    }
}
