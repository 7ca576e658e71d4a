// The one error type of the SQLite engine: every case names the database file and says what to do.
// It is LulucatStore's (StoreError.contentDatabase carries it) so that it needs no SQLite: the
// engine's module (LulucatStoreSQLite) turns the wrapper's errors into it.

import Foundation

/// A failure of the SQLite content database (`<package>/content.sqlite`).
public enum SQLiteEngineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database file is not there (and was not to be created).
    case missing(file: String)
    /// The file is not a SQLite database, or SQLite found its structure damaged.
    case corrupt(file: String, detail: String)
    /// A newer version of the app wrote this database; this build reads up to `supported`.
    case newerSchema(file: String, found: Int64, supported: Int64)
    /// The tables are not the ones this engine writes (a hand-edited or foreign file).
    case unexpectedSchema(file: String, detail: String)
    /// A row holds a value that cannot be right (a BLOB shorter than its sample count says, ...).
    case invalidRow(file: String, table: String, detail: String)
    /// Another connection (usually another process) holds the database's write lock.
    case inUse(file: String)
    /// A row's CRC32C does not match its fields (schema version 2): the bytes of that element (or,
    /// with `element` nil, of the page's own row) changed after they were written. Never returned
    /// as content. `number` is the page's number in its document (1 for the first) when the
    /// thrower knew it (a session fills it), as in the cases below.
    case checksumMismatch(file: String, table: String, page: UUID, element: UUID?, number: Int? = nil)
    /// The database has no row for the page.
    case pageNotFound(file: String, page: UUID, number: Int? = nil)
    /// The page has no element with that id in the database (a change naming an erased element).
    case elementNotFound(file: String, page: UUID, element: UUID, number: Int? = nil)
    /// A change adds an element the page already holds.
    case duplicateElement(file: String, page: UUID, element: UUID, number: Int? = nil)
    /// The model cannot be stored as asked (a channel whose length differs from its samples, ...).
    case unencodable(String)
    /// A change that cannot apply (moving an element below itself, ...).
    case invalidChange(String)
    /// Any other SQLite failure, as SQLite reported it.
    case database(file: String, SQLiteFailure)

    /// The failure for a log, naming the database file (and the page, by its number when known).
    public var description: String {
        func page(_ id: UUID, _ number: Int?) -> String { "page \(number.map(String.init) ?? id.uuidString)" }
        switch self {
        case .missing(let file):
            return "the content database \(file) does not exist"
        case let .corrupt(file, detail):
            return "the content database \(file) is corrupt or not a database (\(detail)); restore the document from a backup or run lnote repair"
        case let .newerSchema(file, found, supported):
            return "the content database \(file) has schema version \(found), newer than this build reads (up to \(supported)); update the app"
        case let .unexpectedSchema(file, detail):
            return "the content database \(file) does not have the expected tables: \(detail)"
        case let .invalidRow(file, table, detail):
            return "the content database \(file) holds an invalid row in \(table): \(detail)"
        case let .checksumMismatch(file, table, id, element, number):
            let what = element.map { "element \($0) of \(page(id, number))" } ?? "the row of \(page(id, number))"
            return "the content database \(file) holds a damaged row in \(table): \(what) fails its checksum (its stored bytes changed); the page keeps its other elements, and lnote repair rebuilds the database without it (the damaged file kept in recovered/)"
        case .inUse(let file):
            return "the content database \(file) is in use by another process; close the document there first"
        case let .pageNotFound(file, id, number):
            return "\(page(id, number)) is not in the content database \(file)"
        case let .elementNotFound(file, id, element, number):
            return "element \(element) is not on \(page(id, number)) in \(file)"
        case let .duplicateElement(file, id, element, number):
            return "element \(element) is already on \(page(id, number)) in \(file)"
        case .unencodable(let what):
            return "cannot store the page: \(what)"
        case .invalidChange(let what):
            return "cannot apply the change: \(what)"
        case let .database(file, error):
            return "the content database \(file) failed: \(error)"
        }
    }
}

/// A SQLite failure as SQLite reported it: its result code and message (the wrapper's error, kept
/// as values).
public struct SQLiteFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (for example 2067, `SQLITE_CONSTRAINT_UNIQUE`).
    public var extendedCode: Int32
    /// The wrapper's whole account: the code, SQLite's message, the file and the statement.
    public var description: String

    package init(extendedCode: Int32, description: String) {
        self.extendedCode = extendedCode
        self.description = description
    }

    /// The primary result code (the low byte of the extended code).
    public var code: Int32 { extendedCode & 0xFF }

    /// The primary codes an app branches on (SQLite's numbering), compared with `code`.
    /// `SQLITE_BUSY`: another connection holds a lock the statement needs.
    public static let busy: Int32 = 5
    /// `SQLITE_LOCKED`: a conflict within the same connection (a table in use by another statement).
    public static let locked: Int32 = 6
    /// `SQLITE_READONLY`: the database (or its folder) cannot be written.
    public static let readonly: Int32 = 8
    /// `SQLITE_IOERR`: the operating system reported an I/O error; the extended code says which.
    public static let ioError: Int32 = 10
    /// `SQLITE_FULL`: the disk (or the quota) is full.
    public static let full: Int32 = 13
}
