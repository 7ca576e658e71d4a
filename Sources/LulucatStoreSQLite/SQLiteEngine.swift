// Level 2 behind the session API: a document's pages in `content.sqlite`. A save of the dirty pages
// is one transaction of their changes (an appended stroke is one INSERT, never a page rewrite).

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

/// The SQLite engine: every page of the document in `<package>/content.sqlite`
/// (docs/sqlite-engine.md). The session's actor owns it; nothing here is shared.
final class SQLiteEngine: StorageEngine {
    let package: DocumentPackage
    let store: SQLiteContentStore
    let fileSystem: any FileSystem
    var kind: EngineKind { .sqlite }
    var savesPagesTogether: Bool { true }
    /// How many saves fell back to rewriting their pages because the recorded changes did not
    /// apply to the stored rows (never expected; counted so tests can say it did not happen).
    private(set) var rewriteFallbacks = 0

    /// Opens the document's existing content database.
    ///
    /// - Throws: `StoreError.contentDatabase` (`.missing`, `.corrupt`, `.newerSchema`, ...), naming
    ///   the file.
    /// - Parameter readOnly: a reader's open: the file is never changed (an older schema is
    ///   brought up to date in memory only).
    init(package: DocumentPackage, fileSystem: any FileSystem, configuration: SQLiteContentStore.Configuration = .init(),
         readOnly: Bool = false) throws(StoreError) {
        self.package = package
        self.fileSystem = fileSystem
        do {
            store = try SQLiteContentStore(path: package.contentDatabasePath, mode: .openExisting, configuration: configuration,
                                           fileSystem: fileSystem, readOnly: readOnly)
        } catch { throw StoreError(contentDatabase: error) }
    }

    /// What loading pages found: per damaged page, what was salvaged and what was lost.
    private(set) var findings: [Finding] = []

    /// A page's content. A page whose rows are damaged keeps every row that reads and checks
    /// (`salvagePage`), and what SQLite cannot reach (a damaged b-tree page hides the rows behind
    /// it) is read from the file's bytes (`SQLiteFileSalvage`, rows whose checksum matches), as
    /// repair does; what was lost is a finding (an error), never silent.
    func loadPage(_ id: UUID) throws(StoreError) -> PageContent {
        do { return try store.loadPage(id) } catch {
            if case .pageNotFound = error { throw .missingPage(page: id, path: store.path) }
            guard SQLiteContentStore.isDamage(error) else { throw StoreError(contentDatabase: error) }
            var salvaged: SQLiteContentStore.SalvagedPage
            do { salvaged = try store.salvagePage(id) } catch {
                // The page's rows cannot even be found through SQLite: only the raw pass can.
                guard SQLiteContentStore.isDamage(error) else { throw StoreError(contentDatabase: error) }
                salvaged = .unreachable
            }
            if !salvaged.isWhole, let found = rawSalvage()?.pages[id] {
                salvaged.merge(found, listed: nil)
            }
            if salvaged == .unreachable { throw StoreError(contentDatabase: error) }
            let finding = Finding(.error, store.path, Self.describe(salvaged, page: id, first: error))
            if !findings.contains(finding) { findings.append(finding) }
            return salvaged.content
        }
    }

    /// The raw pass over `content.sqlite`, made once (the file's bytes read whole) and only while
    /// the WAL is empty: with saves in the WAL, the database file alone may hold older versions of
    /// rows (a stroke erased since), which must not come back. Any save drops it.
    private func rawSalvage() -> SQLiteFileSalvage? {
        if let raw = rawPass { return raw }
        guard !rawPassRefused else { return nil }
        rawPassRefused = true
        let wal = (try? fileSystem.info(store.path + "-wal"))?.map(\.size) ?? 0
        guard wal == 0, let bytes = try? fileSystem.readFile(store.path) else { return nil }
        let known = (try? PackageReader.readDocument(package, fileSystem: fileSystem))?.pages.map(\.id) ?? []
        rawPass = SQLiteFileSalvage(bytes: bytes, knownPages: known)
        return rawPass
    }
    private var rawPass: SQLiteFileSalvage?
    private var rawPassRefused = false

    static func describe(_ s: SQLiteContentStore.SalvagedPage, page: UUID, first: SQLiteEngineError) -> String {
        var parts = ["page \(page) is damaged (\(first)); \(s.content.elements.count) element\(s.content.elements.count == 1 ? "" : "s") salvaged"]
        if s.lostCount > 0 {
            let ids = s.refusedRows.compactMap(\.element).prefix(5).map(\.uuidString).joined(separator: ", ")
            parts.append("\(s.lostCount) lost (rows refused\(ids.isEmpty ? "" : ": " + ids))")
        }
        if s.pageRowDamaged { parts.append("the page's own row is lost (canvas size unknown, shown as US Letter)") }
        if s.unreadableRanges > 0 { parts.append("\(s.unreadableRanges) table\(s.unreadableRanges == 1 ? "" : "s") could not be walked to the end: more rows may be lost") }
        return parts.joined(separator: "; ") + "; lnote repair rebuilds the database from what reads"
    }

    /// SQLite keeps nothing coded in memory between saves: rows are written per element.
    func loadPageForEditing(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        (try loadPage(id), nil)
    }

    func createPage(_ id: UUID, content: PageContent) throws(StoreError) {
        try Self.mapped { () throws(SQLiteEngineError) in try store.replacePage(id, with: content) }
    }

    func savePage(_ id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        _ = try savePages([PageSave(id: id, content: content, changes: changes, reusing: reusing)])
        return nil
    }

    /// One transaction for every page: their recorded changes as row inserts, deletes and z
    /// updates. Should the changes not apply to the stored rows (the session and the database
    /// disagree, which no path is known to cause), the same transaction is retried as a rewrite of
    /// those pages from the session's content, which is the truth.
    func savePages(_ pages: [PageSave]) throws(StoreError) -> [EncodedStrokes?] {
        var updates: [SQLiteContentStore.PageUpdate] = []
        do {
            for p in pages {
                updates.append(.changes(p.id, SQLiteChangeTranslation.translate(p.changes)))
            }
            rawPass = nil
            try store.save(updates)
        } catch {
            switch error {
            case .elementNotFound, .duplicateElement, .invalidChange, .pageNotFound:
                rewriteFallbacks += 1
                try Self.mapped { () throws(SQLiteEngineError) in try store.save(pages.map { .replace($0.id, $0.content) }) }
            default:
                throw StoreError(contentDatabase: error)
            }
        }
        return pages.map { _ in nil }
    }

    func removePage(_ id: UUID) throws(StoreError) {
        do { try store.deletePage(id) } catch {
            if case .pageNotFound = error { return }  // already gone: removal is idempotent
            throw StoreError(contentDatabase: error)
        }
    }

    /// At idle: a passive checkpoint copies the WAL into the database file without waiting for
    /// anyone; the next save then starts the WAL over (bounded by journal_size_limit).
    ///
    /// First the strokes the saves wrote as fixed16 are recoded in the compact codec (one
    /// transaction, only while the document is quiet), so the checkpoint copies small rows.
    func idle() throws(StoreError) {
        try Self.mapped { () throws(SQLiteEngineError) in
            try store.compactSamples()
            _ = try store.checkpointIdle()
        }
    }

    /// At close: a checked TRUNCATE checkpoint, so the package holds one database file.
    ///
    /// A checkpoint kept from finishing by another connection (`lnote verify` reading in another
    /// process) does not fail the close: every save is committed in the WAL, and the next open, or
    /// the checkpoint before a copy, copies it in. Any other failure is thrown.
    func close() throws(StoreError) {
        guard !store.connection.isClosed else { return }
        do { try store.close() } catch {
            if case .inUse = error, store.connection.isClosed { return }
            throw StoreError(contentDatabase: error)
        }
    }

    static func mapped<T>(_ body: () throws(SQLiteEngineError) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw StoreError(contentDatabase: error) }
    }
}

extension SQLiteContentStore {
    /// Closes the connection without the closing checkpoint (a read-only look, such as
    /// `lnote verify`, must not write the file; committed data is safe either way).
    package func closeWithoutCheckpoint() {
        try? connection.close()
    }
}

extension SQLiteEngine {
    func closeWithoutTidying() { store.closeWithoutCheckpoint() }
}

extension SQLiteEngine {
    /// Creates `content.sqlite` in a package being built, holding `pages`, and closes it as one
    /// file (checkpointed; no -wal or -shm left beside it).
    static func createDatabase(_ package: DocumentPackage, pages: [(UUID, PageContent)], fileSystem: any FileSystem) throws(StoreError) {
        try mapped { () throws(SQLiteEngineError) in
            let store = try SQLiteContentStore(path: package.contentDatabasePath, mode: .openOrCreate, fileSystem: fileSystem)
            do throws(SQLiteEngineError) {
                try store.save(pages.map { .replace($0.0, $0.1) })
            } catch {
                try? store.close()
                throw error
            }
            try store.close()
        }
    }
}

extension SQLiteEngine {
    /// The files SQLite keeps beside the database while it is open or after a crash. They are
    /// never copied: a copy carries `content.sqlite` alone, after `checkpointForCopy`.
    static let sideFileSuffixes = DocumentPackage.contentDatabaseSideFileSuffixes

    /// The same for a document open in this session (duplicate of an open document): a TRUNCATE
    /// checkpoint on the session's own connection, which stays open.
    func prepareForCopyWhileOpen() throws(StoreError) { try checkpointForCopy(fileSystem: fileSystem) }

    func checkpointForCopy(fileSystem: any FileSystem) throws(StoreError) {
        try Self.mapped { () throws(SQLiteEngineError) in try store.checkpointTruncate() }
        let path = store.path
        let wal = try fileSystem.checked.info(path + "-wal")
        if let wal, wal.size > 0 {
            throw .contentDatabase(.database(file: path, SQLiteError(extendedCode: 1, message: "the WAL still holds \(wal.size) bytes after a TRUNCATE checkpoint; the document is open elsewhere", path: path)))
        }
    }

    /// Makes `content.sqlite` hold everything by itself before a copy or export: a TRUNCATE
    /// checkpoint whose result row is checked (every WAL frame copied), then a close. The caller
    /// holds the document's lock.
    ///
    /// - Throws: `.contentDatabase` when the checkpoint could not finish, or when a non-empty WAL
    ///   is still there afterwards (the copy would miss what it holds).
    static func checkpointForCopy(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) {
        let path = package.contentDatabasePath
        try mapped { () throws(SQLiteEngineError) in
            let store = try SQLiteContentStore(path: path, mode: .openExisting, fileSystem: fs)
            do throws(SQLiteEngineError) { try store.checkpointTruncate() } catch {
                try? store.close()
                throw error
            }
            try store.close()
        }
        let wal = try fs.checked.info(path + "-wal")
        if let wal, wal.size > 0 {
            throw .contentDatabase(.database(file: path, SQLiteError(extendedCode: 1, message: "the WAL still holds \(wal.size) bytes after a TRUNCATE checkpoint; the document is open elsewhere", path: path)))
        }
    }
}
