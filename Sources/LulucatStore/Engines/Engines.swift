// The one place that chooses by engine kind: the engine table. Everything an engine knows (how it
// opens, how a new document's first pages are written, which files hold its pages and what names
// they have, what a copy must do first, its migration writer, its part of verify and repair) lives
// in its own folder as members of its type; the switches below only dispatch. Adding an engine is
// its folder plus a case in each switch here. Library, verify, repair, migration, import and the
// archive layout (LulucatInterchange's PackageLayout) ask this table; none names an engine.
//
// The SQLite engine's code is in a module of its own (LulucatStoreSQLite, an opt-in product): its
// cases below ask the provider that module registers (EngineProvider.swift), and throw
// `StoreError.engineNotAvailable` before touching a file when it is not enabled. Its names (the
// files of its form, which engine a package's files are) stay here, so a build without it still
// knows its documents' files and never takes them for strays.

import Foundation
import LulucatInk

/// The storage engine that fills a package's page content (its raw value is document.json's
/// `engine` field).
public enum EngineKind: String, Codable, Sendable, CaseIterable {
    /// Level 0: one `.content` snapshot file per page.
    case snapshot
    /// Level 1: snapshot plus a per-page append-only journal.
    case journal
    /// Level 2: a SQLite database in the package.
    case sqlite
}

extension EngineKind {
    /// The engine a session (or verify, repair, migration) works through for a document of this kind.
    /// `readOnly`: a reader's engine, which never changes a file (the snapshot and journal engines
    /// write only when asked to save; the SQLite engine does not migrate an older schema in place).
    package func makeEngine(_ package: DocumentPackage, codec: SampleCodecID, fileSystem: any FileSystem,
                    journal: JournalOptions = JournalOptions(), readOnly: Bool = false) throws(StoreError) -> any StorageEngine {
        switch self {
        case .snapshot: return SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
        case .journal: return JournalEngine(package: package, fileSystem: fileSystem, codec: codec, options: journal)
        case .sqlite: return try EngineProviders.require(self, for: package.path).makeEngine(package, fileSystem: fileSystem, readOnly: readOnly)
        }
    }

    /// Writes the pages of a document being built (in its staging folder) in this engine's form.
    func createPages(_ pages: [(UUID, PageContent)], in package: DocumentPackage, codec: SampleCodecID,
                     fileSystem: any FileSystem) throws(StoreError) {
        switch self {
        case .snapshot, .journal:
            // A journal page with no journal is its snapshot: both start as snapshot files.
            let engine = SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
            for (page, content) in pages { try engine.createPage(page, content: content) }
        case .sqlite:
            try EngineProviders.require(self, for: package.path).createPages(pages, in: package, fileSystem: fileSystem)
        }
    }

    /// The files of this engine's form found in `package` now, as absolute paths.
    func formFiles(in package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> Set<String> {
        switch self {
        case .snapshot: return try SnapshotEngine.formFiles(in: package, fileSystem: fileSystem)
        case .journal: return try JournalEngine.formFiles(in: package, fileSystem: fileSystem)
        case .sqlite:
            // `content.sqlite` and whichever of SQLite's side files exist (known without the engine:
            // a migration's leftovers are found in any build).
            let db = package.contentDatabasePath
            var files = Set<String>()
            for path in [db] + DocumentPackage.contentDatabaseSideFileSuffixes.map({ db + $0 }) where try fileSystem.checked.info(path) != nil {
                files.insert(path)
            }
            return files
        }
    }

    /// Whether this build can read and write this engine's documents: always for the built-in
    /// engines; for SQLite when LulucatStoreSQLite is linked and enabled (`Library.enableSQLiteEngine()`).
    public var isAvailable: Bool {
        switch self {
        case .snapshot, .journal: return true
        case .sqlite: return EngineProviders.provider(self) != nil
        }
    }

    /// Refuses a document whose engine this build does not have, before anything reads or writes it.
    package func requireAvailable(_ package: DocumentPackage) throws(StoreError) {
        if !isAvailable { throw .engineNotAvailable(self, path: package.path) }
    }

    /// What must happen before a document of this kind is copied file by file (duplicate, export),
    /// with its lock held: a SQLite database is checkpointed into its one file.
    func prepareForCopy(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        switch self {
        case .snapshot, .journal: return
        case .sqlite: try EngineProviders.require(self, for: package.path).prepareForCopy(package, fileSystem: fileSystem)
        }
    }
}

// MARK: - Names and files

extension EngineKind {
    /// Files at the package root that hold this engine's pages (besides document.json and
    /// manifest.json, which every engine has).
    public var rootFiles: Set<String> {
        switch self {
        case .snapshot, .journal: return []
        case .sqlite: return [DocumentPackage.contentDatabaseFileName]
        }
    }

    /// Extensions of the per-page files this engine keeps in `pages/` (`<page UUID>.<ext>`).
    public var pageFileExtensions: Set<String> {
        switch self {
        case .snapshot: return ["content"]
        case .journal: return ["content", "journal"]
        case .sqlite: return []
        }
    }

    /// Root files of every engine: what a package (or an archive of one) may hold at its root.
    public static var allRootFiles: Set<String> { allCases.reduce(into: []) { $0.formUnion($1.rootFiles) } }
    /// Page file extensions of every engine.
    public static var allPageFileExtensions: Set<String> { allCases.reduce(into: []) { $0.formUnion($1.pageFileExtensions) } }

    /// The file a finding about `page` names: its own file, or the one file that holds every page.
    package func findingPath(for page: UUID, in package: DocumentPackage) -> String {
        switch self {
        case .snapshot, .journal: return package.pagePath(page)
        case .sqlite: return package.contentDatabasePath
        }
    }

    /// Whether migration can read and write this engine's form in this build.
    package var isMigratable: Bool { isAvailable }

    /// Whether an unreadable page has files of its own that repair can move aside (for an engine
    /// that keeps every page in one file, the page stays listed and its bytes stay where they are).
    package var pagesHaveOwnFiles: Bool {
        switch self {
        case .snapshot, .journal: return true
        case .sqlite: return false
        }
    }
}

// MARK: - Verify, repair, copy, migration

extension EngineKind {
    /// The engine's own checks of its form before verify reads the pages through it; false when
    /// the pages cannot be read at all (the findings say why).
    func verifyForm(_ package: DocumentPackage, _ doc: DocumentMetadata, verifier: DocumentVerifier,
                    _ add: (Finding.Severity, String, String) -> Void) -> Bool {
        switch self {
        case .snapshot, .journal: return true
        case .sqlite:
            // Verify skips a document whose engine is missing before it gets here (not damage).
            guard let provider = EngineProviders.provider(self) else {
                add(.warning, package.path, "\(StoreError.engineNotAvailable(self, path: package.path))")
                return false
            }
            return provider.verifyForm(package, doc, verifier: verifier, add)
        }
    }

    /// What repair does to the engine's form before it reads the pages (a damaged SQLite database
    /// is rebuilt from every row that reads).
    package func repairForm(_ package: DocumentPackage, _ doc: DocumentMetadata, fileSystem: any FileSystem,
                            findings: inout [Finding]) throws(StoreError) {
        switch self {
        case .snapshot, .journal: return
        case .sqlite: try EngineProviders.require(self, for: package.path).repairForm(package, doc, fileSystem: fileSystem, findings: &findings)
        }
    }

    /// Whether the files must be prepared (`prepareForCopy`, under the lock) before they can be
    /// copied as they are: a SQLite WAL holding changes makes the database file alone stale.
    func needsPreparationForCopy(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> Bool {
        switch self {
        case .snapshot, .journal: return false
        case .sqlite: return (try fs.checked.info(package.contentDatabasePath + "-wal")?.size ?? 0) > 0
        }
    }

    /// The writer that puts a document's pages into this engine's form, migrating from `old`
    /// (whose engine, `source`, is open for reading).
    package func formWriter(migratingFrom old: EngineKind, source: any StorageEngine, package: DocumentPackage,
                    codec: SampleCodecID, fileSystem fs: any FileSystem) throws(StoreError) -> any FormWriter {
        switch self {
        case .sqlite:
            return try EngineProviders.require(self, for: package.path).formWriter(package: package, fileSystem: fs)
        case .journal where old == .snapshot:
            // Snapshot files are journal pages without journals: nothing to write.
            return ExistingFormWriter()
        case .snapshot, .journal:
            // An engine whose form is snapshot files plus more compacts each page in place (its
            // crash-safe merge); any other writes snapshot files from what it reads.
            if self == .snapshot, let writer = source.compactingFormWriter() { return writer }
            return SnapshotFormWriter(package: package, fileSystem: fs, codec: codec)
        }
    }
}

// MARK: - Rebuilding document.json

extension EngineKind {
    /// The engine whose files a package holds, for rebuilding its document.json (repair): SQLite's
    /// when the package has a `content.sqlite` and no page file, else the journal's when any page
    /// has a journal, else the snapshot's. Both forms at once (a migration between them stopped
    /// part way) are refused with `error` named: which one was the document cannot be told, and
    /// the cleanup that follows would remove the other.
    package static func inferred(_ package: DocumentPackage, _ scan: PackageReader.PageScan, fileSystem fs: any FileSystem,
                         because error: StoreError) throws(StoreError) -> EngineKind {
        if try fs.checked.info(package.contentDatabasePath) != nil {
            guard scan.pageFiles.isEmpty, scan.journalFiles.isEmpty else {
                throw .corruptFile(path: package.documentPath, reason: "\(error); it cannot be rebuilt: the package holds both a content.sqlite and page files, and which of them is the document is recorded only there")
            }
            return .sqlite
        }
        return scan.journalFiles.isEmpty ? .snapshot : .journal
    }

    /// Every page this engine's files hold, for rebuilding document.json: its content (every
    /// element that checks) and sample codec (nil: the files do not say). In the order the
    /// engine recorded them when it records one (`recordsPageOrder`: SQLite's database, in the
    /// order the pages were first stored), else in id order (page files).
    package func pagesForRebuild(_ package: DocumentPackage, _ scan: PackageReader.PageScan,
                         fileSystem fs: any FileSystem) throws(StoreError) -> [(UUID, PageContent, SampleCodecID?)] {
        switch self {
        case .sqlite:
            return try EngineProviders.require(self, for: package.path).pagesForRebuild(package, fileSystem: fs).map { ($0.0, $0.1, nil) }
        case .snapshot, .journal:
            return try scan.pageFiles.sortedByUUIDString().map { id throws(StoreError) in
                let (content, codec) = try pageForRebuild(id, in: package, fileSystem: fs)
                return (id, content, codec)
            }
        }
    }

    /// Whether `pagesForRebuild` gives the pages in an order the engine recorded (not id order).
    package var recordsPageOrder: Bool { self == .sqlite }

    /// A page's content (every element that checks) and sample codec, read from its own files.
    func pageForRebuild(_ id: UUID, in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> (PageContent, SampleCodecID?) {
        let bytes = try SnapshotEngine.readBytes(package.pagePath(id), page: id, fileSystem: fs)
        let content: PageContent
        if self == .journal, let replay = try? JournalReplay.read(package, page: id, fileSystem: fs) {
            content = replay.content
        } else {
            content = PageFile.salvage(bytes, canvasSize: .letter).content
        }
        return (content, bytes.withUnsafeBytes { try? PageFile.readHeader($0) }?.codec)
    }
}
