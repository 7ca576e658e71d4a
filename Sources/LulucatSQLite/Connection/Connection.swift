// One open SQLite database handle: open and close that throw, SQL execution, statement preparation.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// How to open a database file (`SQLITE_OPEN_*`).
package struct OpenFlags: OptionSet, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    package static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
    package static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
    package static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
    /// Refuse to follow a symbolic link as the database file (packages come from other devices).
    package static let noFollow = OpenFlags(rawValue: 0x0100_0000)  // SQLITE_OPEN_NOFOLLOW, 3.31+
    /// The connection is used by one thread at a time (ours are owned by one actor or one task).
    package static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)

    package static let `default`: OpenFlags = [.readWrite, .create, .noMutex]
}

/// A connection to one SQLite database file. Not `Sendable`: one owner (an actor, a task) uses it.
///
/// ```swift
/// let db = try Connection(path: "/tmp/x.sqlite")
/// try db.execute("CREATE TABLE t(a INTEGER)")
/// try db.close()
/// ```
///
/// `close()` reports failure; `deinit` only closes what an error path or a forgetful owner left open.
package final class Connection {
    /// The file this connection opened.
    package let path: String
    /// nil once closed.
    private(set) var handle: OpaquePointer?
    /// The file-backed VFS this connection was opened through, kept alive until the connection is gone.
    private var fileBackedVFS: FileBackedVFS?

    /// Opens (or creates) the database at `path`. On failure the half-open handle is closed too.
    ///
    /// Opening does not read the file: a file that is not a database is found by the first
    /// statement (`SQLITE_NOTADB`). Extended result codes are turned on.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - flags: `SQLITE_OPEN_*` flags; by default read-write, created when missing.
    ///   - vfs: the name of a registered VFS (`CoalescingVFS.name`, registered first if so); nil
    ///     for SQLite's default.
    /// - Throws: `SQLiteError` (`.cantOpen` for a missing directory or an unreadable file).
    package init(path: String, flags: OpenFlags = .default, vfs: String? = nil) throws(SQLiteError) {
        self.path = path
        if vfs == CoalescingVFS.name { try CoalescingVFS.register() }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags.rawValue, vfs)
        guard rc == SQLITE_OK, let db else {
            // sqlite3_open_v2 usually returns a handle even when it fails; it must be closed.
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            sqlite3_close_v2(db)
            throw SQLiteError(extendedCode: extended, message: message, path: path)
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    /// Opens (or creates) the database at `path` through `vfs`, whose backend does every file
    /// operation; the connection keeps the VFS registered while it lives.
    ///
    /// - Throws: `SQLiteError` (`.cantOpen` when the backend cannot open the file).
    package convenience init(path: String, flags: OpenFlags = .default, vfs: FileBackedVFS) throws(SQLiteError) {
        try self.init(path: path, flags: flags, vfs: vfs.name)
        fileBackedVFS = vfs
    }

    deinit {
        // Only a safety net: close_v2 defers the close until the last statement is finalized and
        // cannot fail in a way we could report here.
        if let handle { sqlite3_close_v2(handle) }
    }

    /// Whether `close()` has succeeded.
    package var isClosed: Bool { handle == nil }

    /// Closes the connection.
    ///
    /// - Throws: `SQLiteError` with `.busy` when a `Statement` of this connection is still alive
    ///   (the connection then stays open), `.misuse` when already closed.
    package func close() throws(SQLiteError) {
        guard let db = handle else {
            throw SQLiteError(extendedCode: ResultCode.misuse.rawValue, message: "the connection is already closed", path: path)
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "cannot close: statements of this connection are still alive (\(String(cString: sqlite3_errmsg(db))))", path: path)
        }
        handle = nil
    }

    /// The open handle, or a `.misuse` error once closed.
    func openHandle(sql: String? = nil) throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(extendedCode: ResultCode.misuse.rawValue, message: "the connection is closed", sql: sql, path: path)
        }
        return handle
    }

    /// The error SQLite reports for the last call on this connection.
    func lastError(_ rc: Int32, sql: String?) -> SQLiteError {
        guard let handle else {
            return SQLiteError(extendedCode: rc, message: String(cString: sqlite3_errstr(rc)), sql: sql, path: path)
        }
        // The extended code of the connection is the detail of `rc` unless another call intervened.
        let extended = sqlite3_extended_errcode(handle)
        let code = (extended & 0xFF) == (rc & 0xFF) ? extended : rc
        return SQLiteError(extendedCode: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql, path: path)
    }

    /// Runs one or more SQL statements separated by semicolons, discarding any rows.
    ///
    /// - Throws: `SQLiteError` naming the statement that failed.
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try openHandle(sql: sql)
        var utf8 = Array(sql.utf8CString)
        try utf8.withUnsafeMutableBufferPointer { (buffer) throws(SQLiteError) in
            var next: UnsafePointer<CChar>? = UnsafePointer(buffer.baseAddress!)
            while let start = next, start.pointee != 0 {
                var stmt: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(db, start, -1, &stmt, &tail)
                let text = Self.statementText(from: start, to: tail)
                guard rc == SQLITE_OK else { throw lastError(rc, sql: text) }
                next = tail
                guard let stmt else { continue }  // whitespace or a comment
                defer { sqlite3_finalize(stmt) }
                var step = sqlite3_step(stmt)
                while step == SQLITE_ROW { step = sqlite3_step(stmt) }
                guard step == SQLITE_DONE else { throw lastError(step, sql: text) }
            }
        }
    }

    private static func statementText(from start: UnsafePointer<CChar>, to end: UnsafePointer<CChar>?) -> String {
        guard let end, end > start else { return String(cString: start) }
        let bytes = UnsafeRawBufferPointer(start: start, count: end - start)
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }

    /// Compiles one statement.
    ///
    /// - Throws: `SQLiteError` carrying the SQL when it does not compile.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// The rowid of the last successful INSERT on this connection.
    package var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }
    /// Whether no transaction is open.
    package var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// How long a statement waits for another connection's lock before failing with `.busy`.
    package func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let db = try openHandle()
        let rc = sqlite3_busy_timeout(db, milliseconds)
        guard rc == SQLITE_OK else { throw lastError(rc, sql: nil) }
    }

    /// The version of the SQLite library in use ("3.40.1").
    package static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
