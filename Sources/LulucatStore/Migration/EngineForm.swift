// Which files hold a document's pages under each engine, how a new form is written beside the old,
// and how a form is read back for verification. Adding an engine to migration is adding it here.

import Foundation
import LulucatInk

/// The page-holding files of one engine inside a package.
enum EngineForm {
    /// Engines migration can read and write in this build. The journal engine's form is the
    /// snapshot files plus `pages/*.journal`; writing it from another engine is writing snapshot
    /// files (a page with no journal is a valid journal page), from snapshot there is nothing to
    /// write, and leaving it for the snapshot engine is compacting every page (the journal
    /// engine's `compact`) so the snapshot files alone hold it. See docs/sqlite-engine.md,
    /// "Migration", and docs/journal-format.md.
    static let migratable: Set<EngineKind> = [.snapshot, .journal, .sqlite]

    /// Every file of another engine's form that `keeping`'s form does not own: what an
    /// interrupted migration leaves beside the form document.json names.
    static func leftovers(keeping: EngineKind, in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> [String] {
        var others = Set<String>()
        for engine in EngineKind.allCases where engine != keeping {
            others.formUnion(try engine.formFiles(in: package, fileSystem: fs))
        }
        return others.subtracting(try keeping.formFiles(in: package, fileSystem: fs)).sorted()
    }

    /// Removes `files`, then syncs the folders they were in.
    static func remove(_ files: [String], in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) {
        try StoreError.io { () throws(FileError) in
            for f in files { try fs.removeIfPresent(f) }
            var dirs = Set<String>()
            for f in files { dirs.insert(splitPath(f).0) }
            for d in dirs.sorted() { try fs.syncDirectory(d) }
        }
    }
}

/// Writes pages in a new engine's form beside the old one; `finish` makes the form complete
/// under its final file names (still ignored until document.json names the engine).
protocol FormWriter: AnyObject {
    func write(_ page: UUID, _ content: PageContent) throws(StoreError)
    func finish() throws(StoreError)
    /// Gives up: closes what is open (the files left are leftovers open-time cleanup removes).
    func abandon()
}

/// The snapshot form: `pages/<id>.content`, each written atomically and durably. Files with these
/// names are not the truth while document.json names another engine.
final class SnapshotFormWriter: FormWriter {
    let engine: SnapshotEngine
    init(package: DocumentPackage, fileSystem: any FileSystem, codec: SampleCodecID) {
        engine = SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
    }
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) { try engine.createPage(page, content: content) }
    func finish() throws(StoreError) {}
    func abandon() {}
}

/// The SQLite form: a database built under a temporary name (so a crash leaves a stale temporary,
/// removed at open), closed as one file, then renamed to `content.sqlite`.
final class SQLiteFormWriter: FormWriter {
    let package: DocumentPackage
    let fileSystem: any FileSystem
    let stagingPath: String
    private var store: SQLiteContentStore?

    init(package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        self.package = package
        self.fileSystem = fileSystem
        stagingPath = package.path + "/" + temporaryFilePrefix + "migrate-" + SQLiteContentStore.fileName
        // A leftover of an earlier attempt would be reopened as if it were ours.
        try StoreError.io { () throws(FileError) in
            for path in [stagingPath] + SQLiteEngine.sideFileSuffixes.map({ stagingPath + $0 }) { try fileSystem.removeIfPresent(path) }
        }
        store = try SQLiteEngine.mapped { () throws(SQLiteEngineError) in try SQLiteContentStore(path: stagingPath, mode: .openOrCreate, fileSystem: fileSystem) }
    }

    /// One transaction a page: the WAL stays about one page large (autocheckpoints keep it bounded).
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) {
        guard let store else { throw .invalidArgument("the new content database is already closed") }
        try SQLiteEngine.mapped { () throws(SQLiteEngineError) in try store.replacePage(page, with: content) }
    }

    func finish() throws(StoreError) {
        guard let store else { return }
        self.store = nil
        // close() checkpoints (TRUNCATE, checked) and SQLite removes the -wal and -shm: one file.
        try SQLiteEngine.mapped { () throws(SQLiteEngineError) in try store.close() }
        let fs = fileSystem, db = package.contentDatabasePath, staging = stagingPath
        try StoreError.io { () throws(FileError) in
            // Side files at the final name can only be leftovers (document.json names another
            // engine); a stale WAL there would be replayed into the new database.
            for suffix in SQLiteEngine.sideFileSuffixes { try fs.removeIfPresent(db + suffix) }
            try fs.rename(staging, to: db)
            try fs.syncDirectory(package.path)
        }
    }

    func abandon() {
        store?.closeWithoutCheckpoint()
        store = nil
    }
}

/// Journal to snapshot: each page's journal merged into its snapshot by the journal engine's own
/// compaction (crash-safe: until document.json switches, the journal document opens with every
/// page, compacted or not; after, the journals are leftovers open-time cleanup removes).
final class JournalCompactingFormWriter: FormWriter {
    let engine: JournalEngine
    init(engine: JournalEngine) { self.engine = engine }
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) { try engine.compact(page) }
    func finish() throws(StoreError) { try engine.close() }
    func abandon() { try? engine.close() }
}

/// Nothing to write: the old form already is the new one (snapshot files are journal pages
/// without journals); verification still reads every page through the new engine.
final class ExistingFormWriter: FormWriter {
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) {}
    func finish() throws(StoreError) {}
    func abandon() {}
}

