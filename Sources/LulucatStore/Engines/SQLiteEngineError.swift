// The one error type of the SQLite engine: every case names the database file and says what to do.

import Foundation
import LulucatSQLite

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
    /// as content.
    case checksumMismatch(file: String, table: String, page: UUID, element: UUID?)
    case pageNotFound(file: String, page: UUID)
    case elementNotFound(file: String, page: UUID, element: UUID)
    case duplicateElement(file: String, page: UUID, element: UUID)
    /// The model cannot be stored as asked (a channel whose length differs from its samples, ...).
    case unencodable(String)
    /// A change that cannot apply (moving an element below itself, ...).
    case invalidChange(String)
    /// Any other SQLite failure, as SQLite reported it.
    case database(file: String, SQLiteError)

    public var description: String {
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
        case let .checksumMismatch(file, table, page, element):
            let what = element.map { "element \($0) of page \(page)" } ?? "the row of page \(page)"
            return "the content database \(file) holds a damaged row in \(table): \(what) fails its checksum (its stored bytes changed); the page keeps its other elements, and lnote repair rebuilds the database without it (the damaged file kept in recovered/)"
        case .inUse(let file):
            return "the content database \(file) is in use by another process; close the document there first"
        case let .pageNotFound(file, page):
            return "page \(page) is not in the content database \(file)"
        case let .elementNotFound(file, page, element):
            return "element \(element) is not on page \(page) in \(file)"
        case let .duplicateElement(file, page, element):
            return "element \(element) is already on page \(page) in \(file)"
        case .unencodable(let what):
            return "cannot store the page: \(what)"
        case .invalidChange(let what):
            return "cannot apply the change: \(what)"
        case let .database(file, error):
            return "the content database \(file) failed: \(error)"
        }
    }

    /// Classifies a wrapper error: damage and locks get their own cases, the rest stays as reported.
    init(_ error: SQLiteError, file: String) {
        switch error.code {
        case .notADatabase, .corrupt:
            self = .corrupt(file: file, detail: error.message)
        case .busy, .locked:
            self = .inUse(file: file)
        default:
            self = .database(file: file, error)
        }
    }
}
