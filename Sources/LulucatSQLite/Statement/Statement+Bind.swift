// Typed parameter binds. BLOBs are bound without a copy (SQLITE_STATIC) only inside a closure that
// keeps the bytes alive for as long as SQLite may read them; otherwise SQLite copies them.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Foundation

/// SQLite's two destructor sentinels, which the C macros spell as casts Swift cannot import.
enum BindLifetime {
    /// SQLite reads the bytes only until the statement is reset or rebound: no copy.
    static let staticBytes = unsafeBitCast(0, to: sqlite3_destructor_type.self)
    /// SQLite copies the bytes before the bind returns.
    static let transientBytes = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension Statement {
    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw connection.lastError(rc, sql: sql) }
    }

    package func bind(_ value: Int64, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, Int32(index), value))
    }

    package func bind(_ value: Int, at index: Int) throws(SQLiteError) {
        try bind(Int64(value), at: index)
    }

    package func bind(_ value: Double, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, Int32(index), value))
    }

    /// Binds UTF-8 text (SQLite copies it).
    package func bind(_ value: String, at index: Int) throws(SQLiteError) {
        // withCString never gives NULL, so an empty string binds as text, not as NULL.
        let rc = value.withCString { text in
            sqlite3_bind_text(handle, Int32(index), text, Int32(value.utf8.count), BindLifetime.transientBytes)
        }
        try check(rc)
    }

    package func bindNull(at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, Int32(index)))
    }

    /// Binds a BLOB, copied by SQLite (safe whatever happens to `bytes` afterwards).
    package func bind(_ bytes: [UInt8], at index: Int) throws(SQLiteError) {
        let rc = bytes.withUnsafeBytes { raw in bindBlob(raw, at: index, copy: true) }
        try check(rc)
    }

    /// Binds a BLOB, copied by SQLite.
    package func bind(_ data: Data, at index: Int) throws(SQLiteError) {
        let rc = data.withUnsafeBytes { raw in bindBlob(raw, at: index, copy: true) }
        try check(rc)
    }

    /// Binds `bytes` as a BLOB without copying them, runs `body` (which steps the statement), then
    /// clears the binding before the bytes can go away.
    ///
    /// ```swift
    /// try insert.withBlob(samples, at: 3) { try insert.run() }
    /// ```
    package func withBlob<R>(_ bytes: [UInt8], at index: Int, _ body: () throws -> R) throws -> R {
        try bytes.withUnsafeBytes { raw in try withBlob(raw, at: index, body) }
    }

    /// Binds raw bytes as a BLOB without a copy for the duration of `body`.
    package func withBlob<R>(_ raw: UnsafeRawBufferPointer, at index: Int, _ body: () throws -> R) throws -> R {
        try check(bindBlob(raw, at: index, copy: false))
        // The statement may still point at `raw` after `body`: rebind to NULL before it is freed.
        defer { sqlite3_reset(handle); sqlite3_bind_null(handle, Int32(index)) }
        return try body()
    }

    /// The one place a BLOB pointer is handed to SQLite.
    /// Returns SQLite's result code (SQLITE_TOOBIG for a BLOB beyond what SQLite can hold).
    private func bindBlob(_ raw: UnsafeRawBufferPointer, at index: Int, copy: Bool) -> Int32 {
        guard raw.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
        // An empty BLOB must still be a BLOB, not NULL: zeroblob(0) is exactly that.
        guard let base = raw.baseAddress, raw.count > 0 else {
            return sqlite3_bind_zeroblob(handle, Int32(index), 0)
        }
        return sqlite3_bind_blob(handle, Int32(index), base, Int32(raw.count),
                                 copy ? BindLifetime.transientBytes : BindLifetime.staticBytes)
    }
}
