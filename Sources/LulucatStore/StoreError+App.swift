// What an app shows of a StoreError: a sentence in the user's words naming the page (by its number)
// or the document, never a temporary file, a lock or a file descriptor; a library that cannot be
// written said as such; a recovery suggestion; and the predicates an app branches on, the same for
// every storage engine. lnote says a read-only library in these same words.

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
    /// What happened, in the user's words (`localizedDescription`): the page by its number ("page
    /// 3") when the error carries it, else "a page"; a library that cannot be written as such.
    public var errorDescription: String? {
        switch self {
        case .file(let e):
            return StoreError.sentence(for: e, outside: "the document")
        case .corruptFile(let path, _):
            return "\(StoreError.subject(of: path).capitalizedFirst) is damaged and cannot be read."
        case let .unexpectedFileKind(path, found):
            let thing = switch found {
            case .symlink: "a link to another place"
            case .directory: "a folder"
            case .file: "a file"
            case .other: "a device or a pipe"
            }
            return "\(StoreError.subject(of: path).capitalizedFirst) cannot be opened: \(thing) is in its place, which the app does not open."
        case let .corruptPage(_, _, _, number):
            return "\(StoreError.page(number).capitalizedFirst) is damaged and cannot be read."
        case let .missingPage(_, _, number):
            return "The content of \(StoreError.page(number)) is missing."
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
        case .pageNotFound:
            return "The page is no longer in the document."
        case let .elementNotFound(_, _, number):
            return "The selection is no longer on \(number.map { "page \($0)" } ?? "the page")."
        case .sessionClosed:
            return "The document is closed."
        case .cancelled:
            return "The operation was cancelled."
        case .migrationRefused(let e):
            return e.errorDescription
        case .invalidArgument:
            return "The change could not be made to the document."
        case .importRefused(_, let cause):
            // The layer that found it says what is wrong (an archive's own sentence), when it can.
            if let cause = cause as? any LocalizedError, let said = cause.errorDescription {
                return "The file could not be imported. \(said) Nothing was added."
            }
            return "The file could not be imported: it is not a document, or it is damaged. Nothing was added."
        case .engineNotAvailable:
            return "The document was made with a storage engine this version of the app does not include. It was left as it was."
        case .contentDatabase(let e):
            switch e {
            case .inUse: return "The document is open in another window or app."
            case .newerSchema: return "The document was made by a newer version of the app."
            case .corrupt, .invalidRow, .unexpectedSchema, .missing: return "The document's content is damaged and cannot be read."
            case .checksumMismatch(_, _, _, _, let number): return "Part of \(StoreError.page(number)) is damaged and cannot be read."
            case .pageNotFound(_, _, let number), .elementNotFound(_, _, _, let number), .duplicateElement(_, _, _, let number):
                return "\(StoreError.page(number).capitalizedFirst) could not be changed."
            case .unencodable, .invalidChange: return "The change could not be made to the document."
            case .database: return "The document's content could not be read or saved because of a storage error."
            }
        }
    }

    /// What the user can do about it.
    public var recoverySuggestion: String? {
        if case .file(let e) = self, let s = StoreError.suggestion(for: e) { return s }
        if isOutOfSpace { return "Free some space on the device; your changes are kept and saved as soon as there is room." }
        if isPermissionDenied { return "Move the document to a folder the app can write to." }
        if isInUse { return "Close the document in the other window or app, then try again." }
        switch self {
        case .documentGone: return "Put the document back where it was, or keep working and save a copy elsewhere."
        case .documentNotFound: return "It may have been moved, renamed or deleted on another device."
        case .pageNotFound: return "It may have been removed in another window or on another device: look at the document again."
        case .elementNotFound, .contentDatabase(.elementNotFound), .contentDatabase(.duplicateElement), .contentDatabase(.pageNotFound),
             .contentDatabase(.invalidChange):
            return "The page may have changed in another window or on another device: look at it again, then make the change again."
        case .contentDatabase(.unencodable): return "Undo the last change and try again; if it keeps failing, report the problem."
        case .unsupportedVersion, .contentDatabase(.newerSchema): return "Update the app to open this document."
        case .engineNotAvailable: return "Open it with an app or lnote build that includes that engine; nothing in it was changed."
        case .sessionClosed: return "Open the document again."
        case .cancelled: return "Nothing was left half done: start it again when you are ready."
        case .importRefused(_, let cause):
            return (cause as? any LocalizedError)?.recoverySuggestion ?? "Ask for a new copy of the file, exported again from where it was made."
        case .migrationRefused(let e): return e.recoverySuggestion
        case .invalidIdentifier: return "Restore the document from a backup, or repair it (lnote repair)."
        case .unexpectedFileKind:
            return "Move away what is in its place (a link, a folder or a device), then try again; or repair the document (lnote repair)."
        case .invalidArgument: return "Look at the document again, then make the change again; if it keeps failing, report the problem."
        default: break
        }
        if isCorruption { return "Restore the document from a backup, or repair it (lnote repair)." }
        if isRetryable { return "Try again in a moment." }
        return "Close the document and open it again; if it keeps failing, restore it from a backup or repair it (lnote repair)."
    }
}

// MARK: - Page numbers

extension StoreError {
    /// This error with the page numbers it lacks filled in from `order`, the document's pages in
    /// order (the session and the calls that read document.json know it): the sentence then says
    /// "page 3". A page not in `order` keeps no number.
    package func numberingPages(_ order: [UUID]) -> StoreError {
        let number = StoreError.numbering(order)
        switch self {
        case .file(let e): return .file(e.numberingPages(order))
        case let .corruptPage(page, path, e, nil): return .corruptPage(page: page, path: path, e, number: number(page))
        case let .missingPage(page, path, nil): return .missingPage(page: page, path: path, number: number(page))
        case let .elementNotFound(element, page, nil): return .elementNotFound(element, page: page, number: number(page))
        case .contentDatabase(let e): return .contentDatabase(e.numberingPages(order))
        case .migrationRefused(let e): return .migrationRefused(e.numberingPages(order))
        default: return self
        }
    }

    /// A page's number (1 for the first) in `order`.
    static func numbering(_ order: [UUID]) -> (UUID) -> Int? {
        { id in order.firstIndex(of: id).map { $0 + 1 } }
    }

    /// "page N", or "a page" when the number is not known.
    static func page(_ number: Int?) -> String { number.map { "page \($0)" } ?? "a page" }
}

extension FileError {
    /// This error with `pageNumber` filled from `order` when its file is a page's (content,
    /// journal or preview) and the number is not set yet.
    package func numberingPages(_ order: [UUID]) -> FileError {
        guard pageNumber == nil, let id = StoreError.place(of: path).page else { return self }
        var numbered = self
        numbered.pageNumber = StoreError.numbering(order)(id)
        return numbered
    }
}

extension SQLiteEngineError {
    /// This error with the number of the page it names filled from `order` (see
    /// `StoreError.numberingPages`).
    package func numberingPages(_ order: [UUID]) -> SQLiteEngineError {
        let number = StoreError.numbering(order)
        switch self {
        case let .checksumMismatch(file, table, page, element, nil):
            return .checksumMismatch(file: file, table: table, page: page, element: element, number: number(page))
        case let .pageNotFound(file, page, nil): return .pageNotFound(file: file, page: page, number: number(page))
        case let .elementNotFound(file, page, element, nil):
            return .elementNotFound(file: file, page: page, element: element, number: number(page))
        case let .duplicateElement(file, page, element, nil):
            return .duplicateElement(file: file, page: page, element: element, number: number(page))
        default: return self
        }
    }
}

extension MigrationError {
    /// This error with the number of the page it names filled from `order`.
    package func numberingPages(_ order: [UUID]) -> MigrationError {
        guard case let .verification(page?, detail, nil) = self else { return self }
        return .verification(page: page, detail, number: StoreError.numbering(order)(page))
    }
}

// MARK: - Files, as a person knows them

extension StoreError {
    /// What a file of a library is to a person: which part of a document, or a file of the
    /// library itself.
    struct Place {
        enum Kind { case page, preview, image, content, document, outside }
        var kind: Kind
        /// The page the file belongs to (a page's content, journal or preview).
        var page: UUID?
    }

    /// Where `path` lies: the part of a document package it is (a temporary file is named after
    /// its target: `.lnote-tmp-<UUID>-<target name>`), or `.outside` a package.
    static func place(of path: String) -> Place {
        let parts = path.split(separator: "/").map(String.init)
        guard let doc = parts.lastIndex(where: { $0.hasSuffix(".lnote") }) else { return Place(kind: .outside) }
        let rest = Array(parts[(doc + 1)...])
        guard let folder = rest.first else { return Place(kind: .document) }
        var name = rest.last ?? ""
        if name.hasPrefix(temporaryFilePrefix) { name = String(name.dropFirst(temporaryFilePrefix.count + 37)) }
        let id = name.split(separator: ".").first.flatMap { UUID(uuidString: String($0)) }
        switch folder {
        case "pages": return Place(kind: .page, page: id)
        case "assets": return Place(kind: .image)
        case "thumbnails": return Place(kind: .preview, page: id)
        default:
            if rest.count == 1, name.hasPrefix("content.sqlite") { return Place(kind: .content) }
            return Place(kind: .document)
        }
    }

    /// What a file path is to the user: a page (by its number, when known), an image, the
    /// document's details; `outside` for a file in no document.
    static func subject(of path: String, pageNumber: Int? = nil, outside: String = "the document") -> String {
        let place = place(of: path)
        switch place.kind {
        case .page: return pageNumber.map { "page \($0)" } ?? "a page of the document"
        case .preview: return pageNumber.map { "the preview of page \($0)" } ?? "a page preview"
        case .image: return "an image in the document"
        case .content: return "the document's content"
        case .document: return "the document"
        case .outside: return outside
        }
    }

    /// The sentence for a failed file call: the page, the image or the document it concerns
    /// (`outside` for a file in no document); a library that cannot be written said as such.
    static func sentence(for e: FileError, outside: String) -> String {
        if let root = notWritableLibrary(e) {
            return notWritable(library: (root as NSString).lastPathComponent, errno: e.errno).capitalizedFirst + "."
        }
        let what = subject(of: e.path, pageNumber: e.pageNumber, outside: outside).capitalizedFirst
        if let found = e.found {
            let thing = switch found {
            case "symbolic link": "a link to another place"
            case "folder": "a folder"
            case "regular file": "a file"
            default: "a device or a pipe"
            }
            return "\(what) could not be opened: \(thing) is in its place, which the app does not open."
        }
        if e.errno == ENOTDIR { return "\(what) could not be opened or saved: a folder on its way is a file, not a folder." }
        if e.isOutOfSpace { return "\(what) could not be saved because the device is full." }
        if e.errno == EROFS { return "\(what) could not be saved because the storage is read-only." }
        if e.errno == EACCES || e.errno == EPERM { return "\(what) could not be opened or saved: permission was denied." }
        if e.isNotFound { return "\(what) could not be found." }
        return "\(what) could not be read or saved because of a storage error."
    }

    /// What to do about a failed file call, when the file tells (a library that cannot be
    /// written, something in the place of a file); nil to use the error's general suggestion.
    static func suggestion(for e: FileError) -> String? {
        if notWritableLibrary(e) != nil {
            return "Move or copy the library to a folder the app can write to (or make it writable); its notes can still be read where they are."
        }
        if e.found != nil || e.errno == ENOTDIR { return "Move away what is in its place (a link, a file or a device), then try again." }
        return nil
    }

    /// How a library that refuses writes is said, here and by lnote: "the library ROOT cannot be
    /// written: it is on a read-only file system" (or "permission to write in it was denied"),
    /// with `shown` the name or path of the library's folder.
    package static func notWritable(library shown: String, errno: Int32) -> String {
        let why = errno == EROFS ? "it is on a read-only file system" : "permission to write in it was denied"
        return "the library \(shown) cannot be written: \(why)"
    }

    /// The folder of the library whose write `e` refused (a read-only volume, or no permission to
    /// write), when its path lies in a library; nil for any other failure (a read refused is not
    /// the library refusing writes).
    package static func notWritableLibrary(_ e: FileError) -> String? {
        let reading = ["read", "list", "stat", "open directory"].contains { e.operation.hasPrefix($0) }
        guard e.errno == EROFS || ((e.errno == EACCES || e.errno == EPERM) && !reading) else { return nil }
        return libraryRoot(containing: e.path)
    }

    /// The library folder a path lies in: the folder holding the document package (`<UUID>.lnote`)
    /// or the staging package (`.lnote-tmp-….lnote`) the path is in or under, or holding the
    /// library's `.sync` or `.trash` folder; nil for any other path.
    package static func libraryRoot(containing path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var found: Int?
        if let i = parts.lastIndex(where: { part in
            part.hasSuffix(".lnote") && (part.hasPrefix(temporaryFilePrefix) || UUID(uuidString: String(part.dropLast(6))) != nil)
        }) {
            found = i > 0 && parts[i - 1] == ".trash" ? i - 1 : i
        } else if let i = parts.firstIndex(where: { $0 == ".sync" || $0 == ".trash" }) {
            found = i
        }
        guard let i = found, i > 0 else { return nil }
        let root = parts[..<i].joined(separator: "/")
        return root.isEmpty ? "/" : root
    }
}

private extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
