// The online backup API: a consistent one-file copy of a live database, WAL content included.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Foundation

extension Connection {
    /// Copies the whole database (committed content, whether in the WAL or the file) into a new
    /// database file at `destination`, which is replaced if it exists.
    ///
    /// ```swift
    /// try db.backup(to: "/tmp/export/content.sqlite")
    /// ```
    ///
    /// The copy is written by the destination's own pager (rollback journal, synchronous FULL), so it
    /// is complete and synced when this returns. It is one file: no `-wal` beside it.
    ///
    /// - Throws: `SQLiteError` from the destination (`.cantOpen`, `.full`, ...) or `.busy` when a
    ///   lock kept the copy from finishing. A destination this call created is removed on failure.
    package func backup(to destination: String) throws(SQLiteError) {
        let source = try openHandle()
        let existed = FileManager.default.fileExists(atPath: destination)
        let target = try Connection(path: destination)
        do {
            let targetHandle = try target.openHandle()
            // Not WAL: the copy must be a single file when this returns.
            try target.execute("PRAGMA journal_mode = DELETE")
            try target.execute("PRAGMA synchronous = FULL")
            guard let backup = sqlite3_backup_init(targetHandle, "main", source, "main") else {
                throw target.lastError(sqlite3_errcode(targetHandle), sql: "sqlite3_backup_init")
            }
            let step = sqlite3_backup_step(backup, -1)
            let finish = sqlite3_backup_finish(backup)
            guard step == SQLITE_DONE else {
                throw SQLiteError(extendedCode: step, message: "backup stopped: \(String(cString: sqlite3_errstr(step)))",
                                  sql: "sqlite3_backup_step", path: destination)
            }
            guard finish == SQLITE_OK else { throw target.lastError(finish, sql: "sqlite3_backup_finish") }
            // The source may be in WAL mode and its header says so; the copy stays a one-file,
            // rollback-journal database until someone opens it and chooses otherwise.
            try target.execute("PRAGMA journal_mode = DELETE")
            try target.close()
        } catch let error as SQLiteError {
            try? target.close()
            if !existed { try? FileManager.default.removeItem(atPath: destination) }
            throw error
        } catch {
            fatalError("unreachable: only SQLiteError is thrown above")
        }
    }

    /// Copies the whole database (committed content, whether in the WAL or the file) into a new
    /// in-memory database and returns its connection: a private copy that can be changed (a
    /// schema brought up to date for a reader) without writing a byte of the file.
    ///
    /// - Throws: `SQLiteError` (`.busy` when a lock kept the copy from finishing, `.noMem`).
    package func copyIntoMemory() throws(SQLiteError) -> Connection {
        let source = try openHandle()
        let target = try Connection(path: ":memory:")
        do throws(SQLiteError) {
            let targetHandle = try target.openHandle()
            guard let backup = sqlite3_backup_init(targetHandle, "main", source, "main") else {
                throw target.lastError(sqlite3_errcode(targetHandle), sql: "sqlite3_backup_init")
            }
            let step = sqlite3_backup_step(backup, -1)
            let finish = sqlite3_backup_finish(backup)
            guard step == SQLITE_DONE else {
                throw SQLiteError(extendedCode: step, message: "copy into memory stopped: \(String(cString: sqlite3_errstr(step)))",
                                  sql: "sqlite3_backup_step", path: ":memory:")
            }
            guard finish == SQLITE_OK else { throw target.lastError(finish, sql: "sqlite3_backup_finish") }
            return target
        } catch {
            try? target.close()
            throw error
        }
    }
}
