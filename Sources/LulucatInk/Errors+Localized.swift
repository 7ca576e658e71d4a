// What an app shows of LulucatInk's errors: a sentence a note-taker reads (`errorDescription`, so
// `localizedDescription` is never Foundation's generic "could not be completed") and what they can
// do about it (`recoverySuggestion`). The technical account stays in `description`, for a log.

import Foundation

extension PageFormatError: LocalizedError {
    /// What happened to the page, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .truncated: return "The saved page is cut short and cannot be read."
        case .badMagic: return "The file is not a page of a note and cannot be read."
        case .unsupportedVersion, .unknownCodec: return "The page was saved by a newer version of the app and cannot be read by this one."
        case .checksumMismatch, .invalidField: return "The saved page is damaged and cannot be read."
        case .unencodable: return "The page could not be saved because part of it cannot be stored; the saved page was not changed."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .unsupportedVersion, .unknownCodec: return "Update the app to open this page."
        case .unencodable: return "Undo the last change and try again; if it keeps failing, report the problem."
        case .truncated, .badMagic, .checksumMismatch, .invalidField:
            return "Restore the document from a backup, or repair it (lnote repair)."
        }
    }
}

extension PageChangeError: LocalizedError {
    /// The change did not fit the page; the page was left as it was (`localizedDescription`).
    public var errorDescription: String? {
        "The change could not be made because the page is not as it was expected to be; the page was left as it was."
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        "The page may have changed in another window or on another device: look at it again, then make the change again."
    }
}

extension QuantizeError: LocalizedError {
    /// A value the drawing cannot hold (not a number, or out of range); nothing was changed
    /// (`localizedDescription`).
    public var errorDescription: String? {
        "A position, size or angle given for the drawing is out of range and could not be stored; nothing was changed."
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        "Draw or place it again within the page."
    }
}
