// Why an encrypted sync stopped (thrown as `SyncError.encryption`).

import Foundation

/// Why an encrypted sync stopped. Every case means nothing was changed in the library.
public enum EncryptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// This library holds no key (not set up with `--encrypt`, or `.sync/library.key` is gone).
    case notSetUp(String)
    /// The passphrase given does not open the remote's key.
    case wrongPassphrase
    /// The remote has no key settings file (reset, emptied, or never encrypted).
    case settingsMissing
    /// The remote's key settings are not the ones this library's key confirms.
    case settingsReplaced(String)
    /// The remote holds a library synced without encryption.
    case remoteNotEncrypted
    /// The remote holds an encrypted library, and this library holds no key for it.
    case remoteEncrypted
    /// This library already holds another library's key (forget it first).
    case anotherKeyHere
    /// A new passphrase is too weak (why, in words): nothing was made or changed.
    case weakPassphrase(String)
    /// An object that failed its checks (authentication, place, size, content).
    case refused(object: String, reason: String)
    /// A head older than one already read from the same device for the same document.
    case replayedHead(object: String, counter: UInt64, highest: UInt64)

    static let nothingChanged = "; sync stopped for this library and nothing was changed here"

    /// The reason in a sentence, for a log or a message.
    public var description: String {
        switch self {
        case .notSetUp(let why): return "this library is not set up for encrypted sync (\(why)): run 'lnote remote add URL --encrypt'"
        case .wrongPassphrase: return "wrong passphrase: it does not open the remote's key settings" + Self.nothingChanged
        case .settingsMissing: return "the remote has no key settings (heads/keys): it was emptied or replaced" + Self.nothingChanged
        case .settingsReplaced(let why): return "the remote's key settings were replaced (\(why))" + Self.nothingChanged
        case .remoteNotEncrypted: return "the remote holds a library synced without encryption; an encrypted library needs an empty remote"
        case .weakPassphrase(let why): return "the passphrase is too weak: \(why); nothing was made or changed"
        case .anotherKeyHere:
            return "this library already holds another library key; run 'lnote remote add' without --encrypt first to forget it"
        case .remoteEncrypted:
            return "the remote holds an end-to-end encrypted library and this library has no key for it: join it with "
                + "'lnote remote add URL --encrypt' and its passphrase" + Self.nothingChanged
        case let .refused(object, reason): return "\(object) was refused: \(reason)" + Self.nothingChanged
        case let .replayedHead(object, counter, highest):
            return "\(object) is an older copy (counter \(counter), already read \(highest)): the server replayed it" + Self.nothingChanged
        }
    }
}
