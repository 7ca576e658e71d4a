// Migration into the SQLite engine's form, beside the engine (Migration/EngineForm.swift has the FormWriter protocol).

import Foundation
import LulucatInk
import LulucatStore

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
        for path in [stagingPath] + SQLiteEngine.sideFileSuffixes.map({ stagingPath + $0 }) { try fileSystem.checked.removeIfPresent(path) }
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
        // A small document gets 1 KiB pages (docs/sqlite-engine.md §3.3); on failure the
        // staging file is abandoned like any other failed write.
        do {
            _ = try SQLiteEngine.mapped { () throws(SQLiteEngineError) in try store.usesSmallPagesIfSmall() }
        } catch {
            store.closeWithoutCheckpoint()
            throw error
        }
        // close() checkpoints (TRUNCATE, checked) and SQLite removes the -wal and -shm: one file.
        try SQLiteEngine.mapped { () throws(SQLiteEngineError) in try store.close() }
        let fs = fileSystem, db = package.contentDatabasePath, staging = stagingPath
        // Side files at the final name can only be leftovers (document.json names another
        // engine); a stale WAL there would be replayed into the new database.
        for suffix in SQLiteEngine.sideFileSuffixes { try fs.checked.removeIfPresent(db + suffix) }
        try fs.checked.rename(staging, to: db)
        try fs.checked.syncDirectory(package.path)
    }

    /// Closes and removes the staging database (a failed or cancelled migration leaves no
    /// temporary behind; one a crash leaves is removed at the next open).
    func abandon() {
        store?.closeWithoutCheckpoint()
        store = nil
        for path in [stagingPath] + SQLiteEngine.sideFileSuffixes.map({ stagingPath + $0 }) { try? fileSystem.removeIfPresent(path) }
    }
}
