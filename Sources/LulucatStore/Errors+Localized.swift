// What an app shows of the store's other public errors (StoreError's are in StoreError+App.swift,
// in the same words): a sentence a note-taker reads (`errorDescription`, so `localizedDescription`
// is never Foundation's generic "could not be completed") and what they can do about it
// (`recoverySuggestion`). The file, the errno and SQLite's message stay in `description`.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MigrationError: LocalizedError {
    /// The conversion was refused and the document left as it was (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .verification(_?, _, let number):
            return "The document could not be converted because \(StoreError.page(number)) would have changed; it was left as it was."
        case .verification(nil, _, _):
            return "The document could not be converted because its content would have changed; it was left as it was."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        "Keep using the document as it is; nothing in it was changed. If it keeps happening, report the problem."
    }
}

extension SQLiteEngineError: LocalizedError {
    /// What failed in the document's content, in the words `StoreError.contentDatabase` uses
    /// (`localizedDescription`).
    public var errorDescription: String? { StoreError.contentDatabase(self).errorDescription }

    /// What the person can do about it (as `StoreError.contentDatabase`, or a suggestion of its own
    /// where that has none).
    public var recoverySuggestion: String? {
        if let s = StoreError.contentDatabase(self).recoverySuggestion { return s }
        switch self {
        case .pageNotFound, .elementNotFound, .duplicateElement, .invalidChange:
            return "The page may have changed in another window or on another device: look at it again, then make the change again."
        case .unencodable: return "Undo the last change and try again; if it keeps failing, report the problem."
        default: return "Close the document and open it again; if it keeps failing, restore it from a backup or repair it (lnote repair)."
        }
    }
}

extension SQLiteFailure: LocalizedError {
    /// What failed, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch code {
        case Self.full: return "The document's content could not be saved because the device is full."
        case Self.readonly: return "The document's content could not be saved because the storage is read-only."
        case Self.busy, Self.locked: return "The document is open in another window or app."
        default: return "The document's content could not be read or saved because of a storage error."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch code {
        case Self.full: return "Free some space on the device; your changes are kept and saved as soon as there is room."
        case Self.readonly: return "Move the document to a folder the app can write to."
        case Self.busy, Self.locked: return "Close the document in the other window or app, then try again."
        default: return "Try again in a moment; if it keeps failing, restore the document from a backup or repair it (lnote repair)."
        }
    }
}

extension FileError: LocalizedError {
    /// What could not be read or written, in plain words (`localizedDescription`): the page (by
    /// its number when `pageNumber` is set), the image or the document when the file is one of a
    /// document's (as `StoreError.file` says it), else "a file"; a library that refuses writes (a
    /// read-only volume, no permission) is said as such, never its internal file.
    public var errorDescription: String? { StoreError.sentence(for: self, outside: "a file") }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        if let s = StoreError.suggestion(for: self) { return s }
        if let s = StoreError.file(self).recoverySuggestion, StoreError.place(of: path).kind != .outside { return s }
        if isOutOfSpace { return "Free some space on the device, then try again." }
        return "Check that the folder is there and the app can write to it, then try again."
    }
}
