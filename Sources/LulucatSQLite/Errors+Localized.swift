// What an app shows of the SQLite wrapper's errors: a sentence a note-taker reads
// (`errorDescription`, so `localizedDescription` is never Foundation's generic "could not be
// completed") and what they can do about it (`recoverySuggestion`). SQLite's codes and message, the
// statement and the errno stay in `description` and the fields.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SQLiteError: LocalizedError {
    /// What failed, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch code {
        case .full: return "The database could not be saved because the device is full."
        case .readonly: return "The database could not be saved because the storage is read-only."
        case .busy, .locked: return "The database is in use by another window or app."
        case .corrupt, .notADatabase: return "The database is damaged, or the file is not a database."
        case .cantOpen: return "The database could not be opened."
        case .ioError: return "The database could not be read or saved because of a storage error."
        case .constraint: return "The change conflicts with what the database already holds, so it was not made."
        default: return "The database could not do what was asked."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch code {
        case .full: return "Free some space on the device, then try again."
        case .readonly: return "Move the database to a folder the app can write to."
        case .busy, .locked: return "Close it in the other window or app, then try again."
        case .corrupt, .notADatabase: return "Restore it from a backup, or repair it (lnote repair)."
        case .cantOpen: return "Check that the file is there and the app can read and write its folder, then try again."
        case .ioError: return "Try again in a moment; if it keeps failing, check the device's storage."
        default: return "Try again; if it keeps failing, report the problem."
        }
    }
}

extension SQLiteFileBackendError: LocalizedError {
    /// What the file system refused, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch errno {
        case ENOSPC, EDQUOT: return "The database file could not be written because the device is full."
        case EROFS: return "The database file could not be written because the storage is read-only."
        case EACCES, EPERM: return "The database file could not be opened or written: permission was denied."
        case ENOENT: return "The database file could not be found."
        default: return "The database file could not be read or written because of a storage error."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch errno {
        case ENOSPC, EDQUOT: return "Free some space on the device, then try again."
        case EROFS, EACCES, EPERM: return "Move the database to a folder the app can write to."
        case ENOENT: return "Check that the file was not moved or deleted, then try again."
        default: return "Try again in a moment; if it keeps failing, check the device's storage."
        }
    }
}
