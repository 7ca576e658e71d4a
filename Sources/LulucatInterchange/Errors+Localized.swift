// What an app shows of LulucatInterchange's errors: a sentence a note-taker reads
// (`errorDescription`, so `localizedDescription` is never Foundation's generic "could not be
// completed") and what they can do about it (`recoverySuggestion`). The technical account (the
// entry, the line, the reader's detail) stays in `description`, for a log.

import Foundation

extension ArchiveError: LocalizedError {
    /// What is wrong with the archive, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch kind {
        case .notAnArchive: return "The file is not a zip archive."
        case .truncated: return "The archive is incomplete: it ends too early."
        case .malformed, .sizeMismatch, .checksumMismatch: return "The archive is damaged."
        case .unsafeName: return "The archive holds a file name that is not safe to unpack, so it was not opened."
        case .symlink: return "The archive holds a link to another place, so it was not opened."
        case .specialFile: return "The archive holds a special file (a device or a pipe), so it was not opened."
        case .duplicateName: return "The archive holds two files with the same name, so it was not opened."
        case .encrypted: return "The archive is protected by a password, which this app does not open."
        case .unsupportedMethod: return "The archive is compressed in a way this app does not read."
        case .unsupportedFeature: return "The archive uses a feature this app does not read (it may be split into parts or be very large)."
        case .outsideLayout: return "The archive holds a file that does not belong in a note, so it was not opened."
        case .limitExceeded: return "The archive unpacks to more than this app opens safely, so it was not opened."
        case .tooLarge: return "The export is too large for a zip archive, so it was not made."
        case .io: return "The archive could not be read or written."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch kind {
        case .truncated, .malformed, .sizeMismatch, .checksumMismatch:
            return "Copy or download the file again; it may have been cut short on the way."
        case .notAnArchive, .unsafeName, .symlink, .specialFile, .duplicateName, .outsideLayout, .unsupportedFeature,
             .unsupportedMethod, .encrypted, .limitExceeded:
            return "Ask for a new copy of the file, exported again from where it was made."
        case .tooLarge: return "Export fewer notes, or fewer images, at a time."
        case .io: return "Check that there is free space on the device, then try again."
        }
    }
}

extension InkMLError: LocalizedError {
    /// What is wrong with the InkML file, in plain words, with the line when there is one
    /// (`localizedDescription`).
    public var errorDescription: String? {
        let at = line.map { " (line \($0))" } ?? ""
        switch kind {
        case .malformedXML: return "The InkML file is damaged\(at) and could not be imported."
        case .notInkML: return "The file is not an InkML drawing and could not be imported."
        case .tooLarge: return "The InkML file is too large to import."
        case .invalidTrace: return "A stroke in the InkML file is not written correctly\(at), so the file could not be imported."
        case .invalidReference: return "The InkML file refers to a part it does not contain\(at), so it could not be imported."
        case .unsupported: return "The InkML file uses a feature this app does not import\(at)."
        case .cancelled: return "The import was cancelled."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch kind {
        case .malformedXML, .invalidTrace, .invalidReference:
            return "Export the drawing again from the app that made it, then import the new file."
        case .notInkML: return "Choose a file exported as InkML (.inkml)."
        case .tooLarge: return "Export a smaller part of the drawing, or split it into several files."
        case .unsupported: return "Export the drawing again as plain InkML, without links to other files."
        case .cancelled: return "Nothing was added: import the file again when you are ready."
        }
    }
}
