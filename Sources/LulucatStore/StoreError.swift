// The errors of the store layer: what went wrong, on which document, page or file.

import Foundation
import LulucatInk

/// A failure of the store, with the file, page or document it concerns.
///
/// `description` is the account for a log (paths and ids); `localizedDescription` is the sentence
/// an app shows (see `errorDescription` and `recoverySuggestion`), which names a page by its number
/// in the document ("page 3") when the error carries it, never by its id, and never names a
/// file of the package. A session fills the page numbers of the errors it throws (it knows the
/// document's page order); an error raised below it (an engine's) carries none.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    /// A file system call failed.
    case file(FileError)
    /// A JSON file of a package cannot be read; the package is left untouched.
    case corruptFile(path: String, reason: String)
    /// A page content file cannot be decoded; `number` is the page's number in its document
    /// (1 for the first) when the thrower knew it.
    case corruptPage(page: UUID, path: String, PageFormatError, number: Int? = nil)
    /// A page listed in document.json has no content on disk; `number` as for `corruptPage`.
    case missingPage(page: UUID, path: String, number: Int? = nil)
    /// A file was written by a newer version of the format than this build reads.
    case unsupportedVersion(path: String, found: Int, supported: Int)
    /// A string that should be a UUID, or a name that would escape its folder.
    case invalidIdentifier(String)
    /// A link, folder or device where a regular file should be.
    case unexpectedFileKind(path: String, found: FileKind)
    /// Another session or process has the document open for writing.
    case documentInUse(path: String)
    /// No document with that id (or title) in the library: deleted, moved, or never there.
    case documentNotFound(String)
    /// The document has no page with that id (removed, maybe in another window or on another
    /// device).
    case pageNotFound(UUID)
    /// The page has no element with that id (erased or moved meanwhile); `number` is the page's
    /// number in its document when the thrower knew it.
    case elementNotFound(UUID, page: UUID, number: Int? = nil)
    /// The session is closed, or closing (an edit made while `close()` runs is refused, never
    /// dropped); open the document again.
    case sessionClosed
    /// The document's package was deleted or moved while a session had it open: nothing more can
    /// be saved into it. The edits stay in memory; the session keeps trying (the package may return).
    case documentGone(path: String)
    /// A migration whose new form would not match the old; the document stays on its old engine.
    case migrationRefused(MigrationError)
    /// The task was cancelled; nothing was left half done (a cancelled `open` returns no session).
    case cancelled
    /// A call whose arguments do not fit the document (a page index out of range, ...).
    case invalidArgument(String)
    /// The SQLite engine's content database (`content.sqlite`) failed; the error names the file.
    case contentDatabase(SQLiteEngineError)
    /// The document uses a storage engine this build does not include or has not enabled (the
    /// SQLite engine needs the LulucatStoreSQLite product and `Library.enableSQLiteEngine()`).
    /// Nothing was read through the engine and nothing in the package was changed: the document is
    /// not damaged, and opens in a build that has the engine.
    case engineNotAvailable(EngineKind, path: String)
    /// An import was refused: the file is not a document package, breaks a limit, or is damaged
    /// (`reason` says which, naming the file of the package). Nothing was added to the library.
    /// `cause` is the error of the layer that found it, when there is one (an `ArchiveError` of
    /// a one-file import).
    case importRefused(reason: String, cause: (any Error & Sendable)?)

    /// The failure for a log (or a command line): the paths and ids it concerns. A page whose
    /// number is known is named "page N (its file)".
    public var description: String {
        switch self {
        case .file(let e): return e.description
        case let .corruptFile(path, reason): return "\(path) is corrupt: \(reason)"
        case let .corruptPage(page, path, e, number):
            return "page \(number.map(String.init) ?? page.uuidString) (\(path)) cannot be read: \(e)"
        case let .missingPage(page, path, number):
            return "page \(number.map(String.init) ?? page.uuidString) is listed in document.json but \(path) is missing"
        case let .unsupportedVersion(path, found, supported):
            return "\(path) has format version \(found), newer than this build reads (\(supported)); update the app"
        case .invalidIdentifier(let s): return "'\(s)' is not a valid identifier (a UUID is expected)"
        case let .unexpectedFileKind(path, found):
            let what = found == .symlink ? "symbolic link" : found == .other ? "FIFO, device or socket" : found == .directory ? "folder" : "file"
            return "\(path) is a \(what), refused: the store follows no links and opens only regular files and folders in a library"
        case .documentInUse(let path): return "document is in use: \(path) is open for writing by another session"
        case .documentNotFound(let s): return "no document '\(s)' in the library"
        case .pageNotFound(let id): return "the document has no page \(id)"
        case let .elementNotFound(id, page, number): return "page \(number.map(String.init) ?? page.uuidString) has no element \(id)"
        case .sessionClosed: return "the document session is closed"
        case .documentGone(let path): return "the document was deleted or moved while open: \(path) is gone"
        case .cancelled: return "cancelled"
        case .migrationRefused(let e): return e.description
        case .invalidArgument(let s): return s
        case .contentDatabase(let e): return e.description
        case let .engineNotAvailable(kind, path):
            return "\(path) uses the \(kind.rawValue) engine, which this build does not include (link LulucatStoreSQLite and call Library.enableSQLiteEngine()); the document was left untouched"
        case .importRefused(let reason, _): return reason
        }
    }
}

extension StoreError {
    /// Runs a file-layer call, wrapping its error.
    @inline(__always)
    package static func io<T>(_ body: () throws(FileError) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw .file(error) }
    }
}
