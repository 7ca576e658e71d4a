// What an app shows of a RemoteError or an EncryptionError met on its own (SyncError wraps both and
// has its own sentences): a sentence a note-taker reads (`errorDescription`, so
// `localizedDescription` is never Foundation's generic "could not be completed") and what they can
// do about it (`recoverySuggestion`). The path and the server's answer stay in `description`.

import Foundation

extension RemoteError: LocalizedError {
    /// What the sync remote did, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .notFound: return "A file or folder was not found on the sync server or folder."
        case .refused(_, let r): return r.errorDescription
        case .ambiguous: return "The sync server failed, or the connection to it was lost, during a change, which may or may not have been made; your notes here are safe."
        case .failed: return "The sync server or folder refused a request, so nothing was changed there."
        case .invalidResponse: return "The sync server or folder gave an answer that cannot be used, so it was not used."
        case .timedOut(_, let t):
            let f = RemoteTimeout.format
            switch t {
            case .silent(let s): return "The sync server sent nothing for \(f(s)) s, so the sync stopped waiting; your notes here are safe."
            case let .tooSlow(b, s, _):
                return "The sync server replied too slowly (\(b) bytes in \(f(s)) s), so the sync stopped waiting; your notes here are safe."
            case .requestDeadline(let s):
                return "The sync server took more than \(f(s)) s to reply, so the sync stopped waiting; your notes here are safe."
            case .roundDeadline(let s): return "The sync took longer than its time limit (\(f(s)) s), so it stopped; your notes here are safe."
            }
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .notFound: return "Check the sync address; if the folder was emptied or moved, sync again to fill it."
        case .refused(_, let r): return r.recoverySuggestion
        case .ambiguous: return "Sync again: the next sync repeats what may not have happened."
        case .failed: return "Check the connection and the sync address, credentials and folder, then sync again."
        case .invalidResponse: return "Check that the sync address is a WebDAV folder or an S3 bucket (not a web page), then sync again."
        case .timedOut: return "Check the connection, then sync again: what was finished stays done."
        }
    }
}

extension RemoteRefusal: LocalizedError {
    /// The cause in a sentence a note-taker reads (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .noCredentials: return "The sync server asks for a user name and password, and none were given; nothing was changed."
        case .wrongCredentials: return "The sync server refused the user name or password; nothing was changed."
        case .forbidden:
            return "The sync server forbids this by its own rules (the user name and password are not the cause); nothing was changed."
        case .missingFolder(let f): return "The folder \(f) does not exist on the sync server; nothing was changed."
        case .storageFull: return "The sync server is out of storage space, so nothing more could be stored there; your notes here are safe."
        case .serverError(let s): return "The sync server failed with an error of its own (\(s)); nothing was changed."
        case .unreachable(let why): return "The sync server could not be reached: \(why); nothing was changed."
        case .notAFolder(let f): return "The sync folder cannot be used: \(f) is a file, not a folder, so nothing was written there."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .noCredentials:
            return "Give the user name and password (LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc entry), then sync again."
        case .wrongCredentials: return "Check the user name and password (or app password), then sync again."
        case .forbidden: return "Ask the server's administrator to let this account read and write the sync folder."
        case .missingFolder: return "Create the folder on the server, or correct the sync address, then sync again."
        case .storageFull: return "Free some space on the server (or raise the quota), then sync again."
        case .serverError: return "Sync again later; if it keeps failing, tell the server's administrator."
        case .unreachable: return "Check the connection and the sync address, then sync again."
        case .notAFolder: return "Move or rename that file (or choose another sync folder), then sync again."
        }
    }
}

extension EncryptionError: LocalizedError {
    /// Why the encrypted sync stopped, in plain words; nothing was changed (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .notSetUp: return "These notes are not set up for encrypted sync, so nothing was synced."
        case .wrongPassphrase: return "The passphrase does not open the encrypted notes on the sync server; nothing was changed."
        case .settingsMissing: return "The encryption settings are missing from the sync server; nothing was changed here."
        case .settingsReplaced: return "The encryption settings on the sync server were replaced; nothing was changed here."
        case .remoteNotEncrypted: return "The sync server holds notes synced without encryption; nothing was changed."
        case .remoteEncrypted: return "The sync server holds encrypted notes and this device has no key for them; nothing was changed."
        case .anotherKeyHere: return "These notes already hold the key of other encrypted notes; nothing was changed."
        case .weakPassphrase(let why): return "The passphrase is too weak: \(why). Nothing was changed."
        case .refused: return "Something on the sync server failed its encryption checks and was not used; nothing was changed here."
        case .replayedHead: return "The sync server sent an older copy of a note than it sent before; nothing was changed here."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .notSetUp: return "Set up encrypted sync for this server (lnote remote add URL --encrypt)."
        case .wrongPassphrase: return "Enter the passphrase used on your other devices."
        case .settingsMissing, .settingsReplaced: return "If the sync server was reset or replaced, set up encrypted sync again."
        case .remoteNotEncrypted: return "Use an empty folder on the server for encrypted sync, or sync without encryption."
        case .remoteEncrypted: return "Join them with the passphrase used on your other devices (lnote remote add URL --encrypt)."
        case .anotherKeyHere: return "Forget the old key first (lnote remote add URL without --encrypt), then set up encrypted sync again."
        case .weakPassphrase: return "Choose a longer passphrase: a few words are best."
        case .refused, .replayedHead:
            return "Sync again; if it keeps happening, check who can change the files on the sync server."
        }
    }
}
