// The one error type of the SQLite wrapper: result codes, SQLite's own message, the SQL and the file.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A primary SQLite result code (the low byte of an extended code), with names for the ones
/// callers act on.
package struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    package static let error = ResultCode(rawValue: 1)
    package static let abort = ResultCode(rawValue: 4)
    package static let busy = ResultCode(rawValue: 5)
    package static let locked = ResultCode(rawValue: 6)
    package static let readonly = ResultCode(rawValue: 8)
    package static let ioError = ResultCode(rawValue: 10)
    package static let corrupt = ResultCode(rawValue: 11)
    package static let full = ResultCode(rawValue: 13)
    /// A file control opcode the file does not know (`SQLITE_NOTFOUND`).
    package static let notFound = ResultCode(rawValue: 12)
    package static let cantOpen = ResultCode(rawValue: 14)
    package static let constraint = ResultCode(rawValue: 19)
    package static let mismatch = ResultCode(rawValue: 20)
    package static let misuse = ResultCode(rawValue: 21)
    package static let range = ResultCode(rawValue: 25)
    package static let notADatabase = ResultCode(rawValue: 26)

    /// SQLite's English name for the code ("database is locked", ...).
    package var description: String { String(cString: sqlite3_errstr(rawValue)) }
}

/// A failed SQLite call: what SQLite said, which statement, and which database file.
///
/// ```swift
/// do { try connection.execute("INSERT INTO t VALUES (1)") }
/// catch let e as SQLiteError where e.code == .constraint { ... }
/// ```
package struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (for example 2067, `SQLITE_CONSTRAINT_UNIQUE`).
    package var extendedCode: Int32
    /// SQLite's message for this failure (`sqlite3_errmsg`), or ours for a check the wrapper made.
    package var message: String
    /// The SQL being prepared or run, when there was one.
    package var sql: String?
    /// The database file, when known.
    package var path: String?

    package init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code.
    package var code: ResultCode { ResultCode(rawValue: extendedCode & 0xFF) }

    public var description: String {
        var s = "SQLite error \(code.rawValue)"
        if extendedCode != code.rawValue { s += "/\(extendedCode)" }
        s += " (\(code)): \(message)"
        if let path { s += " in database \(path)" }
        if let sql { s += " while running `\(sql)`" }
        return s
    }
}
