// The pragmas the storage engine sets, each as a typed helper that checks what SQLite applied.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// `PRAGMA journal_mode` values.
package enum JournalMode: String, Sendable {
    case delete, truncate, persist, memory, wal, off
}

/// `PRAGMA synchronous` levels.
package enum SynchronousLevel: Int64, Sendable, CustomStringConvertible {
    case off = 0
    /// WAL: the WAL is synced at checkpoints only; a power loss may undo the last commits, never
    /// corrupt the database.
    case normal = 1
    /// WAL: the WAL is synced at every commit; a commit that returned survives a power loss.
    case full = 2
    case extra = 3

    package var description: String { ["off", "normal", "full", "extra"][Int(rawValue)] }
}

extension Connection {
    /// Runs a statement that returns one integer (a pragma read) and returns it.
    package func scalarInt(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else {
            throw SQLiteError(extendedCode: ResultCode.error.rawValue, message: "no row returned", sql: sql, path: path)
        }
        return statement.int64(at: 0)
    }

    /// Runs a statement that returns one text value and returns it.
    package func scalarText(_ sql: String) throws(SQLiteError) -> String {
        let statement = try prepare(sql)
        guard try statement.step(), let text = statement.string(at: 0) else {
            throw SQLiteError(extendedCode: ResultCode.error.rawValue, message: "no text returned", sql: sql, path: path)
        }
        return text
    }

    /// The journal mode in use.
    package func journalMode() throws(SQLiteError) -> JournalMode {
        let text = try scalarText("PRAGMA journal_mode").lowercased()
        return JournalMode(rawValue: text) ?? .delete
    }

    /// Sets the journal mode and checks that SQLite applied it (an in-memory database, for one,
    /// cannot use WAL and answers with its current mode instead of an error).
    ///
    /// - Throws: `SQLiteError` when the mode in effect afterwards is not `mode`.
    package func setJournalMode(_ mode: JournalMode) throws(SQLiteError) {
        let sql = "PRAGMA journal_mode = \(mode.rawValue)"
        let applied = try scalarText(sql).lowercased()
        guard applied == mode.rawValue else {
            throw SQLiteError(extendedCode: ResultCode.error.rawValue,
                              message: "journal mode \(mode.rawValue) was refused; the database stays in \(applied)",
                              sql: sql, path: path)
        }
    }

    package func synchronous() throws(SQLiteError) -> SynchronousLevel {
        SynchronousLevel(rawValue: try scalarInt("PRAGMA synchronous")) ?? .full
    }

    package func setSynchronous(_ level: SynchronousLevel) throws(SQLiteError) {
        try execute("PRAGMA synchronous = \(level.rawValue)")
    }

    /// Bounds the size a WAL (or rollback journal) file is truncated back to after a checkpoint
    /// resets it. -1 means no bound.
    package func setJournalSizeLimit(bytes: Int64) throws(SQLiteError) {
        try execute("PRAGMA journal_size_limit = \(bytes)")
    }

    /// WAL pages after which a commit runs a passive checkpoint itself; 0 turns that off.
    package func setWALAutocheckpoint(pages: Int) throws(SQLiteError) {
        try execute("PRAGMA wal_autocheckpoint = \(pages)")
    }

    /// The application's schema version stored in the database header (bytes 60-63).
    package func userVersion() throws(SQLiteError) -> Int64 { try scalarInt("PRAGMA user_version") }

    package func setUserVersion(_ version: Int32) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }

    /// Page size in bytes; it can change only before the first table is created (or by VACUUM).
    package func pageSize() throws(SQLiteError) -> Int64 { try scalarInt("PRAGMA page_size") }

    package func setPageSize(_ bytes: Int) throws(SQLiteError) {
        try execute("PRAGMA page_size = \(bytes)")
    }

    /// The page cache size: positive in pages, negative in KiB.
    package func setCacheSize(_ value: Int) throws(SQLiteError) {
        try execute("PRAGMA cache_size = \(value)")
    }

    /// `PRAGMA mmap_size`: how many bytes of the database file SQLite may read through a memory
    /// map instead of `pread` (0: none). SQLite caps it at its compile-time maximum.
    package func setMemoryMapSize(bytes: Int64) throws(SQLiteError) {
        _ = try scalarInt("PRAGMA mmap_size = \(bytes)")
    }

    /// `PRAGMA quick_check`: the problems SQLite finds in the file's structure, empty when "ok".
    ///
    /// - Throws: `SQLiteError` when the file cannot even be read (`.notADatabase`, `.corrupt`).
    package func quickCheck(maxErrors: Int = 100) throws(SQLiteError) -> [String] {
        let statement = try prepare("PRAGMA quick_check(\(maxErrors))")
        var problems: [String] = []
        while try statement.step() {
            let line = statement.string(at: 0) ?? ""
            if line != "ok" { problems.append(line) }
        }
        return problems
    }
}
