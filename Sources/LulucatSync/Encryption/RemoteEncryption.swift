// Setting up, joining and changing the passphrase of an encrypted remote (docs/encryption.md §8.1).

import Foundation
import LulucatCrypto
import LulucatStore

/// Setting up and changing the passphrase of an encrypted remote.
public enum RemoteEncryption {
    /// Whether the library syncs encrypted (it holds a key).
    public static func isSetUp(_ library: Library) -> Bool { LocalEncryption.isSetUp(library) }

    /// Forgets this device's key and state (the library then syncs in clear, with another remote).
    public static func forget(_ library: Library) { LocalEncryption.remove(library) }

    /// Joins or creates the encrypted remote: the first device makes the library key and the key
    /// settings; every other unlocks them with the passphrase. The key is then kept in
    /// `.sync/library.key` (0600); the passphrase is kept nowhere. From then on
    /// ``LibrarySync/sync(options:progress:)`` syncs this library end-to-end encrypted.
    ///
    /// Derives a key from the passphrase (about 250 ms of work on the device that made the
    /// settings) and makes a few requests; it waits for a round of this library that is running.
    /// - Parameters:
    ///   - library: the library to sync encrypted.
    ///   - remote: the remote it syncs with: empty, or set up by another device.
    ///   - passphrase: the passphrase of every device of this library.
    ///   - allowWeak: accept a passphrase ``weakness(of:)`` finds weak for a new library key
    ///     (scripts and tests that know what they do); joining an existing remote never checks it.
    /// - Returns: whether this call created the key settings.
    /// - Throws: `SyncError.encryption` (`.wrongPassphrase`, `.remoteNotEncrypted`, `.settingsReplaced`,
    ///   `.anotherKeyHere`, `.weakPassphrase`), `SyncError.remote`, `.store`, `.localState`.
    @discardableResult
    public static func setUp(library: Library, remote: any Remote, passphrase: String, allowWeak: Bool = false) async throws(SyncError)
        -> Bool {
        try await setUp(library: library, remote: remote, passphrase: passphrase, cost: .standard, allowWeak: allowWeak)
    }

    /// The fewest characters a passphrase of a new library key may have.
    public static let minimumPassphraseLength = 10

    /// Why a passphrase is too weak for a new library key, or nil: fewer than
    /// `minimumPassphraseLength` characters, or one character repeated. The key derivation slows
    /// a guess to about 250 ms, which a passphrase this short still does not survive offline.
    public static func weakness(of passphrase: String) -> String? {
        if passphrase.count < minimumPassphraseLength {
            return "it has \(passphrase.count) characters; a passphrase needs at least \(minimumPassphraseLength) (a few words are best)"
        }
        if Set(passphrase).count == 1 { return "it is one character repeated" }
        return nil
    }

    @discardableResult
    package static func setUp(library: Library, remote: any Remote, passphrase: String, cost: KeyDerivationCost,
                              allowWeak: Bool = false) async throws(SyncError) -> Bool {
        try SyncError.store { () throws(StoreError) in try library.prepare() }
        let store = SyncStateStore(library: library)
        try store.prepare()
        // It rewrites the bases and seen.json: never while a round runs.
        let lock = try await store.lockRounds(waiting: SyncOptions().waitForOtherRound)
        defer { store.unlockRounds(lock) }
        store.forgetPlainRemote()
        _ = try store.deviceID()
        var entries: [RemoteEntry] = []
        switch await remote.listResult(LibrarySync.headsFolder) {
        case .success(let e): entries = e
        case .failure(.notFound):
            try await SyncError.remote { () async throws(RemoteError) in
                try await remote.makeFolder(LibrarySync.headsFolder)
                try await remote.makeFolder(LibrarySync.blobsFolder)
            }
        case .failure(let e): throw .remote(e)
        }
        var created = false
        var bytes: [UInt8]
        let key: LibraryKey
        if entries.contains(where: { $0.name == EncryptedRemote.settingsName }) {
            bytes = try await remote.settingsBytes()
            key = try unlock(bytes, passphrase: passphrase, cost: cost)
        } else {
            guard !entries.contains(where: { Head.parseFileName($0.name) != nil }) else { throw .encryption(.remoteNotEncrypted) }
            if !allowWeak, let why = weakness(of: passphrase) { throw .encryption(.weakPassphrase(why)) }
            let made = cost.iterations.map { try? RemoteKeys.create(passphrase: passphrase, iterations: $0, random: CryptoBackend.randomBytes) }
                ?? (try? RemoteKeys.create(passphrase: passphrase))
            guard let (settings, k) = made else { throw .encryption(.refused(object: "the new key settings", reason: "they could not be made")) }
            bytes = try SettingsFile.make(settings, key: k)
            let fresh = bytes
            try await SyncError.remote { () async throws(RemoteError) in try await remote.put(SettingsFile.path, fresh) }
            // Two first devices at once: whichever settings are there now win for both.
            let now = try await remote.settingsBytes()
            if now == bytes { key = k; created = true } else {
                bytes = now
                key = try unlock(now, passphrase: passphrase, cost: cost)
            }
        }
        if LocalEncryption.isSetUp(library), let old = try? LocalEncryption.readKey(library), old.keyCheck != key.keyCheck {
            throw .encryption(.anotherKeyHere)
        }
        try LocalEncryption.writeKey(key, library)
        try LocalEncryption(keyCheck: key.keyCheck, settings: bytes, settingsETag: nil, highest: [:], written: [:]).save(library)
        // A new remote: what the bases say was published was published elsewhere.
        try store.saveSeen([:])
        for id in store.baseIDs() {
            guard var b = store.base(id), b.published else { continue }
            let previous = b
            b.published = false
            try store.save(b, previous: previous, durable: true)
        }
        return created
    }

    static func unlock(_ bytes: [UInt8], passphrase: String, cost: KeyDerivationCost) throws(SyncError) -> LibraryKey {
        let settings = try SettingsFile.keySettings(bytes)
        let key: LibraryKey
        do { key = try settings.unlock(passphrase: passphrase, minimumIterations: cost.minimum) } catch {
            if let e = error as? CryptoError, e == .wrongPassphrase { throw .encryption(.wrongPassphrase) }
            throw .encryption(.settingsReplaced("they do not open: \(error)"))
        }
        try SettingsFile.confirm(bytes, key: key)
        return key
    }

    /// Changes the passphrase: the same library key wrapped anew (nothing else is re-encrypted).
    /// - Throws: `SyncError.encryption(.wrongPassphrase)` when `old` does not open the remote's
    ///   settings, `.encryption(.settingsReplaced)` when they hold another key than this library's.
    /// - Parameters:
    ///   - library: a library set up for encryption with `remote`.
    ///   - remote: the remote whose key settings change.
    ///   - old: the passphrase now.
    ///   - new: the passphrase from now on (checked by ``weakness(of:)``).
    ///   - allowWeak: accept a new passphrase ``weakness(of:)`` finds weak.
    public static func changePassphrase(library: Library, remote: any Remote, old: String, new: String,
                                        allowWeak: Bool = false) async throws(SyncError) {
        try await changePassphrase(library: library, remote: remote, old: old, new: new, cost: .standard, allowWeak: allowWeak)
    }

    package static func changePassphrase(library: Library, remote: any Remote, old: String, new: String, cost: KeyDerivationCost,
                                         allowWeak: Bool = false) async throws(SyncError) {
        if !allowWeak, let why = weakness(of: new) { throw .encryption(.weakPassphrase(why)) }
        let mine = try LocalEncryption.readKey(library)
        var local = try LocalEncryption.load(library)
        let bytes = try await remote.settingsBytes()
        let settings = try SettingsFile.keySettings(bytes)
        let key = try unlock(bytes, passphrase: old, cost: cost)
        guard key.keyCheck == mine.keyCheck else { throw .encryption(.settingsReplaced("they hold another library key")) }
        let rewrapped: RemoteKeys
        do {
            if let n = cost.iterations {
                rewrapped = try settings.rewrap(oldPassphrase: old, newPassphrase: new, iterations: n, minimumIterations: cost.minimum,
                                                random: CryptoBackend.randomBytes)
            } else {
                rewrapped = try settings.rewrap(oldPassphrase: old, newPassphrase: new)
            }
        } catch {
            if let e = error as? CryptoError, e == .wrongPassphrase { throw .encryption(.wrongPassphrase) }
            throw .encryption(.refused(object: "the key settings", reason: "they could not be wrapped anew: \(error)"))
        }
        let next = try SettingsFile.make(rewrapped, key: key)
        try await SyncError.remote { () async throws(RemoteError) in try await remote.put(SettingsFile.path, next) }
        local.settings = next
        local.settingsETag = nil
        try local.save(library)
    }
}
