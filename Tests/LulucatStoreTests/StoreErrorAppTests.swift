// What an app shows of a StoreError: localized descriptions that name the page, never a temporary
// file or a descriptor; the predicates, the same on every engine; typed, cancellable migration.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite
#if canImport(Glibc)
import Glibc
#endif

@Suite struct StoreErrorAppTests {
    init() { Library.enableSQLiteEngine() }
    private func stroke(_ k: Int) -> Stroke {
        Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 10),
               samples: [Sample(x: Int32(10 * k), y: 5, radius: 10, pressure: 500, time: 0),
                         Sample(x: Int32(10 * k + 5), y: 9, radius: 10, pressure: 500, time: 4)])
    }

    /// A full disk while saving a page: the message names that page, and says nothing of the
    /// temporary file or the descriptor the failing call used; the same predicates on every engine.
    @Test(arguments: EngineKind.allCases)
    func fullDiskNamesThePageOnEveryEngine(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let fs = InstrumentedFileSystem()
        let library = Library(root: tmp.path, fileSystem: fs)
        let package = try await library.createDocument(title: "Full", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.append(stroke(1), to: page)
        fs.failPathContaining = engine == .sqlite ? "content.sqlite" : page.uuidString
        var caught: StoreError?
        do { try await session.flush() } catch { caught = error }
        fs.failPathContaining = nil
        let error = try #require(caught)
        // One shape for every engine: a file error with ENOSPC.
        guard case .file(let e) = error else { Issue.record("\(engine): \(error) is not a file error"); return }
        #expect(e.errno == ENOSPC)
        #expect(error.isOutOfSpace && error.isRetryable)
        #expect(!error.isCorruption && !error.isInUse && !error.isPermissionDenied && !error.isDocumentGone)
        let text = error.localizedDescription
        #expect(!text.contains("fd ") && !text.contains(temporaryFilePrefix) && !text.contains("/"), "\(text)")
        if engine == .sqlite {
            #expect(text == "The document's content could not be saved because the device is full.")
        } else {
            // The session names the page by its number in the document, never by its id.
            #expect(text == "Page 1 could not be saved because the device is full.")
            // The error itself names the page's file, not the temporary one.
            #expect(e.path == package.pagePath(page) || e.path == package.journalPath(page), "\(e.path)")
        }
        #expect(error.recoverySuggestion?.contains("Free some space") == true)
        // Nothing was lost: the next flush saves.
        try await session.flush()
        try await session.close()
    }

    @Test func predicatesAndMessagesOfEachCase() {
        let page = UUID(uuidString: "0A1B2C3D-0000-0000-0000-000000000000")!
        let docPath = "/lib/\(UUID().uuidString).lnote"
        let cases: [(StoreError, out: Bool, perm: Bool, corrupt: Bool, gone: Bool, inUse: Bool, retry: Bool, text: String)] = [
            (.file(FileError("write", path: docPath + "/pages/\(page.uuidString).content", errno: EDQUOT)), true, false, false, false, false, true,
             "A page of the document could not be saved because the device is full."),
            (.file(FileError("open", path: docPath + "/assets/\(temporaryFilePrefix)\(UUID().uuidString)-x.jpg", errno: EACCES)), false, true, false, false, false, false,
             "The library lib cannot be written: permission to write in it was denied."),
            (.file(FileError("read", path: docPath + "/assets/\(UUID().uuidString).jpg", errno: EACCES)), false, true, false, false, false, false,
             "An image in the document could not be opened or saved: permission was denied."),
            (.file(FileError("rename", path: docPath + "/document.json", errno: EROFS)), false, true, false, false, false, false,
             "The library lib cannot be written: it is on a read-only file system."),
            (.corruptPage(page: page, path: docPath + "/pages/x", .truncated(offset: 0, needed: 4, available: 0)), false, false, true, false, false, false,
             "A page is damaged and cannot be read."),
            (.corruptFile(path: docPath + "/document.json", reason: "bad json"), false, false, true, false, false, false,
             "The document is damaged and cannot be read."),
            (.missingPage(page: page, path: docPath), false, false, true, false, false, false, "The content of a page is missing."),
            (.documentInUse(path: docPath), false, false, false, false, true, true, "The document is open in another window or app."),
            (.contentDatabase(.inUse(file: docPath + "/content.sqlite")), false, false, false, false, true, true, "The document is open in another window or app."),
            (.contentDatabase(.corrupt(file: docPath + "/content.sqlite", detail: "x")), false, false, true, false, false, false,
             "The document's content is damaged and cannot be read."),
            (.documentGone(path: docPath), false, false, false, true, false, true,
             "The document was moved or deleted while it was open; recent changes are not saved yet."),
            (.documentNotFound("x"), false, false, false, true, false, false, "The document could not be found."),
            (.sessionClosed, false, false, false, false, false, false, "The document is closed."),
            (.cancelled, false, false, false, false, false, false, "The operation was cancelled."),
            // Not damage, not retryable: the same build will refuse it again; a build with the engine opens it.
            (.engineNotAvailable(.sqlite, path: docPath), false, false, false, false, false, false,
             "The document was made with a storage engine this version of the app does not include. It was left as it was."),
        ]
        for c in cases {
            #expect(c.0.isOutOfSpace == c.out, "\(c.0)")
            #expect(c.0.isPermissionDenied == c.perm, "\(c.0)")
            #expect(c.0.isCorruption == c.corrupt, "\(c.0)")
            #expect(c.0.isDocumentGone == c.gone, "\(c.0)")
            #expect(c.0.isInUse == c.inUse, "\(c.0)")
            #expect(c.0.isRetryable == c.retry, "\(c.0)")
            #expect(c.0.localizedDescription == c.text)
            #expect(c.0.errorDescription?.contains(docPath) == false)
        }
        #expect(StoreError.sessionClosed.recoverySuggestion == "Open the document again.")
        #expect(StoreError.engineNotAvailable(.sqlite, path: docPath).recoverySuggestion?.contains("nothing in it was changed") == true)
        #expect(StoreError.documentInUse(path: docPath).recoverySuggestion?.contains("other window") == true)
    }

    /// migrate throws StoreError (typed), and a cancelled task leaves the document on its engine.
    @Test func migrationIsTypedAndCancellable() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Cancel me")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(stroke(1), to: session.pageIDs()[0])
        try await session.close()
        let task = Task { () -> StoreError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(StoreError) { try EngineMigration().migrate(package, to: .sqlite) } catch { return error }  // typed: StoreError
            return nil
        }
        let error = await task.value
        guard case .cancelled? = error else { Issue.record("expected cancelled, got \(String(describing: error))"); return }
        #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).engine == .snapshot)
        #expect(!FileManager.default.fileExists(atPath: package.contentDatabasePath))
        #expect(!FileManager.default.fileExists(atPath: package.path + "/.migration"))
        #expect(try EngineMigration().migrate(package, to: .sqlite).migrated)
    }
}

@Suite struct SessionAssetTests {
    init() { Library.enableSQLiteEngine() }
    private let frame = QuantizedRect(x: 0, y: 0, width: 100, height: 100)

    @Test(arguments: EngineKind.allCases)
    func sameBytesShareOneAssetAndItsFileCanBeFound(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Pictures", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let bytes = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9])
        let a = try await session.insertImage(bytes, fileExtension: "jpg", frame: frame, on: page)
        let b = try await session.insertImage(bytes, fileExtension: "JPG", frame: frame, on: page)
        let c = try await session.insertImage(bytes + Data([7]), fileExtension: "jpg", frame: frame, on: page)
        #expect(a.id != b.id && a.assetID == b.assetID && c.assetID != a.assetID)
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.assetsPath).filter { !$0.hasPrefix(".") }.count == 2)
        let path = try await session.assetPath(of: a)
        #expect(path == package.assetPath(a.assetID, ext: "jpg"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        // Deleting one of the two images keeps the shared file for the other.
        try await session.delete([a.id], from: page)
        try await session.close()
        #expect(FileManager.default.fileExists(atPath: package.assetPath(b.assetID, ext: "jpg")))
        // Another session finds the same asset for the same bytes.
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let d = try await again.insertImage(bytes, fileExtension: "jpg", frame: frame, on: page)
        #expect(d.assetID == b.assetID)
        try await again.close()
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
    }

    /// A file already under the hashed id with other bytes (from another device) is not trusted.
    @Test func aDifferentFileUnderTheHashedIdIsLeftAlone() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Impostor")
        let bytes = Data([1, 2, 3, 4])
        let hashed = DocumentSession.assetID(bytes, ext: "png")
        try Data([9, 9]).write(to: URL(fileURLWithPath: package.assetPath(hashed, ext: "png")))
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let image = try await session.insertImage(bytes, fileExtension: "png", frame: frame, on: session.pageIDs()[0])
        #expect(image.assetID != hashed)
        let path = try await session.assetPath(of: image)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: package.assetPath(hashed, ext: "png"))) == Data([9, 9]))
        try await session.close()
    }

    /// An image whose asset is not in the package is refused, by every call that adds elements.
    @Test func anImageWithoutItsAssetIsRefused() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Dangling")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let dangling = Element.image(ImageElement(assetID: UUID(), frame: frame))
        let real = try await session.insertImage(Data([1, 2]), fileExtension: "png", frame: frame, on: page)
        let attempts: [() async throws -> Void] = [
            { try await session.append([dangling], to: page) },
            { try await session.apply([.append([dangling])], to: page) },
            { try await session.apply([.replace(real.id, with: [dangling])], to: page) },
        ]
        for attempt in attempts {
            do {
                try await attempt()
                Issue.record("a dangling image was accepted")
            } catch {
                #expect("\(error)".contains("not in the document"))
            }
        }
        #expect(try await session.content(of: page).elements.map(\.id) == [real.id])
        do {
            _ = try await session.assetPath(of: ImageElement(assetID: UUID(), frame: frame))
            Issue.record("a missing asset was found")
        } catch {
            guard case .invalidArgument = error else { Issue.record("\(error)"); return }
        }
        try await session.close()
    }
}
