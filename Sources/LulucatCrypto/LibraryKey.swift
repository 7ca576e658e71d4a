// The library key: 256 random bits made once per synced library, and the subkeys derived from it
// by HKDF-SHA256, one per purpose (docs/encryption.md §2).

import Foundation

/// What an encrypted object on the remote is, bound into its header and its associated data so
/// that an object of one kind is never read as another (``CryptoError/wrongKind(expected:found:)``
/// names the two).
public enum ObjectKind: UInt8, Sendable, CustomStringConvertible {
    /// An immutable content blob (a page blob or an asset).
    case blob = 1
    /// One device's head of one document.
    case head = 2
    /// A library-wide settings object other than the key settings (which the passphrase seals).
    case settings = 3

    /// The kind in a word: "blob", "head" or "settings".
    public var description: String {
        switch self {
        case .blob: return "blob"
        case .head: return "head"
        case .settings: return "settings"
        }
    }
}

/// The key of one synced library: 256 random bits, made once by the first device and shared with
/// the others wrapped under the passphrase (``RemoteKeys``).
///
/// Every object an encrypted remote holds is sealed under a subkey derived from it, and every
/// name there is keyed by it (docs/encryption.md §2–4): whoever holds it reads the library;
/// the server never sees it. An app rarely handles one itself (`RemoteEncryption` in LulucatSync
/// makes, keeps and unlocks it); it can keep a copy of its bytes where it keeps other secrets
/// (``withMaterial(_:)``) and make the key from them again (``init(_:)``).
///
/// ```swift
/// let (settings, key) = try RemoteKeys.create(passphrase: passphrase)   // once, on the first device
/// let same = try settings.unlock(passphrase: passphrase)                // every other device
/// assert(same.keyCheck == key.keyCheck)
/// ```
///
/// Immutable and `Sendable`: one key may be used from any thread. Its bytes and subkeys live in
/// ``SecretBytes``, zeroed when the key is released.
public final class LibraryKey: Sendable {
    /// The key's length in bytes: 32.
    public static let byteCount = 32
    /// The HKDF `info` strings (docs/encryption.md §2). Salt: none (the key is uniformly random).
    static let blobInfo = Array("LulucatStore v1 blobs".utf8)
    static let headInfo = Array("LulucatStore v1 heads".utf8)
    static let settingsInfo = Array("LulucatStore v1 settings".utf8)
    static let nameInfo = Array("LulucatStore v1 names".utf8)
    static let checkInfo = Array("LulucatStore v1 checks".utf8)
    static let headNameInfo = Array("LulucatStore v1 head names".utf8)

    let material: SecretBytes
    let blobKey: SecretBytes
    let headKey: SecretBytes
    let settingsKey: SecretBytes
    let nameKey: SecretBytes
    let checkKey: SecretBytes
    /// The AEAD key of sealed head names (docs/encryption.md §4.1).
    let headNameKey: SecretBytes
    /// 8 bytes that name this key without revealing it (docs/encryption.md §2). A device keeps it
    /// beside the remote's address: key settings that unlock to another key were replaced.
    public let keyCheck: [UInt8]

    /// The key from its 32 bytes (as ``RemoteKeys/unlock(passphrase:)`` recovers them, or as
    /// ``withMaterial(_:)`` gave them), with its subkeys derived at once.
    /// - Throws: `CryptoError.invalidArgument` when `material` is not 32 bytes; `.backend` when the
    ///   platform's HKDF fails.
    public init(_ material: SecretBytes) throws {
        guard material.count == LibraryKey.byteCount else {
            throw CryptoError.invalidArgument("a library key of \(material.count) bytes (32)")
        }
        self.material = material
        func derive(_ info: [UInt8]) throws -> SecretBytes {
            try CryptoBackend.hkdfSHA256(inputKey: material, salt: [], info: info, outputCount: 32)
        }
        blobKey = try derive(LibraryKey.blobInfo)
        headKey = try derive(LibraryKey.headInfo)
        settingsKey = try derive(LibraryKey.settingsInfo)
        nameKey = try derive(LibraryKey.nameInfo)
        checkKey = try derive(LibraryKey.checkInfo)
        headNameKey = try derive(LibraryKey.headNameInfo)
        keyCheck = Array(try CryptoBackend.hmacSHA256(key: checkKey, message: [0x00] + Array("key".utf8)).prefix(8))
    }

    /// The key's 32 bytes, for keeping it on this device (a 0600 file, a keychain): never a Swift
    /// array, so the caller writes them straight from the zeroed-on-free buffer.
    public func withMaterial<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try material.withUnsafeBytes(body)
    }

    /// A new random library key, from the system's cryptographic random generator.
    /// - Throws: `CryptoError.backend` when the generator fails (never a weaker key).
    public static func generate() throws -> LibraryKey {
        try LibraryKey(SecretBytes.random(count: byteCount))
    }

    func objectKey(_ kind: ObjectKind) -> SecretBytes {
        switch kind {
        case .blob: return blobKey
        case .head: return headKey
        case .settings: return settingsKey
        }
    }

    /// The remote name of a blob: 64 lowercase hex digits of HMAC-SHA256 under the names subkey
    /// over the document's 16 UUID bytes and the blob's plaintext (docs/encryption.md §4). Equal
    /// content in one document has one name; the server cannot test a guess without the key.
    package func blobName(document: UUID, content: [UInt8]) throws -> String {
        var message = [UInt8]()
        message.reserveCapacity(16 + content.count)
        message.append(contentsOf: uuidBytes(document))
        message.append(contentsOf: content)
        let mac = try CryptoBackend.hmacSHA256(key: nameKey, message: message)
        return hex(mac)
    }
}

/// A UUID's 16 bytes in RFC 4122 order.
func uuidBytes(_ id: UUID) -> [UInt8] {
    withUnsafeBytes(of: id.uuid) { Array($0) }
}

package func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
