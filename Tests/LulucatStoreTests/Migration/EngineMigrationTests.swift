// Migration between engines: every page's content hash and the assets survive both directions,
// and a crash after any step leaves a document that opens with all its data.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite

/// A document of three pages: strokes with and without channels, an image with its asset, an
/// element of a kind this build does not know. Returns each page's content hash.
func richDocument(_ library: Library, engine: EngineKind) async throws -> (DocumentPackage, [UUID: String], UUID) {
    let package = try await library.createDocument(title: "Rich", engine: engine)
    let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
    var pages = await session.pageIDs()
    pages.append(try await session.addPage(canvas: .a4))
    pages.append(try await session.addPage())
    try await session.append([.stroke(makeStroke(1)), .stroke(makeStroke(2, channels: .all)), .unknown(makeUnknown(kind: 9))], to: pages[0])
    let image = try await session.insertImage(Data([0xFF, 0xD8, 0xFF, 0xD9]), fileExtension: "jpg",
                                              frame: QuantizedRect(x: 5, y: 6, width: 70, height: 80), on: pages[1])
    try await session.append((3..<23).map { .stroke(makeStroke($0, samples: 120, channels: [.azimuth])) }, to: pages[1])
    try await session.erase(stroke: await session.content(of: pages[1]).strokes[3].id, keeping: [0..<10, 20..<120], on: pages[1])
    var hashes: [UUID: String] = [:]
    for p in pages { hashes[p] = try await session.content(of: p).contentHash() }
    try await session.close()
    return (package, hashes, image.assetID)
}

/// Opens the document through a session and checks every page's hash; returns the open report.
func expectContent(_ library: Library, _ package: DocumentPackage, _ hashes: [UUID: String],
                   engine: EngineKind, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Finding] {
    let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
    #expect(await session.engineKind == engine, sourceLocation: sourceLocation)
    #expect(Set(await session.pageIDs()) == Set(hashes.keys), sourceLocation: sourceLocation)
    for (page, hash) in hashes {
        #expect(try await session.content(of: page).contentHash() == hash, sourceLocation: sourceLocation)
    }
    let report = await session.openReport
    try await session.close()
    return report
}

/// What a package holds of each engine's form.
func formFiles(_ package: DocumentPackage) -> (snapshots: Int, database: Bool, sideFiles: Bool, marker: Bool) {
    let pages = (try? FileManager.default.contentsOfDirectory(atPath: package.pagesPath)) ?? []
    let top = packageFiles(package)
    return (pages.filter { $0.hasSuffix(".content") }.count, top.contains("content.sqlite"),
            top.contains { $0.hasPrefix("content.sqlite-") || $0.contains("migrate-") }, top.contains(EngineMigration.markerName))
}

@Suite struct EngineMigrationTests {
    init() { Library.enableSQLiteEngine() }

    /// A SQLite package has no pages/ folder (docs/package-format.md): made without it, a migration
    /// into SQLite removes the emptied one, and sessions, verify, repair and duplicate never make
    /// it again; migrating back makes it; a package with the empty pages/ of older builds reads
    /// the same.
    @Test func aSQLitePackageHasNoPagesFolder() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        func hasPages(_ p: DocumentPackage) -> Bool { FileManager.default.fileExists(atPath: p.pagesPath) }
        let fresh = try await library.createDocument(title: "New", engine: .sqlite)
        #expect(!hasPages(fresh))
        let session = try await library.open(fresh.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let first = await session.pageIDs()[0]
        try await session.append([.stroke(makeStroke(1))], to: first)
        try await session.close()
        #expect(!hasPages(fresh))
        #expect(DocumentVerifier().verify(fresh).isEmpty)

        let (package, hashes, _) = try await richDocument(library, engine: .snapshot)
        #expect(hasPages(package))
        _ = try EngineMigration().migrate(package, to: .sqlite)
        #expect(!hasPages(package))
        #expect(try await expectContent(library, package, hashes, engine: .sqlite).isEmpty)
        #expect(!hasPages(package))
        #expect(DocumentVerifier().verify(package).isEmpty)
        #expect(try DocumentRepair().repair(package).isEmpty)
        #expect(!hasPages(package))
        let copy = try await library.duplicate(package.id)
        #expect(!hasPages(copy))
        #expect(DocumentVerifier().verify(copy).isEmpty)

        // The empty pages/ of a package made before the rule: read the same, left as it is.
        try FileManager.default.createDirectory(atPath: package.pagesPath, withIntermediateDirectories: false)
        #expect(DocumentVerifier().verify(package).isEmpty)
        #expect(try await expectContent(library, package, hashes, engine: .sqlite).isEmpty)
        #expect(hasPages(package))
        try FileManager.default.removeItem(atPath: package.pagesPath)

        _ = try EngineMigration().migrate(package, to: .snapshot)
        #expect(formFiles(package).snapshots == 3)
        #expect(try await expectContent(library, package, hashes, engine: .snapshot).isEmpty)
        #expect(DocumentVerifier().verify(package).isEmpty)
    }

    @Test func snapshotToSQLiteAndBackKeepsEveryPageHashAndAsset() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, hashes, asset) = try await richDocument(library, engine: .snapshot)
        var phases: [MigrationProgress.Phase] = []
        let toSQLite = try EngineMigration().migrate(package, to: .sqlite) { phases.append($0.phase) }
        #expect(toSQLite.migrated && toSQLite.from == .snapshot && toSQLite.to == .sqlite)
        #expect(toSQLite.pages == 3 && toSQLite.elements == 3 + 22 && toSQLite.assets == 1)
        #expect(phases == Array(repeating: .writing, count: 3) + Array(repeating: .verifying, count: 3))
        #expect(formFiles(package) == (0, true, false, false))
        #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).engine == .sqlite)
        #expect(DocumentVerifier().verify(package).isEmpty)
        _ = try await expectContent(library, package, hashes, engine: .sqlite)

        let toSnapshot = try EngineMigration().migrate(package, to: .snapshot)
        #expect(toSnapshot.migrated && toSnapshot.elements == 25 && toSnapshot.assets == 1)
        #expect(formFiles(package) == (3, false, false, false))
        #expect(FileManager.default.fileExists(atPath: package.assetPath(asset, ext: "jpg")))
        #expect(DocumentVerifier().verify(package).isEmpty)
        _ = try await expectContent(library, package, hashes, engine: .snapshot)

        // Already there: nothing is written.
        let again = try EngineMigration().migrate(package, to: .snapshot)
        #expect(!again.migrated)
    }

    @Test func savesOnlyInTheWALOfACrashedSessionAreMigrated() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, hashes, _) = try await richDocument(library, engine: .sqlite)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[2]
        try await session.append((0..<5).map { .stroke(makeStroke(200 + $0, samples: 500)) }, to: page)
        try await session.save()
        var expected = hashes
        expected[page] = try await session.content(of: page).contentHash()
        await session.abandon()  // killed: the save is in the WAL, document.json lags
        #expect((fileSize(package.contentDatabasePath + "-wal") ?? 0) > 0)
        try EngineMigration().migrate(package, to: .snapshot)
        #expect(formFiles(package) == (3, false, false, false))
        _ = try await expectContent(library, package, expected, engine: .snapshot)
    }

    @Test func anOpenDocumentIsRefusedUntouched() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Busy")
        let session = try await library.open(package.id)
        #expect {
            try EngineMigration().migrate(package, to: .sqlite)
        } throws: { error in
            if case StoreError.documentInUse = error { return true } else { return false }
        }
        try await session.close()
        #expect(formFiles(package) == (1, false, false, false))
    }

    @Test func aPageShowingAMissingAssetRefusesTheMigrationAndLeavesTheOldForm() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, hashes, asset) = try await richDocument(library, engine: .snapshot)
        try FileManager.default.removeItem(atPath: package.assetPath(asset, ext: "jpg"))
        #expect {
            try EngineMigration().migrate(package, to: .sqlite)
        } throws: { error in
            "\(error)".contains(asset.uuidString) && "\(error)".contains("unchanged")
        }
        #expect(formFiles(package) == (3, false, false, false))
        _ = try await expectContent(library, package, hashes, engine: .snapshot)
    }

    /// A crash right after each step, in both directions: the document opens on the engine
    /// document.json names with every page's hash intact, and the open removed the other form.
    @Test(arguments: [EngineKind.snapshot, .sqlite])
    func aCrashAfterAnyStepLeavesADocumentThatOpensWithAllItsData(from source: EngineKind) async throws {
        let target: EngineKind = source == .snapshot ? .sqlite : .snapshot
        for step in MigrationStep.allCases {
            let tmp = TemporaryFolder()
            let library = Library(root: tmp.path)
            let (package, hashes, asset) = try await richDocument(library, engine: source)
            var migration = EngineMigration()
            migration.stopAfter = step
            #expect(throws: EngineMigration.Stopped(step: step)) { try migration.migrateStoppable(package, to: target) }
            #expect(formFiles(package).marker, "step \(step.rawValue)")
            let switched = MigrationStep.allCases.firstIndex(of: step)! >= MigrationStep.allCases.firstIndex(of: .switched)!
            let engine = switched ? target : source
            #expect(try PackageReader.readDocument(package, fileSystem: PosixFileSystem()).engine == engine)
            // Before any open, verify already finds the document whole, and says a migration stopped.
            let before = DocumentVerifier().verify(package)
            #expect(!before.contains { $0.severity == .error }, "step \(step.rawValue): \(before)")
            #expect(before.contains { $0.path.hasSuffix(EngineMigration.markerName) && $0.severity == .warning })

            let report = try await expectContent(library, package, hashes, engine: engine)
            #expect(report.contains { $0.path.hasSuffix(EngineMigration.markerName) }, "step \(step.rawValue)")
            let files = formFiles(package)
            #expect(!files.marker && !files.sideFiles, "step \(step.rawValue)")
            if engine == .sqlite { #expect(files.snapshots == 0 && files.database, "step \(step.rawValue)") }
            else { #expect(files.snapshots == 3 && !files.database, "step \(step.rawValue)") }
            #expect(FileManager.default.fileExists(atPath: package.assetPath(asset, ext: "jpg")))
            #expect(DocumentVerifier().verify(package).isEmpty, "step \(step.rawValue)")

            // The migration can simply be run again and completes.
            try EngineMigration().migrate(package, to: target)
            _ = try await expectContent(library, package, hashes, engine: target)
        }
    }
}

/// docs/sqlite-engine.md §3.3: a small document migrated into SQLite gets 1 KiB pages (its fixed
/// pages are 9 KiB, not 36 KiB); a large one keeps 4 KiB pages. Both read back equal and verify.
@Suite struct SQLiteMigrationPageSizeTests {
    init() { Library.enableSQLiteEngine() }
    /// Page size (offset 16), WAL bytes (18, 19) and file size of a closed `content.sqlite`.
    func header(_ package: DocumentPackage) throws -> (pageSize: Int, wal: Bool, bytes: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: package.contentDatabasePath)))
        let size = Int(bytes[16]) << 8 | Int(bytes[17])
        return (size == 1 ? 65_536 : size, bytes[18] == 2 && bytes[19] == 2, bytes.count)
    }

    func onePageDocument(_ library: Library, strokes: Int, samples: Int) async throws -> (DocumentPackage, [UUID: String], Int) {
        let package = try await library.createDocument(title: "Small", engine: .snapshot)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        try await session.append((0..<strokes).map { .stroke(makeStroke($0, samples: samples)) }, to: page)
        let hash = try await session.content(of: page).contentHash()
        try await session.close()
        let pageFiles = try FileManager.default.contentsOfDirectory(atPath: package.pagesPath)
        let pageBytes = try pageFiles.reduce(0) { sum, name in
            sum + ((try FileManager.default.attributesOfItem(atPath: package.pagesPath + "/" + name))[.size] as? Int ?? 0)
        }
        return (package, [page: hash], pageBytes)
    }

    @Test func aOnePageDocumentGetsOneKiBPagesAndStaysSmall() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, hashes, pageBytes) = try await onePageDocument(library, strokes: 60, samples: 40)
        #expect(pageBytes > 0)
        #expect(try EngineMigration().migrate(package, to: .sqlite).migrated)
        let h = try header(package)
        #expect(h.pageSize == 1_024 && h.wal)
        #expect(h.bytes % 1_024 == 0)
        // Below even the empty schema at 4 KiB (9 pages, 36,864 bytes); at most the 9 fixed
        // 1 KiB pages plus twice the page file's bytes.
        #expect(h.bytes < 9 * 4_096)
        #expect(h.bytes <= 9 * 1_024 + 2 * pageBytes, "content.sqlite \(h.bytes) bytes, page file \(pageBytes)")
        #expect(formFiles(package) == (0, true, false, false))
        #expect(DocumentVerifier().verify(package).isEmpty)
        _ = try await expectContent(library, package, hashes, engine: .sqlite)
        // Reopened and closed: still one file of 1 KiB pages, and back to snapshot intact.
        #expect(try header(package).pageSize == 1_024)
        #expect(try EngineMigration().migrate(package, to: .snapshot).migrated)
        _ = try await expectContent(library, package, hashes, engine: .snapshot)
    }

    @Test func aLargeDocumentKeepsFourKiBPages() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, hashes, _) = try await onePageDocument(library, strokes: 30, samples: 3_400)
        #expect(try EngineMigration().migrate(package, to: .sqlite).migrated)
        let h = try header(package)
        #expect(h.pageSize == 4_096 && h.wal && h.bytes > 64 << 10)
        #expect(DocumentVerifier().verify(package).isEmpty)
        _ = try await expectContent(library, package, hashes, engine: .sqlite)
    }

    @Test func aNewSQLiteDocumentKeepsFourKiBPages() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "New", engine: .sqlite)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append([.stroke(makeStroke(1))], to: await session.pageIDs()[0])
        try await session.close()
        #expect(try header(package).pageSize == 4_096)
    }
}
