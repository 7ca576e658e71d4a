// One prepared statement: compile, step, reset. Binds and column reads are in the files beside it.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A compiled SQL statement of one `Connection`. Not `Sendable`; it keeps its connection alive.
///
/// ```swift
/// let insert = try db.prepare("INSERT INTO t(a, b) VALUES (?1, ?2)")
/// try insert.bind(Int64(1), at: 1)
/// try insert.bind("one", at: 2)
/// try insert.run()
/// ```
///
/// Parameter indexes are 1-based and column indexes 0-based, as in SQLite.
package final class Statement {
    package let sql: String
    package let connection: Connection
    let handle: OpaquePointer

    init(connection: Connection, sql: String) throws(SQLiteError) {
        let db = try connection.openHandle(sql: sql)
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK else {
            sqlite3_finalize(stmt)
            throw connection.lastError(rc, sql: sql)
        }
        guard let stmt else {
            throw SQLiteError(extendedCode: ResultCode.misuse.rawValue, message: "the SQL holds no statement",
                              sql: sql, path: connection.path)
        }
        self.sql = sql
        self.connection = connection
        self.handle = stmt
    }

    deinit { sqlite3_finalize(handle) }

    /// Advances to the next row.
    ///
    /// - Returns: true when a row is available to read, false when the statement is done.
    /// - Throws: `SQLiteError` carrying this statement's SQL.
    @discardableResult
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // Reset so the statement's error does not leak into the next use; keep step's code.
            let error = connection.lastError(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps to completion, ignoring rows, then resets so the statement can run again.
    package func run() throws(SQLiteError) {
        while try step() {}
        try reset()
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    package func reset() throws(SQLiteError) {
        let rc = sqlite3_reset(handle)
        guard rc == SQLITE_OK else { throw connection.lastError(rc, sql: sql) }
    }

    /// Sets every parameter back to NULL (and releases any bytes bound without a copy).
    package func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// How many `?` parameters the statement has.
    package var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }
}
