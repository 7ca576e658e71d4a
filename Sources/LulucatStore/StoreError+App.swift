// What an app shows of a StoreError: a sentence in the user's words naming the page or document
// (never a temporary file or a file descriptor), a recovery suggestion, and the predicates an app
// branches on, the same for every storage engine.

import Foundation
import LulucatInk
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension StoreError {
    /// A content-database failure, in the shape every engine uses where one exists: a full disk is
    /// `.file` with ENOSPC naming the database file, as a snapshot or journal write would be.
    package init(contentDatabase error: SQLiteEngineError) {
        if case let .database(file, e) = error {
            switch e.code {
            case SQLiteFailure.full: self = .file(FileError("write", path: file, errno: ENOSPC)); return
            case SQLiteFailure.readonly: self = .file(FileError("write", path: file, errno: EROFS)); return
            default: break
            }
        }
        self = .contentDatabase(error)
    }
}

extension StoreError {
    /// The disk or the user's quota is full: free space, then save again (autosave retries).
    public var isOutOfSpace: Bool {
        if case .file(let e) = self { return e.isOutOfSpace }
        return false
    }

    /// The file system refuses access (permissions, a read-only volume).
    public var isPermissionDenied: Bool {
        switch self {
        case .file(let e): return e.errno == EACCES || e.errno == EPERM || e.errno == EROFS
        case .contentDatabase(.database(_, let e)): return e.code == SQLiteFailure.readonly
        default: return false
        }
    }

    /// A file of the document is damaged or missing its content: `lnote repair` or a backup.
    public var isCorruption: Bool {
        switch self {
        case .corruptFile, .corruptPage, .missingPage, .unexpectedFileKind: return true
        case .contentDatabase(let e):
            switch e {
            case .corrupt, .invalidRow, .unexpectedSchema, .missing, .checksumMismatch: return true
            default: return false
            }
        default: return false
        }
    }

    /// The document is not where it was: deleted, moved, or never there.
    public var isDocumentGone: Bool {
        switch self {
        case .documentGone, .documentNotFound: return true
        default: return false
        }
    }

    /// Another session or process has the document open.
    public var isInUse: Bool {
        switch self {
        case .documentInUse, .contentDatabase(.inUse): return true
        case .file(let e): return e.isWouldBlock
        default: return false
        }
    }

    /// Trying the same call again later may work (space freed, the other process done, a
    /// transient I/O error); corruption, bad arguments and a closed session will not change.
    public var isRetryable: Bool {
        if isOutOfSpace || isInUse { return true }
        switch self {
        case .file(let e): return [EIO, EINTR, EAGAIN, EBUSY, ETIMEDOUT, ENOENT].contains(e.errno)
        case .documentGone: return true
        case .contentDatabase(.database(_, let e)): return [SQLiteFailure.busy, SQLiteFailure.locked, SQLiteFailure.ioError].contains(e.code)
        default: return false
        }
    }
}

extension StoreError: LocalizedError {
    /// What happened, in the user's words, naming the page or the document.
    public var errorDescription: String? {
        switch self {
        case .file(let e):
            let what = StoreError.subject(of: e.path)
            if e.isOutOfSpace { return "\(what.capitalizedFirst) could not be saved because the device is full." }
            if e.errno == EROFS { return "\(what.capitalizedFirst) could not be saved because the storage is read-only." }
            if e.errno == EACCES || e.errno == EPERM { return "\(what.capitalizedFirst) could not be opened or saved: permission was denied." }
            if e.isNotFound { return "\(what.capitalizedFirst) could not be found." }
            return "\(what.capitalizedFirst) could not be read or saved because of a storage error."
        case .corruptFile(let path, _), .unexpectedFileKind(let path, _):
            return "\(StoreError.subject(of: path).capitalizedFirst) is damaged and cannot be read."
        case .corruptPage(let page, _, _):
            return "Page \(StoreError.short(page)) is damaged and cannot be read."
        case .missingPage(let page, _):
            return "The content of page \(StoreError.short(page)) is missing."
        case .unsupportedVersion(let path, _, _):
            return "\(StoreError.subject(of: path).capitalizedFirst) was made by a newer version of the app."
        case .invalidIdentifier:
            return "The document contains a name that is not valid and cannot be opened safely."
        case .documentInUse:
            return "The document is open in another window or app."
        case .documentNotFound:
            return "The document could not be found."
        case .documentGone:
            return "The document was moved or deleted while it was open; recent changes are not saved yet."
        case .pageNotFound(let page):
            return "Page \(StoreError.short(page)) is not in the document."
        case .elementNotFound(_, let page):
            return "The selection is no longer on page \(StoreError.short(page))."
        case .sessionClosed:
            return "The document is closed."
        case .cancelled:
            return "The operation was cancelled."
        case .migrationRefused:
            return "The document could not be converted; it was left as it was."
        case .invalidArgument:
            return "The change could not be made to the document."
        case .importRefused:
            return "The file could not be imported: it is not a document, or it is damaged. Nothing was added."
        case .engineNotAvailable:
            return "The document was made with a storage engine this version of the app does not include. It was left as it was."
        case .contentDatabase(let e):
            switch e {
            case .inUse: return "The document is open in another window or app."
            case .newerSchema: return "The document was made by a newer version of the app."
            case .corrupt, .invalidRow, .unexpectedSchema, .missing: return "The document's content is damaged and cannot be read."
            case .checksumMismatch(_, _, let page, _): return "Part of page \(StoreError.short(page)) is damaged and cannot be read."
            case .pageNotFound(_, let page), .elementNotFound(_, let page, _), .duplicateElement(_, let page, _):
                return "Page \(StoreError.short(page)) could not be changed."
            case .unencodable, .invalidChange: return "The change could not be made to the document."
            case .database: return "The document's content could not be read or saved because of a storage error."
            }
        }
    }

    /// What the user can do about it.
    public var recoverySuggestion: String? {
        if isOutOfSpace { return "Free some space on the device; your changes are kept and saved as soon as there is room." }
        if isPermissionDenied { return "Move the document to a folder the app can write to." }
        if isInUse { return "Close the document in the other window or app, then try again." }
        switch self {
        case .documentGone: return "Put the document back where it was, or keep working and save a copy elsewhere."
        case .documentNotFound: return "It may have been moved, renamed or deleted on another device."
        case .unsupportedVersion, .contentDatabase(.newerSchema): return "Update the app to open this document."
        case .engineNotAvailable: return "Open it with an app or lnote build that includes that engine; nothing in it was changed."
        case .sessionClosed: return "Open the document again."
        case .cancelled: return nil
        case .importRefused: return "Ask for a new copy of the file, exported again from where it was made."
        default: break
        }
        if isCorruption { return "Restore the document from a backup, or repair it (lnote repair)." }
        if isRetryable { return "Try again in a moment." }
        return nil
    }

    /// What a file path is to the user: a page, an image, the document's details.
    static func subject(of path: String) -> String {
        let parts = path.split(separator: "/").map(String.init)
        guard let doc = parts.lastIndex(where: { $0.hasSuffix(".lnote") }) else { return "the document" }
        let rest = Array(parts[(doc + 1)...])
        guard let folder = rest.first else { return "the document" }
        // A temporary file is named after its target: `.lnote-tmp-<UUID>-<target name>`.
        var name = rest.last ?? ""
        if name.hasPrefix(temporaryFilePrefix) { name = String(name.dropFirst(temporaryFilePrefix.count + 37)) }
        let id = name.split(separator: ".").first.flatMap { UUID(uuidString: String($0)) }
        switch folder {
        case "pages": return id.map { "page \(short($0))" } ?? "a page of the document"
        case "assets": return "an image in the document"
        case "thumbnails": return id.map { "the preview of page \(short($0))" } ?? "a page preview"
        default:
            if rest.count == 1, name.hasPrefix("content.sqlite") { return "the document's content" }
            return "the document"
        }
    }

    /// A page or element id as a person can tell pages apart by it: its first eight digits.
    static func short(_ id: UUID) -> String { String(id.uuidString.prefix(8)) }
}

private extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
