// `lnote repair` on a SQLite document whose database is damaged: every row that still reads and
// checks is written into a new database, the damaged file is kept in recovered/, and the new one
// takes its place. docs/sqlite-engine.md §5.4.

import Foundation
import LulucatInk
import LulucatStore

/// Repair's part for a SQLite document (`DocumentRepair`, in LulucatStoreMaintenance, reaches it
/// through the engine table).
struct SQLiteDatabaseRepair {
    let fileSystem: any FileSystem
}

extension SQLiteDatabaseRepair {
    /// Rebuilds `content.sqlite` from what reads when a page of it is damaged (a row refused, a
    /// b-tree page SQLite cannot read, `quick_check` problems). Returns without changing anything
    /// when every listed page reads whole and `quick_check` is clean.
    ///
    /// Steps, each durable before the next: the pages' salvaged content is written into
    /// `.lnote-tmp-repair-content.sqlite` (a stale temporary if a crash stops it) and closed as one
    /// file; `recovered/` is created and the package folder synced; the damaged database (and any
    /// `-wal`) is renamed into `recovered/content.sqlite.<n>`; the new file is renamed to
    /// `content.sqlite`; both folders are synced. A crash between the two renames leaves no
    /// `content.sqlite` and the damaged one in recovered/: the next repair puts it back first and
    /// starts over.
    ///
    /// - Throws: when the damaged database cannot be opened at all (its header is damaged): nothing
    ///   is changed then.
    func rebuildDamagedDatabase(_ package: DocumentPackage, _ doc: DocumentMetadata, findings: inout [Finding]) throws(StoreError) {
        let fs = fileSystem
        let path = package.contentDatabasePath
        // A rebuild a crash stopped between its two renames: the damaged file is the latest copy in
        // recovered/ and content.sqlite is missing (the new one was a temporary, removed since).
        try StoreError.io { () throws(FileError) in
            guard try fs.info(path) == nil, try fs.info(package.recoveredPath) != nil else { return }
            var n = 1
            while try fs.info(package.recoveredPath + "/" + SQLiteContentStore.fileName + ".\(n + 1)") != nil { n += 1 }
            let latest = package.recoveredPath + "/" + SQLiteContentStore.fileName + ".\(n)"
            guard try fs.info(latest) != nil else { return }
            if try fs.info(latest + "-wal") != nil { try fs.rename(latest + "-wal", to: path + "-wal") }
            try fs.rename(latest, to: path)
            try fs.syncDirectory(package.path)
            findings.append(Finding(.repaired, path, "put back from \(latest): an earlier rebuild was interrupted"))
        }
        var salvaged: [(UUID, SQLiteContentStore.SalvagedPage)] = []
        var damaged = false
        let store: SQLiteContentStore
        do { store = try SQLiteContentStore(path: path, mode: .openExisting, fileSystem: fs) } catch {
            // SQLite cannot open it (a damaged header, a damaged schema page): the rows are read
            // from the file's bytes alone (§5.5). Anything else (a newer schema, in use) is not
            // damage and is left alone.
            guard SQLiteContentStore.isDamage(error) else { throw .contentDatabase(error) }
            let bytes = try StoreError.io { () throws(FileError) in try fs.readFile(path) }
            let raw = SQLiteFileSalvage(bytes: bytes, knownPages: doc.pages.map(\.id))
            guard !raw.pages.isEmpty else { throw .contentDatabase(error) }
            var ids = doc.pages.map(\.id)
            for id in raw.pages.keys.sortedByUUIDString() where !ids.contains(id) { ids.append(id) }
            for id in ids {
                guard let content = raw.content(of: id) else { continue }
                salvaged.append((id, SQLiteContentStore.SalvagedPage(content: content, refusedRows: [], pageRowDamaged: raw.pages[id]?.canvas == nil,
                                                                       unreadableRanges: 1)))
            }
            findings.append(Finding(.repaired, path, "SQLite cannot open the database (\(error)); every row was searched for in its \(bytes.count / max(raw.pageSize, 1)) pages of \(raw.pageSize) bytes"))
            try writeRebuilt(package, doc, salvaged, findings: &findings)
            return
        }
        do throws(SQLiteEngineError) {
            let problems = (try? store.integrityProblems()) ?? ["quick_check could not run"]
            if !problems.isEmpty { damaged = true }
            var ids = doc.pages.map(\.id)
            for id in (try? store.pageIDs()) ?? [] where !ids.contains(id) { ids.append(id) }
            for id in ids {
                do {
                    let page = try store.salvagePage(id)
                    if !page.isWhole { damaged = true }
                    salvaged.append((id, page))
                } catch {
                    if case .pageNotFound = error { continue }
                    guard SQLiteContentStore.isDamage(error) else { throw error }
                    // SQLite cannot even find the page's rows (its b-trees are damaged there):
                    // what the raw pass below finds is all there is.
                    damaged = true
                    salvaged.append((id, .unreachable))
                }
            }
        } catch {
            store.closeWithoutCheckpoint()
            throw .contentDatabase(error)
        }
        store.closeWithoutCheckpoint()
        guard damaged else { return }
        // What SQLite could not reach (a damaged b-tree page hides the rows behind it): every row
        // of the file's bytes that checks is added to its page, unless the page has it already.
        if let bytes = try? fs.readFile(path) {
            let raw = SQLiteFileSalvage(bytes: bytes, knownPages: doc.pages.map(\.id))
            for i in salvaged.indices {
                guard let found = raw.pages[salvaged[i].0] else { continue }
                salvaged[i].1.merge(found, listed: doc.pages.first { $0.id == salvaged[i].0 }?.elementCount)
            }
        }
        try writeRebuilt(package, doc, salvaged, findings: &findings)
    }

    /// Steps 1-5 of the rebuild: `salvaged` into a new database, the damaged one kept aside.
    private func writeRebuilt(_ package: DocumentPackage, _ doc: DocumentMetadata, _ salvaged: [(UUID, SQLiteContentStore.SalvagedPage)],
                              findings: inout [Finding]) throws(StoreError) {
        let fs = fileSystem
        let path = package.contentDatabasePath

        let staging = package.path + "/" + temporaryFilePrefix + "repair-" + SQLiteContentStore.fileName
        for suffix in [""] + SQLiteEngine.sideFileSuffixes {
            try fs.checked.removeIfPresent(staging + suffix)
        }
        try SQLiteEngine.mapped { () throws(SQLiteEngineError) in
            let fresh = try SQLiteContentStore(path: staging, mode: .openOrCreate, fileSystem: fs)
            do throws(SQLiteEngineError) {
                try fresh.save(salvaged.map { .replace($0.0, $0.1.content) })
            } catch {
                try? fresh.close()
                throw error
            }
            try fresh.close()
        }
        // recovered/ exists durably before anything is renamed into it.
        let kept = try StoreError.io { () throws(FileError) -> String in
            try fs.ensureDirectory(package.recoveredPath)
            try fs.syncDirectory(package.path)
            var n = 1
            while try fs.info(package.recoveredPath + "/" + SQLiteContentStore.fileName + ".\(n)") != nil { n += 1 }
            let kept = package.recoveredPath + "/" + SQLiteContentStore.fileName + ".\(n)"
            for suffix in SQLiteEngine.sideFileSuffixes where suffix != "-shm" {
                if try fs.info(path + suffix) != nil { try fs.rename(path + suffix, to: kept + suffix) }
            }
            try fs.removeIfPresent(path + "-shm")
            try fs.rename(path, to: kept)
            try fs.syncDirectory(package.recoveredPath)
            try fs.rename(staging, to: path)
            try fs.syncDirectory(package.path)
            return kept
        }
        for (id, page) in salvaged where !page.isWhole {
            let position = doc.pages.firstIndex { $0.id == id }.map { "page \($0 + 1) (\(id))" } ?? "unlisted page \(id)"
            let listed = doc.pages.first { $0.id == id }?.elementCount ?? 0
            let lost = max(page.lostCount, listed - page.content.elements.count, 0)
            findings.append(Finding(.repaired, path, "\(position): \(page.content.elements.count) element\(page.content.elements.count == 1 ? "" : "s") salvaged, \(lost) lost\(page.unreadableRanges > 0 ? " (and possibly more rows SQLite could not reach)" : "")\(page.pageRowDamaged ? "; its canvas size was lost (US Letter now)" : "")"))
        }
        findings.append(Finding(.repaired, path, "rebuilt from every row that reads and checks; the damaged database is kept as \(kept)"))
    }
}
