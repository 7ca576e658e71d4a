// The one error type of the SQLite wrapper: result codes, SQLite's own message, the SQL and the file.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A primary SQLite result code (the low byte of an extended code), with names for the ones
/// callers act on.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let error = ResultCode(rawValue: 1)
    public static let abort = ResultCode(rawValue: 4)
    public static let busy = ResultCode(rawValue: 5)
    public static let locked = ResultCode(rawValue: 6)
    public static let readonly = ResultCode(rawValue: 8)
    public static let ioError = ResultCode(rawValue: 10)
    public static let corrupt = ResultCode(rawValue: 11)
    public static let full = ResultCode(rawValue: 13)
    /// A file control opcode the file does not know (`SQLITE_NOTFOUND`).
    public static let notFound = ResultCode(rawValue: 12)
    public static let cantOpen = ResultCode(rawValue: 14)
    public static let constraint = ResultCode(rawValue: 19)
    public static let mismatch = ResultCode(rawValue: 20)
    public static let misuse = ResultCode(rawValue: 21)
    public static let range = ResultCode(rawValue: 25)
    public static let notADatabase = ResultCode(rawValue: 26)

    /// SQLite's English name for the code ("database is locked", ...).
    public var description: String { String(cString: sqlite3_errstr(rawValue)) }
}

/// A failed SQLite call: what SQLite said, which statement, and which database file.
///
/// ```swift
/// do { try connection.execute("INSERT INTO t VALUES (1)") }
/// catch let e as SQLiteError where e.code == .constraint { ... }
/// ```
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (for example 2067, `SQLITE_CONSTRAINT_UNIQUE`).
    public var extendedCode: Int32
    /// SQLite's message for this failure (`sqlite3_errmsg`), or ours for a check the wrapper made.
    public var message: String
    /// The SQL being prepared or run, when there was one.
    public var sql: String?
    /// The database file, when known.
    public var path: String?

    public init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code.
    public var code: ResultCode { ResultCode(rawValue: extendedCode & 0xFF) }

    public var description: String {
        var s = "SQLite error \(code.rawValue)"
        if extendedCode != code.rawValue { s += "/\(extendedCode)" }
        s += " (\(code)): \(message)"
        if let path { s += " in database \(path)" }
        if let sql { s += " while running `\(sql)`" }
        return s
    }
}
