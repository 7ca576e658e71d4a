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
        case .ambiguous: return "The connection to the sync server or folder was lost during a change, which may or may not have been made; your notes here are safe."
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
        case .ambiguous: return "Sync again: the next sync repeats what may not have happened."
        case .failed: return "Check the connection and the sync address, credentials and folder, then sync again."
        case .invalidResponse: return "Check that the sync address is a WebDAV folder or an S3 bucket (not a web page), then sync again."
        case .timedOut: return "Check the connection, then sync again: what was finished stays done."
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
