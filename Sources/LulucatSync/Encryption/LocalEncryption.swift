// What this device keeps of an encrypted remote (the library key, 0600, read into protected memory,
// and `.sync/encryption.json`), and the remote's one shared key settings file (docs/encryption.md §8).

import Foundation
import LulucatCrypto
import LulucatStore

/// What this device keeps of an encrypted remote: the library key in `.sync/library.key` (32 bytes,
/// mode 0600), and in `.sync/encryption.json` the key check, the key settings last confirmed and
/// the head counters.
struct LocalEncryption {
    var keyCheck: [UInt8]
    var settings: [UInt8]
    var settingsETag: String?
    var highest: [String: UInt64]
    var written: [String: UInt64]

    static func keyPath(_ library: Library) -> String { library.root + "/.sync/library.key" }
    static func statePath(_ library: Library) -> String { library.root + "/.sync/encryption.json" }

    static func isSetUp(_ library: Library) -> Bool { (try? library.fileSystem.fileExists(keyPath(library))) == true }

    /// The key, read into protected memory straight from the file (never through an array).
    static func readKey(_ library: Library) throws(SyncError) -> LibraryKey {
        let path = keyPath(library)
        let fs = library.fileSystem
        let fd: FileDescriptor
        do { fd = try fs.open(path, .read) } catch { throw .encryption(.notSetUp("no \(path)")) }
        defer { try? fs.close(fd) }
        var problem: SyncError?
        let material = SecretBytes(count: LibraryKey.byteCount) { out in
            var done = 0
            while done < out.count {
                guard let n = try? fs.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: out[done...])) else {
                    problem = .encryption(.notSetUp("\(path) cannot be read"))
                    return
                }
                guard n > 0 else { problem = .encryption(.notSetUp("\(path) is shorter than a key")); return }
                done += n
            }
            var extra: UInt8 = 0
            let more = withUnsafeMutableBytes(of: &extra) { try? fs.read(fd, into: $0) }
            if more != 0 { problem = .encryption(.notSetUp("\(path) is longer than a key")) }
        }
        if let problem { throw problem }
        return try SyncError.crypto(path) { try LibraryKey(material) }
    }

    /// Writes the key with mode 0600 from its first byte (the seam's atomic durable write of a
    /// secret: a temporary file made 0600, synced, renamed, the folder synced), from the key's
    /// own memory, never through a Swift array.
    static func writeKey(_ key: LibraryKey, _ library: Library) throws(SyncError) {
        let path = keyPath(library)
        let result = key.withMaterial { raw in Result { () throws(FileError) in try library.fileSystem.writeSecretAtomically(raw, to: path) } }
        do { try result.get() } catch { throw .localState(error) }
    }

    static func load(_ library: Library) throws(SyncError) -> LocalEncryption {
        let store = SyncStateStore(library: library)
        guard let o = store.read(EncryptionFile.self, statePath(library)),
              let kc = unhex(o.keyCheck), let st = Data(base64Encoded: o.settings) else {
            throw .encryption(.notSetUp("no readable \(statePath(library))"))
        }
        return LocalEncryption(keyCheck: kc, settings: Array(st), settingsETag: o.settingsETag,
                               highest: o.highest ?? [:], written: o.written ?? [:])
    }

    func save(_ library: Library) throws(SyncError) {
        let store = SyncStateStore(library: library)
        let file = EncryptionFile(keyCheck: hex(keyCheck), settings: Data(settings).base64EncodedString(),
                                  settingsETag: settingsETag, highest: highest, written: written)
        try store.write(file, to: LocalEncryption.statePath(library))
    }

    static func remove(_ library: Library) {
        try? library.fileSystem.removeIfPresent(keyPath(library))
        try? library.fileSystem.removeIfPresent(statePath(library))
    }
}

/// The remote's one shared settings file, `heads/keys` (docs/encryption.md §8.1): the key settings
/// (88 bytes, §1) and a settings object sealed under the library key holding their SHA-256, so a
/// device with the key tells a rewrap by another device from a replacement without the passphrase.
enum SettingsFile {
    static let path = LibrarySync.headsFolder + "/" + EncryptedRemote.settingsName
    static let byteCount = RemoteKeys.byteCount + EncryptedObject.overhead + 32
    static let nilDocument = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    static func make(_ settings: RemoteKeys, key: LibraryKey) throws(SyncError) -> [UInt8] {
        let keys = settings.encoded
        return keys + (try SyncError.crypto("the key settings") {
            try key.seal(kind: .settings, document: nilDocument, name: EncryptedRemote.settingsName, plaintext: ContentDigest.sha256(keys))
        })
    }

    static func keySettings(_ bytes: [UInt8]) throws(SyncError) -> RemoteKeys {
        guard bytes.count == byteCount else { throw .encryption(.settingsReplaced("\(bytes.count) bytes, not \(byteCount)")) }
        do { return try RemoteKeys(decoding: Array(bytes[0..<RemoteKeys.byteCount])) } catch {
            throw .encryption(.settingsReplaced("\(error)"))
        }
    }

    /// Whether `key` made these settings: the confirmation opens and holds their hash.
    static func confirm(_ bytes: [UInt8], key: LibraryKey) throws(SyncError) {
        _ = try keySettings(bytes)
        let plain: [UInt8]
        do {
            plain = try key.open(kind: .settings, document: nilDocument, name: EncryptedRemote.settingsName,
                                 sealed: Array(bytes[RemoteKeys.byteCount...]))
        } catch {
            throw .encryption(.settingsReplaced("their confirmation does not open with this library's key: \(error)"))
        }
        guard plain == ContentDigest.sha256(Array(bytes[0..<RemoteKeys.byteCount])) else {
            throw .encryption(.settingsReplaced("their confirmation names other key settings"))
        }
    }
}

/// The key derivation's cost: calibrated in the product; tests pass a small count.
package struct KeyDerivationCost: Sendable {
    /// nil: calibrated on this device (about 250 ms).
    package var iterations: Int?
    package var minimum: Int
    package static let standard = KeyDerivationCost(iterations: nil, minimum: RemoteKeys.iterationFloor)
    package init(iterations: Int?, minimum: Int) {
        self.iterations = iterations
        self.minimum = minimum
    }
}
