// The key settings object (docs/encryption.md §1): the library key wrapped by a key derived from
// the passphrase with PBKDF2-HMAC-SHA256. 88 bytes, made once per remote, stored in the remote's
// shared settings file; changing the passphrase rewraps it and re-encrypts nothing.

import Foundation

/// The key settings of an encrypted remote: the library key wrapped under a key derived from the
/// passphrase (PBKDF2-HMAC-SHA256, then ChaCha20-Poly1305), 88 bytes stored on the remote
/// (docs/encryption.md §1).
///
/// The first device ``create(passphrase:)``s them; every other device ``unlock(passphrase:)``s
/// them with the same passphrase; ``rewrap(oldPassphrase:newPassphrase:)`` changes the
/// passphrase without re-encrypting anything. The server holds only these bytes: it can try
/// passphrases offline at the cost of the key derivation, which is calibrated to about 250 ms a
/// guess on the device that made them, so a passphrase of a few words is what protects the
/// library. `RemoteEncryption` in LulucatSync does all of this for a library.
///
/// ```swift
/// let (settings, key) = try RemoteKeys.create(passphrase: "correct horse battery staple")
/// upload(settings.encoded)
/// let again = try RemoteKeys(decoding: download()).unlock(passphrase: "correct horse battery staple")
/// ```
public struct RemoteKeys: Sendable, Equatable {
    /// "LKEY".
    package static let magic: [UInt8] = [0x4C, 0x4B, 0x45, 0x59]
    package static let version: UInt8 = 1
    /// The only key derivation of version 1.
    static let kdfPBKDF2SHA256: UInt8 = 1
    package static let byteCount = 88
    package static let saltByteCount = 16
    /// No key settings below this many PBKDF2 iterations are made or opened: OWASP's figure for
    /// PBKDF2-HMAC-SHA256 (2023).
    public static let iterationFloor = 210_000
    /// Nor above this many: a hostile file must not stall a device for minutes.
    public static let iterationCeiling = 20_000_000
    /// What calibration aims at on the device that makes or rewraps the settings.
    public static let calibrationTarget: Duration = .milliseconds(250)

    /// The PBKDF2 iteration count the passphrase is derived with (between ``iterationFloor`` and
    /// ``iterationCeiling`` for settings made here; checked against the floor when unlocking).
    public let iterations: Int
    /// The 16 random bytes of salt the passphrase is derived with (not secret).
    public let salt: [UInt8]
    let nonce: [UInt8]
    /// The wrapped key and its tag (48 bytes).
    let wrapped: [UInt8]

    /// The 88 bytes of docs/encryption.md §1.
    public var encoded: [UInt8] {
        var out = header
        out.append(contentsOf: wrapped)
        return out
    }

    /// The 40 bytes before the wrapped key: also its associated data.
    var header: [UInt8] {
        var out = RemoteKeys.magic
        out.append(RemoteKeys.version)
        out.append(RemoteKeys.kdfPBKDF2SHA256)
        out.append(contentsOf: [0, 0])
        withUnsafeBytes(of: UInt32(iterations).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: salt)
        out.append(contentsOf: nonce)
        return out
    }

    /// Reads key settings from the remote (untrusted bytes).
    /// - Throws: `CryptoError.notKeySettings`, `.unsupportedVersion`, `.truncated`, `.malformed`.
    public init(decoding bytes: [UInt8]) throws {
        let prefix = min(bytes.count, RemoteKeys.magic.count)
        guard bytes[0..<prefix].elementsEqual(RemoteKeys.magic[0..<prefix]) else { throw CryptoError.notKeySettings }
        if bytes.count > 4 {
            guard bytes[4] != 0 else { throw CryptoError.malformed("key settings version 0") }
            guard bytes[4] <= RemoteKeys.version else {
                throw CryptoError.unsupportedVersion(found: Int(bytes[4]), supported: Int(RemoteKeys.version))
            }
        }
        guard bytes.count >= RemoteKeys.byteCount else { throw CryptoError.truncated(expected: RemoteKeys.byteCount, found: bytes.count) }
        guard bytes.count == RemoteKeys.byteCount else { throw CryptoError.malformed("\(bytes.count - RemoteKeys.byteCount) bytes after the key settings") }
        guard bytes[5] == RemoteKeys.kdfPBKDF2SHA256 else { throw CryptoError.malformed("unknown key derivation \(bytes[5])") }
        guard bytes[6] == 0, bytes[7] == 0 else { throw CryptoError.malformed("reserved key settings bytes are not zero") }
        let iterations = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        guard iterations >= 1, iterations <= RemoteKeys.iterationCeiling else {
            throw CryptoError.malformed("\(iterations) PBKDF2 iterations (at most \(RemoteKeys.iterationCeiling))")
        }
        self.iterations = iterations
        salt = Array(bytes[12..<28])
        nonce = Array(bytes[28..<40])
        wrapped = Array(bytes[40..<88])
    }

    init(iterations: Int, salt: [UInt8], nonce: [UInt8], wrapped: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.nonce = nonce
        self.wrapped = wrapped
    }

    // MARK: Making, unlocking, rewrapping

    /// A new random library key and its settings, at an iteration count calibrated on this device
    /// (``calibratedIterations(target:)``: the call itself takes about half a second). The
    /// passphrase is normalized (Unicode NFC) before it is derived, so one typed on another
    /// keyboard unlocks the same key; it is kept nowhere.
    /// - Returns: the settings to store on the remote (``encoded``) and the key they wrap.
    /// - Throws: `CryptoError.backend` when the platform's random generator or primitives fail.
    public static func create(passphrase: String) throws -> (settings: RemoteKeys, key: LibraryKey) {
        try create(passphrase: passphrase, iterations: calibratedIterations(), random: CryptoBackend.randomBytes)
    }

    /// `create` with the iteration count and the random bytes given: for tests only. `random` is
    /// asked for the key (32), then the salt (16), then the nonce (12).
    package static func create(passphrase: String, iterations: Int,
                               random: (Int) throws -> [UInt8]) throws -> (settings: RemoteKeys, key: LibraryKey) {
        let material = SecretBytes(try random(LibraryKey.byteCount))
        let key = try LibraryKey(material)
        let settings = try wrap(key, passphrase: passphrase, iterations: iterations, random: random)
        return (settings, key)
    }

    /// The library key these settings wrap. Never a partial key: the wrapped key is authenticated
    /// before any byte of it is used. Takes as long as the key derivation (about 250 ms on the
    /// device that made the settings): call it off the main thread.
    /// - Throws: `CryptoError.wrongPassphrase` when the passphrase does not open them (or the
    ///   settings were tampered with), `.weakKeySettings` when they ask for fewer iterations than
    ///   ``iterationFloor`` (settings a hostile server made weak), `.backend` when the platform fails.
    public func unlock(passphrase: String) throws -> LibraryKey {
        try unlock(passphrase: passphrase, minimumIterations: RemoteKeys.iterationFloor)
    }

    package func unlock(passphrase: String, minimumIterations: Int) throws -> LibraryKey {
        guard iterations >= minimumIterations else {
            throw CryptoError.weakKeySettings(iterations: iterations, floor: minimumIterations)
        }
        let kek = try RemoteKeys.keyEncryptionKey(passphrase: passphrase, salt: salt, iterations: iterations)
        let material: SecretBytes
        do {
            material = try SecretBytes(count: LibraryKey.byteCount) { out in
                try kek.withUnsafeBytes { k in
                    try nonce.withUnsafeBytes { n in
                        try header.withUnsafeBytes { ad in
                            try wrapped.withUnsafeBytes { w in
                                try Platform.openChaChaPoly(key: k, nonce: n, associatedData: ad,
                                                            ciphertext: UnsafeRawBufferPointer(rebasing: w[0..<LibraryKey.byteCount]),
                                                            tag: UnsafeRawBufferPointer(rebasing: w[LibraryKey.byteCount...]),
                                                            plaintext: out)
                            }
                        }
                    }
                }
            }
        } catch CryptoError.authenticationFailed {
            throw CryptoError.wrongPassphrase
        }
        return try LibraryKey(material)
    }

    /// New settings for `newPassphrase` that wrap the same library key (new salt, nonce and a
    /// freshly calibrated count). Nothing sealed under the key changes.
    /// - Throws: `CryptoError.wrongPassphrase` when `oldPassphrase` does not unlock these settings.
    public func rewrap(oldPassphrase: String, newPassphrase: String) throws -> RemoteKeys {
        let key = try unlock(passphrase: oldPassphrase)
        return try RemoteKeys.wrap(key, passphrase: newPassphrase, iterations: RemoteKeys.calibratedIterations(),
                                   random: CryptoBackend.randomBytes)
    }

    package func rewrap(oldPassphrase: String, newPassphrase: String, iterations: Int, minimumIterations: Int,
                        random: (Int) throws -> [UInt8]) throws -> RemoteKeys {
        let key = try unlock(passphrase: oldPassphrase, minimumIterations: minimumIterations)
        return try RemoteKeys.wrap(key, passphrase: newPassphrase, iterations: iterations, random: random)
    }

    static func wrap(_ key: LibraryKey, passphrase: String, iterations: Int,
                     random: (Int) throws -> [UInt8]) throws -> RemoteKeys {
        guard iterations >= 1, iterations <= iterationCeiling else {
            throw CryptoError.invalidArgument("\(iterations) PBKDF2 iterations (1...\(iterationCeiling))")
        }
        let salt = try random(saltByteCount)
        let nonce = try random(CryptoBackend.nonceByteCount)
        guard salt.count == saltByteCount, nonce.count == CryptoBackend.nonceByteCount else {
            throw CryptoError.invalidArgument("the random source returned the wrong number of bytes")
        }
        var settings = RemoteKeys(iterations: iterations, salt: salt, nonce: nonce, wrapped: [])
        let kek = try keyEncryptionKey(passphrase: passphrase, salt: salt, iterations: iterations)
        let header = settings.header
        let wrapped = try [UInt8](unsafeUninitializedCapacity: LibraryKey.byteCount + CryptoBackend.tagByteCount) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            try kek.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try header.withUnsafeBytes { ad in
                        try key.material.withUnsafeBytes { m in
                            try Platform.sealChaChaPoly(key: k, nonce: n, associatedData: ad, plaintext: m,
                                                        ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[0..<LibraryKey.byteCount]),
                                                        tag: UnsafeMutableRawBufferPointer(rebasing: out[LibraryKey.byteCount...]))
                        }
                    }
                }
            }
            initialized = LibraryKey.byteCount + CryptoBackend.tagByteCount
        }
        settings = RemoteKeys(iterations: iterations, salt: salt, nonce: nonce, wrapped: wrapped)
        return settings
    }

    /// PBKDF2-HMAC-SHA256 of the passphrase in Unicode NFC (so "é" typed on any keyboard is one
    /// passphrase) as UTF-8.
    static func keyEncryptionKey(passphrase: String, salt: [UInt8], iterations: Int) throws -> SecretBytes {
        let normalized = Array(passphrase.precomposedStringWithCanonicalMapping.utf8)
        return try CryptoBackend.pbkdf2SHA256(password: normalized, salt: salt, iterations: iterations,
                                              outputCount: CryptoBackend.keyByteCount)
    }

    // MARK: Calibration

    /// The PBKDF2 iteration count that takes about `target` on this device, rounded up to a
    /// thousand, never below `iterationFloor` nor above `iterationCeiling`. Measures for at least
    /// 50 ms (the fastest of three runs at the count that reached it).
    public static func calibratedIterations(target: Duration = calibrationTarget) throws -> Int {
        let clock = ContinuousClock()
        let password = Array("calibration".utf8)
        let salt = [UInt8](repeating: 0x5A, count: saltByteCount)
        var count = 10_000
        var best = Duration.zero
        while true {
            best = .seconds(1_000_000)
            for _ in 0..<3 {
                let start = clock.now
                _ = try CryptoBackend.pbkdf2SHA256(password: password, salt: salt, iterations: count, outputCount: 32)
                best = min(best, clock.now - start)
            }
            if best >= .milliseconds(50) || count >= iterationCeiling { break }
            count *= 2
        }
        let perIteration = best / count
        let wanted = perIteration > .zero ? target / perIteration : Double(iterationCeiling)
        let rounded = (Int(min(wanted, Double(iterationCeiling))) + 999) / 1000 * 1000
        return max(iterationFloor, min(iterationCeiling, rounded))
    }
}
