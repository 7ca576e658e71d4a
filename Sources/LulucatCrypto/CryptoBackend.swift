// The one interface to the platform's cryptography: random bytes, HMAC-SHA256, HKDF-SHA256,
// PBKDF2-HMAC-SHA256 and ChaCha20-Poly1305. Nothing here is written by hand: on Linux it is
// OpenSSL 3's libcrypto (CryptoBackend+libcrypto.swift), on Apple CryptoKit and CommonCrypto
// (CryptoBackend+CryptoKit.swift). Exactly one of the two files compiles; both provide `Platform`.

/// The primitives the encrypted object format and the key settings are built from.
///
/// ```swift
/// let key = SecretBytes(try CryptoBackend.randomBytes(32))
/// let sealed = try CryptoBackend.sealChaChaPoly(key: key, nonce: nonce, plaintext: page, associatedData: ad)
/// let page = try CryptoBackend.openChaChaPoly(key: key, nonce: nonce, sealed: sealed, associatedData: ad)
/// ```
package enum CryptoBackend {
    /// ChaCha20-Poly1305: key, nonce and tag sizes (RFC 8439).
    package static let keyByteCount = 32
    package static let nonceByteCount = 12
    package static let tagByteCount = 16
    /// HMAC-SHA256's output size.
    package static let macByteCount = 32

    /// What the primitives come from, e.g. "OpenSSL 3.0.19 27 Jan 2026 (libcrypto)" or "CryptoKit".
    package static var name: String { Platform.name }

    /// `count` bytes from the system's cryptographic random generator.
    /// - Throws: `CryptoError.backend` when the generator fails (it is never silently weak).
    package static func randomBytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0 else { throw CryptoError.invalidArgument("a negative random byte count") }
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try Platform.fillRandom(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// SHA-256 of `message` (FIPS 180-4): 32 bytes, from the platform (SHA instructions where the
    /// CPU has them). Sync names its content-addressed blobs with it.
    package static func sha256(_ message: [UInt8]) throws -> [UInt8] {
        try message.withUnsafeBytes { m in
            try [UInt8](unsafeUninitializedCapacity: macByteCount) { buffer, initialized in
                try Platform.sha256(m, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = macByteCount
            }
        }
    }

    /// HMAC-SHA256 of `message` under `key` (RFC 2104, FIPS 180-4): 32 bytes.
    package static func hmacSHA256(key: SecretBytes, message: [UInt8]) throws -> [UInt8] {
        try key.withUnsafeBytes { k in
            try message.withUnsafeBytes { m in try hmacSHA256(key: k, message: m) }
        }
    }

    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: macByteCount) { buffer, initialized in
            try Platform.hmacSHA256(key: key, message: message, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = macByteCount
        }
    }

    /// HKDF-SHA256 (RFC 5869), extract then expand: `outputCount` bytes (at most 255 × 32).
    /// An empty salt is the RFC's "not provided" (32 zero bytes).
    package static func hkdfSHA256(inputKey: SecretBytes, salt: [UInt8], info: [UInt8], outputCount: Int) throws -> SecretBytes {
        guard outputCount > 0, outputCount <= 255 * macByteCount else {
            throw CryptoError.invalidArgument("HKDF-SHA256 output of \(outputCount) bytes (1...8160)")
        }
        return try SecretBytes(count: outputCount) { out in
            try inputKey.withUnsafeBytes { k in
                try salt.withUnsafeBytes { s in
                    try info.withUnsafeBytes { i in try Platform.hkdfSHA256(key: k, salt: s, info: i, into: out) }
                }
            }
        }
    }

    /// PBKDF2 with HMAC-SHA256 (RFC 8018 §5.2): `outputCount` bytes from `password` and `salt`.
    /// No minimum is enforced here (the RFC vectors use one iteration); `RemoteKeys` enforces its floor.
    package static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, outputCount: Int) throws -> SecretBytes {
        guard iterations >= 1, iterations <= Int(UInt32.max) else {
            throw CryptoError.invalidArgument("PBKDF2 iteration count \(iterations) (1...\(UInt32.max))")
        }
        guard outputCount > 0, outputCount <= 1 << 20 else {
            throw CryptoError.invalidArgument("PBKDF2 output of \(outputCount) bytes")
        }
        return try SecretBytes(count: outputCount) { out in
            try password.withUnsafeBytes { p in
                try salt.withUnsafeBytes { s in try Platform.pbkdf2SHA256(password: p, salt: s, iterations: iterations, into: out) }
            }
        }
    }

    /// ChaCha20-Poly1305 (RFC 8439 §2.8): the ciphertext followed by the 16-byte tag.
    /// - Parameters:
    ///   - nonce: 12 bytes, never used twice with one key (callers draw it at random).
    package static func sealChaChaPoly(key: SecretBytes, nonce: [UInt8], plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try checkSizes(key: key.count, nonce: nonce.count)
        let count = plaintext.count
        return try [UInt8](unsafeUninitializedCapacity: count + tagByteCount) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            try key.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try associatedData.withUnsafeBytes { ad in
                        try plaintext.withUnsafeBytes { p in
                            try Platform.sealChaChaPoly(key: k, nonce: n, associatedData: ad, plaintext: p,
                                                        ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[0..<count]),
                                                        tag: UnsafeMutableRawBufferPointer(rebasing: out[count...]))
                        }
                    }
                }
            }
            initialized = count + tagByteCount
        }
    }

    /// Opens what `sealChaChaPoly` made: the plaintext, or `CryptoError.authenticationFailed` when
    /// the ciphertext, the tag, the nonce, the key or the associated data differ (no byte of
    /// plaintext is returned then).
    package static func openChaChaPoly(key: SecretBytes, nonce: [UInt8], sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try checkSizes(key: key.count, nonce: nonce.count)
        guard sealed.count >= tagByteCount else { throw CryptoError.authenticationFailed }
        let count = sealed.count - tagByteCount
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try key.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try associatedData.withUnsafeBytes { ad in
                        try sealed.withUnsafeBytes { s in
                            try Platform.openChaChaPoly(key: k, nonce: n, associatedData: ad,
                                                        ciphertext: UnsafeRawBufferPointer(rebasing: s[0..<count]),
                                                        tag: UnsafeRawBufferPointer(rebasing: s[count...]),
                                                        plaintext: UnsafeMutableRawBufferPointer(buffer))
                        }
                    }
                }
            }
            initialized = count
        }
    }

    static func checkSizes(key: Int, nonce: Int) throws {
        guard key == keyByteCount else { throw CryptoError.invalidArgument("a ChaCha20-Poly1305 key of \(key) bytes (32)") }
        guard nonce == nonceByteCount else { throw CryptoError.invalidArgument("a ChaCha20-Poly1305 nonce of \(nonce) bytes (12)") }
    }

    /// Constant-time equality of two byte strings of the same length (lengths are not secret).
    static func constantTimeEqual<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// Key material that is zeroed when the last reference goes: a key, a derived subkey, a
/// passphrase-derived key. Swift arrays are copied freely, so keys never live in one.
///
/// The bytes are written once, when it is made, and only read afterwards: one value may be
/// shared between threads.
public final class SecretBytes: @unchecked Sendable {
    // Written once in init, read only afterwards: safe to share between threads.
    private let storage: UnsafeMutableRawBufferPointer
    /// How many bytes it holds.
    public let count: Int

    /// Copies `bytes` (the caller's array is not zeroed: prefer the initializers that fill in place).
    public convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { out in out.copyBytes(from: bytes) }
    }

    /// Allocates `count` bytes and lets `fill` write them; on a throw the bytes are zeroed and freed.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        let view = UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
        do {
            try fill(view)
        } catch {
            Platform.cleanse(raw)
            raw.deallocate()
            throw error
        }
        storage = raw
        self.count = count
    }

    /// A fresh random secret of `count` bytes, from the system's cryptographic random generator.
    /// - Throws: `CryptoError.backend` when the generator fails.
    public static func random(count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { try Platform.fillRandom($0) }
    }

    /// Lends the bytes to `body` without copying them into an array. The pointer is valid only
    /// inside `body`; do not keep it, and do not copy the bytes anywhere that is not zeroed after use.
    /// - Returns: what `body` returns.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A copy of the bytes in an ordinary array: for tests and test vectors only.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    deinit {
        Platform.cleanse(storage)
        storage.deallocate()
    }
}

/// Every failure of the crypto layer. Each says what was refused; none carries key material.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A call into the platform library failed (the library's own message in `detail`).
    case backend(function: String, detail: String)
    /// A caller passed a size or count the primitive does not take.
    case invalidArgument(String)
    /// ChaCha20-Poly1305 refused: the ciphertext, tag, nonce, key or associated data differ.
    case authenticationFailed

    /// Not an encrypted object (its magic differs).
    case notAnEncryptedObject
    /// Fewer bytes than the header says (or than any object has).
    case truncated(expected: Int, found: Int)
    /// A format version this code does not read: written by a newer app.
    case unsupportedVersion(found: Int, supported: Int)
    /// A header field no writer makes (reserved bits, an unknown kind, trailing bytes).
    case malformed(String)
    /// The object is a different kind (a head where a blob was expected, ...).
    case wrongKind(expected: ObjectKind, found: UInt8)
    /// Sealed under another library's key.
    case wrongKey
    /// Sealed for another document: swapped in from elsewhere.
    case wrongDocument
    /// Sealed under another name: swapped in from elsewhere.
    case wrongName
    /// Its header matches this place and key, but authentication failed: altered bytes.
    case tampered

    /// Not a key settings object (its magic differs).
    case notKeySettings
    /// The passphrase does not open the key settings (or the settings were altered).
    case wrongPassphrase
    /// The key settings ask for fewer PBKDF2 iterations than the floor: refused, never used.
    case weakKeySettings(iterations: Int, floor: Int)

    public var description: String {
        switch self {
        case let .backend(function, detail): return "the crypto library failed in \(function): \(detail)"
        case let .invalidArgument(what): return "invalid argument: \(what)"
        case .authenticationFailed: return "authentication failed"
        case .notAnEncryptedObject: return "not an encrypted object (wrong magic)"
        case let .truncated(expected, found): return "truncated: \(found) bytes where \(expected) are needed"
        case let .unsupportedVersion(found, supported):
            return "format version \(found) is newer than this app reads (\(supported)); update the app"
        case let .malformed(what): return "malformed: \(what)"
        case let .wrongKind(expected, found): return "a \(ObjectKind(rawValue: found).map { "\($0)" } ?? "kind \(found)") object where a \(expected) was expected"
        case .wrongKey: return "sealed under another library's key"
        case .wrongDocument: return "sealed for another document: it was moved here from elsewhere"
        case .wrongName: return "sealed under another name: it was moved here from elsewhere"
        case .tampered: return "failed authentication: the object was altered"
        case .notKeySettings: return "not a key settings object (wrong magic)"
        case .wrongPassphrase: return "wrong passphrase (or the key settings were altered)"
        case let .weakKeySettings(iterations, floor):
            return "the key settings ask for \(iterations) PBKDF2 iterations, below the floor of \(floor): refused"
        }
    }
}
