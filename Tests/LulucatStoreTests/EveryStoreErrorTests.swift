// Every case of every public error of LulucatStore, LulucatInk and LulucatSQLite, as an app shows it:
// a sentence without ids or internal files, and a recovery suggestion (`userFacingProblems`). A new
// case stops the build at the switch of `name(_:)` until it is named there, and fails the test
// until a value of it is listed. Then the page number and the read-only library, as a session and a
// library meet them.

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
import LulucatStoreTesting
@testable import LulucatStore
@testable import LulucatStoreMaintenance
#if canImport(Glibc)
import Glibc
#endif

/// One value of each case (two where the page's number may or may not be known), with paths like
/// the store's own: a temporary file, a lock, document.json.
enum EveryStoreError {
    static let page = UUID(uuidString: "0A1B2C3D-0000-4000-8000-000000000001")!
    static let element = UUID(uuidString: "ABCDEF12-0000-4000-8000-000000000002")!
    static let package = "/home/u/Notes/\(UUID().uuidString).lnote"
    static let database = package + "/content.sqlite"

    static var storeErrors: [StoreError] {
        [
            .file(FileError("write", path: package + "/pages/\(temporaryFilePrefix)\(UUID().uuidString)-\(page.uuidString).content", errno: ENOSPC)),
            .corruptFile(path: package + "/document.json", reason: "bad json"),
            .corruptPage(page: page, path: package + "/pages/\(page.uuidString).content", .badMagic),
            .corruptPage(page: page, path: package + "/pages/\(page.uuidString).content", .badMagic, number: 3),
            .missingPage(page: page, path: package + "/pages/\(page.uuidString).content"),
            .missingPage(page: page, path: package + "/pages/\(page.uuidString).content", number: 3),
            .unsupportedVersion(path: package + "/manifest.json", found: 9, supported: 2),
            .invalidIdentifier("../x"),
            .unexpectedFileKind(path: package + "/pages/\(page.uuidString).content", found: .symlink),
            .documentInUse(path: package + "/.lock"),
            .documentNotFound("Trip"),
            .pageNotFound(page),
            .elementNotFound(element, page: page),
            .elementNotFound(element, page: page, number: 3),
            .sessionClosed,
            .documentGone(path: package),
            .migrationRefused(.verification(page: page, "hash differs", number: 3)),
            .cancelled,
            .invalidArgument("page index 9 is out of range"),
            .contentDatabase(.checksumMismatch(file: database, table: "elements", page: page, element: element)),
            .engineNotAvailable(.sqlite, path: package),
            .importRefused(reason: "\(package)/document.json is corrupt", cause: nil),
        ]
    }

    /// The case's name; no `default`, so a new case does not build until it is named here.
    static func name(_ e: StoreError) -> String {
        switch e {
        case .file: "file"
        case .corruptFile: "corruptFile"
        case .corruptPage: "corruptPage"
        case .missingPage: "missingPage"
        case .unsupportedVersion: "unsupportedVersion"
        case .invalidIdentifier: "invalidIdentifier"
        case .unexpectedFileKind: "unexpectedFileKind"
        case .documentInUse: "documentInUse"
        case .documentNotFound: "documentNotFound"
        case .pageNotFound: "pageNotFound"
        case .elementNotFound: "elementNotFound"
        case .sessionClosed: "sessionClosed"
        case .documentGone: "documentGone"
        case .migrationRefused: "migrationRefused"
        case .cancelled: "cancelled"
        case .invalidArgument: "invalidArgument"
        case .contentDatabase: "contentDatabase"
        case .engineNotAvailable: "engineNotAvailable"
        case .importRefused: "importRefused"
        }
    }
    /// The number of names in `name(_:)`.
    static let storeCaseCount = 19

    static var engineErrors: [SQLiteEngineError] {
        [
            .missing(file: database), .corrupt(file: database, detail: "file is not a database"),
            .newerSchema(file: database, found: 9, supported: 2), .unexpectedSchema(file: database, detail: "no table pages"),
            .invalidRow(file: database, table: "elements", detail: "short blob"), .inUse(file: database),
            .checksumMismatch(file: database, table: "pages", page: page, element: nil),
            .checksumMismatch(file: database, table: "elements", page: page, element: element, number: 2),
            .pageNotFound(file: database, page: page), .pageNotFound(file: database, page: page, number: 2),
            .elementNotFound(file: database, page: page, element: element),
            .elementNotFound(file: database, page: page, element: element, number: 2),
            .duplicateElement(file: database, page: page, element: element),
            .duplicateElement(file: database, page: page, element: element, number: 2),
            .unencodable("channel"), .invalidChange("below itself"),
            .database(file: database, SQLiteFailure(extendedCode: SQLiteFailure.full, description: "SQLITE_FULL")),
        ]
    }

    static func name(_ e: SQLiteEngineError) -> String {
        switch e {
        case .missing: "missing"
        case .corrupt: "corrupt"
        case .newerSchema: "newerSchema"
        case .unexpectedSchema: "unexpectedSchema"
        case .invalidRow: "invalidRow"
        case .inUse: "inUse"
        case .checksumMismatch: "checksumMismatch"
        case .pageNotFound: "pageNotFound"
        case .elementNotFound: "elementNotFound"
        case .duplicateElement: "duplicateElement"
        case .unencodable: "unencodable"
        case .invalidChange: "invalidChange"
        case .database: "database"
        }
    }
    static let engineCaseCount = 13

    static var pageFormatErrors: [PageFormatError] {
        [.truncated(offset: 12, needed: 4, available: 1), .badMagic, .unsupportedVersion(99), .unknownCodec(7),
         .checksumMismatch(stored: 0xDEADBEEF, computed: 0xABCDEF12), .invalidField(offset: 3, "count"), .unencodable("channel")]
    }

    static func name(_ e: PageFormatError) -> String {
        switch e {
        case .truncated: "truncated"
        case .badMagic: "badMagic"
        case .unsupportedVersion: "unsupportedVersion"
        case .unknownCodec: "unknownCodec"
        case .checksumMismatch: "checksumMismatch"
        case .invalidField: "invalidField"
        case .unencodable: "unencodable"
        }
    }
    static let pageFormatCaseCount = 7

    static var migrationErrors: [MigrationError] {
        [.verification(page: page, "content hash differs"), .verification(page: page, "content hash differs", number: 4),
         .verification(page: nil, "asset missing")]
    }

    static func name(_ e: MigrationError) -> String {
        switch e {
        case .verification: "verification"
        }
    }

    /// A FileError for each kind of place (a page's file, its temporary, a preview, an image, the
    /// content database, document.json, the lock, a library file, a file in no library) and each
    /// errno the store meets.
    static var fileErrors: [FileError] {
        let places = [
            package + "/pages/\(page.uuidString).content", package + "/pages/\(temporaryFilePrefix)\(UUID().uuidString)-\(page.uuidString).journal",
            package + "/thumbnails/\(page.uuidString).jpg", package + "/assets/\(UUID().uuidString).png", database,
            package + "/document.json", package + "/.lock", "/home/u/Notes/\(temporaryFilePrefix)\(UUID().uuidString).lnote",
            "/home/u/Notes/.sync/state.json", "/home/u/Downloads/export.zip",
        ]
        var all: [FileError] = []
        for path in places {
            for errno in [ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, ENOTDIR, EIO, EINVAL, EAGAIN, EBUSY, EEXIST] {
                all.append(FileError("write", path: path, errno: errno))
                var numbered = FileError("open", path: path, errno: errno)
                numbered.pageNumber = 2
                all.append(numbered)
            }
            all.append(FileError("open", path: path, errno: ELOOP, found: "symbolic link"))
            all.append(FileError("read", path: path, errno: EACCES))
        }
        return all
    }
}

@Suite struct EveryStoreErrorTests {
    private func check(_ e: any LocalizedError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(userFacingProblems(e) == [], "\(e)", sourceLocation: sourceLocation)
    }

    @Test func everyCaseIsASentenceWithARecovery() {
        let store = EveryStoreError.storeErrors
        #expect(Set(store.map(EveryStoreError.name)).count == EveryStoreError.storeCaseCount, "a case of StoreError has no value listed")
        for e in store { check(e) }
        let engine = EveryStoreError.engineErrors
        #expect(Set(engine.map(EveryStoreError.name)).count == EveryStoreError.engineCaseCount, "a case of SQLiteEngineError has no value listed")
        for e in engine {
            check(e)
            check(StoreError.contentDatabase(e))
        }
        let format = EveryStoreError.pageFormatErrors
        #expect(Set(format.map(EveryStoreError.name)).count == EveryStoreError.pageFormatCaseCount, "a case of PageFormatError has no value listed")
        for e in format { check(e) }
        let migration = EveryStoreError.migrationErrors
        #expect(Set(migration.map(EveryStoreError.name)).count == 1)
        for e in migration { check(e) }
        for e in EveryStoreError.fileErrors {
            check(e)
            check(StoreError.file(e))
        }
        for code in [SQLiteFailure.full, SQLiteFailure.readonly, SQLiteFailure.busy, SQLiteFailure.locked, SQLiteFailure.ioError, 1, 11, 19, 2067] {
            check(SQLiteFailure(extendedCode: code, description: "SQLite error \(code)"))
        }
        check(PageChangeError("update names element X, which the page does not have"))
        check(QuantizeError(what: "x", value: .nan, allowed: "finite"))
        let codes: [ResultCode] = [.error, .abort, .busy, .locked, .readonly, .ioError, .corrupt, .full, .notFound, .cantOpen,
                                   .constraint, .mismatch, .misuse, .range, .notADatabase]
        for c in codes { check(SQLiteError(extendedCode: c.rawValue, message: "m", sql: "SELECT 1", path: EveryStoreError.database)) }
        for errno in [ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, EIO, EINVAL] { check(SQLiteFileBackendError(errno: errno)) }
    }

    /// A page is named by its number when the error carries it, else "a page"; never by its id.
    @Test func pagesByTheirNumber() {
        let page = EveryStoreError.page, path = EveryStoreError.package + "/pages/\(page.uuidString).content"
        #expect(StoreError.corruptPage(page: page, path: path, .badMagic, number: 3).localizedDescription == "Page 3 is damaged and cannot be read.")
        #expect(StoreError.corruptPage(page: page, path: path, .badMagic).localizedDescription == "A page is damaged and cannot be read.")
        #expect(StoreError.missingPage(page: page, path: path, number: 2).localizedDescription == "The content of page 2 is missing.")
        #expect(StoreError.elementNotFound(UUID(), page: page, number: 4).localizedDescription == "The selection is no longer on page 4.")
        var full = FileError("write", path: path, errno: ENOSPC)
        full.pageNumber = 5
        #expect(StoreError.file(full).localizedDescription == "Page 5 could not be saved because the device is full.")
        #expect(MigrationError.verification(page: page, "x", number: 6).localizedDescription.contains("page 6 would have changed"))
        // Filling the numbers from the document's order: the page's place, or none for a page
        // that is not in it.
        let order = [UUID(), UUID(), page]
        let numbered = StoreError.file(FileError("write", path: path, errno: ENOSPC)).numberingPages(order)
        #expect(numbered.localizedDescription == "Page 3 could not be saved because the device is full.")
        #expect(StoreError.contentDatabase(.checksumMismatch(file: EveryStoreError.database, table: "pages", page: page, element: nil))
            .numberingPages(order).localizedDescription == "Part of page 3 is damaged and cannot be read.")
        #expect(StoreError.corruptPage(page: UUID(), path: path, .badMagic).numberingPages(order).localizedDescription
            == "A page is damaged and cannot be read.")
        // The log keeps the id where the number is not known, and the number where it is.
        #expect(StoreError.corruptPage(page: page, path: path, .badMagic).description.contains(page.uuidString))
        #expect(StoreError.corruptPage(page: page, path: path, .badMagic, number: 3).description.hasPrefix("page 3 ("))
    }

    /// A link, a folder or a device where a file should be is said as that, not as damage.
    @Test func somethingElseInAFilesPlace() {
        let path = EveryStoreError.package + "/pages/\(EveryStoreError.page.uuidString).content"
        #expect(StoreError.unexpectedFileKind(path: path, found: .symlink).localizedDescription
            == "A page of the document cannot be opened: a link to another place is in its place, which the app does not open.")
        #expect(StoreError.unexpectedFileKind(path: EveryStoreError.package + "/document.json", found: .other).localizedDescription
            == "The document cannot be opened: a device or a pipe is in its place, which the app does not open.")
        var linked = FileError("open", path: path, errno: ELOOP, found: "symbolic link")
        linked.pageNumber = 2
        #expect(linked.localizedDescription == "Page 2 could not be opened: a link to another place is in its place, which the app does not open.")
        #expect(FileError("open", path: path, errno: EINVAL, found: "FIFO").localizedDescription.contains("a device or a pipe is in its place"))
        #expect(StoreError.unexpectedFileKind(path: path, found: .symlink).recoverySuggestion?.hasPrefix("Move away what is in its place") == true)
    }

    /// A library on a read-only volume, or that the app may not write, is said as such, never by
    /// its lock or a temporary file; a read refused is not said to be the library.
    @Test func aLibraryThatCannotBeWrittenSaysSo() {
        let root = "/home/u/Notes", package = root + "/\(UUID().uuidString).lnote"
        let cases: [(String, Int32, String)] = [
            (package + "/.lock", EROFS, "it is on a read-only file system"),
            (root + "/\(temporaryFilePrefix)\(UUID().uuidString).lnote", EROFS, "it is on a read-only file system"),
            (package + "/pages/\(temporaryFilePrefix)\(UUID().uuidString)-x.content", EACCES, "permission to write in it was denied"),
            (root + "/.trash/\(UUID().uuidString).lnote/document.json", EPERM, "permission to write in it was denied"),
            (root + "/.sync/state.json", EROFS, "it is on a read-only file system"),
        ]
        for (path, errno, why) in cases {
            let e = StoreError.file(FileError("open", path: path, errno: errno))
            #expect(e.localizedDescription == "The library Notes cannot be written: \(why).", "\(path)")
            #expect(FileError("open", path: path, errno: errno).localizedDescription == e.localizedDescription)
            #expect(e.recoverySuggestion?.contains("folder the app can write to") == true)
            #expect(StoreError.libraryRoot(containing: path) == root, "\(path)")
        }
        // lnote says it with the library's path, in the same words.
        #expect(StoreError.notWritable(library: root, errno: EROFS) == "the library /home/u/Notes cannot be written: it is on a read-only file system")
        // A page that cannot be read for lack of permission is that page, not the library.
        var read = FileError("read", path: package + "/pages/\(UUID().uuidString).content", errno: EACCES)
        read.pageNumber = 2
        #expect(read.localizedDescription == "Page 2 could not be opened or saved: permission was denied.")
    }

    /// A read-only bind mount of a library (root with CAP_SYS_ADMIN): making a document and opening
    /// one for writing fail with the library's sentence, never its lock or a temporary file.
    @Test(.enabled(if: ReadOnlyMount.available, "needs a read-only bind mount (root with CAP_SYS_ADMIN)"))
    func aReadOnlyMountedLibrarySaysSo() async throws {
        let tmp = TemporaryFolder()
        let source = tmp.path + "/src", ro = tmp.path + "/Notes"
        let made = try await Library(root: source).createDocument(title: "First")
        #expect(ReadOnlyMount.mount(source, at: ro))
        defer { ReadOnlyMount.unmount(ro) }
        let library = Library(root: ro)
        let said = "The library Notes cannot be written: it is on a read-only file system."
        do {
            _ = try await library.createDocument(title: "Second")
            Issue.record("a document was made in a read-only library")
        } catch {
            #expect(error.localizedDescription == said)
            #expect(error.isPermissionDenied)
            #expect(userFacingProblems(error) == [])
        }
        do {
            let session = try await library.open(made.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            try await session.close()
            Issue.record("a document of a read-only library was opened for writing")
        } catch {
            #expect(error.localizedDescription == said)
        }
    }
}

/// A session names the page of a failure by its number in the document.
@Suite struct PageNumberInErrorsTests {
    init() { Library.enableSQLiteEngine() }
    private func stroke() -> Stroke {
        Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 10),
               samples: [Sample(x: 10, y: 5, radius: 10, pressure: 500, time: 0), Sample(x: 15, y: 9, radius: 10, pressure: 500, time: 4)])
    }

    /// Page 3 of 3 whose file is gone; the full disk while saving page 2; a selection erased
    /// meanwhile on page 2: each says its page's number.
    @Test(arguments: EngineKind.allCases)
    func aSessionNamesPageK(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let fs = InstrumentedFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try await library.createDocument(title: "Three", engine: engine)
        var session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        _ = try await session.addPage()
        _ = try await session.addPage()
        let pages = await session.pageIDs()
        for p in pages { try await session.append(stroke(), to: p) }
        try await session.flush()
        // A full disk while page 2 is saved.
        try await session.append(stroke(), to: pages[1])
        fs.failPathContaining = engine == .sqlite ? "content.sqlite" : pages[1].uuidString
        var caught: StoreError?
        do { try await session.flush() } catch { caught = error }
        fs.failPathContaining = nil
        let full = try #require(caught)
        if engine == .sqlite {
            #expect(full.localizedDescription == "The document's content could not be saved because the device is full.")
        } else {
            #expect(full.localizedDescription == "Page 2 could not be saved because the device is full.")
        }
        try await session.flush()
        // A selection no longer on page 2.
        do {
            try await session.erase(stroke: UUID(), keeping: [], on: pages[1])
            Issue.record("an element not on the page was erased")
        } catch {
            #expect(error.localizedDescription == "The selection is no longer on page 2.")
        }
        try await session.close()
        guard engine == .snapshot else { return }
        // Page 3's file gone: reading it says page 3.
        try FileManager.default.removeItem(atPath: package.pagePath(pages[2]))
        session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        do {
            _ = try await session.content(of: pages[2])
            Issue.record("a page without its file was read")
        } catch {
            #expect(error.localizedDescription == "The content of page 3 is missing.", "\(error)")
            #expect(userFacingProblems(error) == [])
        }
        try await session.close()
    }
}

/// The check itself finds what it is for: Foundation's generic words, a page id, an internal file,
/// no sentence, no recovery.
@Suite struct UserFacingCheckTests {
    struct Shown: LocalizedError {
        var errorDescription: String?
        var recoverySuggestion: String?
    }

    @Test func theCheckFindsEachFault() {
        #expect(userFacingProblems(Shown(errorDescription: "Page 3 is damaged.", recoverySuggestion: "Repair it.")) == [])
        let faults = [
            Shown(errorDescription: nil, recoverySuggestion: "Repair it."),
            Shown(errorDescription: "The operation could not be completed. (LulucatStore.StoreError error 1.)", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "Page 0A1B2C3D is damaged.", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "Page 0A1B2C3D-0000-4000-8000-000000000001 is damaged.", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "Could not open /x/.lnote-tmp-1-2.lnote.", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "Could not open /x/A.lnote/.lock.", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "page 3 is damaged", recoverySuggestion: "Repair it."),
            Shown(errorDescription: "Page 3 is damaged.", recoverySuggestion: nil),
        ]
        for f in faults { #expect(!userFacingProblems(f).isEmpty, "\(f)") }
        // A byte count is not a page id.
        #expect(userFacingProblems(Shown(errorDescription: "It is 12345678 bytes.", recoverySuggestion: "Free space.")) == [])
    }
}

@Suite struct ImportRejectedTextTests {
    /// An import refused for what verify found says each finding on one line: no line break,
    /// which lnote would show as an escaped "\n".
    @Test func anImportRefusedForFindingsIsOneLine() {
        let error = StoreError.importRejected([Finding(.error, "pages/A.content", "checksum mismatch"),
                                               Finding(.error, "document.json", "page 2 is listed twice")])
        // What lnote prints (the reason), and what an app shows (the sentence): one line each.
        let reason = "\(error)"
        #expect(!reason.contains("\n") && reason.contains("checksum mismatch; error: document.json: page 2 is listed twice"), "\(reason)")
        #expect(!(error.errorDescription ?? "\n").contains("\n"))
    }
}

