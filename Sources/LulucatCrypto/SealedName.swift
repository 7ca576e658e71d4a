// Sealed head names (docs/encryption.md §4.1): a head's remote name hides its document and device
// from the server, yet a device holding the key reads both back from a listing without a request.

import Foundation

extension LibraryKey {
    /// Characters of a sealed head name: 2 × (12 nonce + 32 ciphertext + 16 tag) = 120.
    package static let sealedHeadNameLength = 120
    static let headNameAssociatedData = Array("LulucatStore v1 head name".utf8)

    /// The remote name of one device's head of one document: deterministic (one name per pair,
    /// so the device rewrites it in place) and opaque without the key.
    ///
    /// `nonce = first 12 bytes of HMAC(names subkey, 03 ‖ document ‖ device)`, then
    /// `ChaCha20-Poly1305(head-names subkey, nonce, document ‖ device, AD "LulucatStore v1 head name")`;
    /// the name is the lowercase hex of `nonce ‖ ciphertext ‖ tag`. A synthetic nonce (SIV): it
    /// repeats only for the same plaintext, which is what makes the name deterministic.
    package func sealedHeadName(document: UUID, device: UUID) throws -> String {
        let plain = uuidBytes(document) + uuidBytes(device)
        let nonce = Array(try CryptoBackend.hmacSHA256(key: nameKey, message: [0x03] + plain).prefix(CryptoBackend.nonceByteCount))
        let sealed = try CryptoBackend.sealChaChaPoly(key: headNameKey, nonce: nonce, plaintext: plain,
                                                      associatedData: LibraryKey.headNameAssociatedData)
        return hex(nonce + sealed)
    }

    /// The document and device of a sealed head name; nil when `name` is not 120 lowercase hex
    /// digits (not a head name at all).
    /// - Throws: `CryptoError.tampered` when it has a head name's shape but does not open, or opens
    ///   to a pair whose name would be another (not made by this key).
    package func openSealedHeadName(_ name: String) throws -> (document: UUID, device: UUID)? {
        guard let bytes = unhex(name), bytes.count == LibraryKey.sealedHeadNameLength / 2 else { return nil }
        let nonce = Array(bytes[0..<CryptoBackend.nonceByteCount])
        let plain: [UInt8]
        do {
            plain = try CryptoBackend.openChaChaPoly(key: headNameKey, nonce: nonce, sealed: Array(bytes[CryptoBackend.nonceByteCount...]),
                                                     associatedData: LibraryKey.headNameAssociatedData)
        } catch CryptoError.authenticationFailed {
            throw CryptoError.tampered
        }
        guard plain.count == 32 else { throw CryptoError.tampered }
        let expected = Array(try CryptoBackend.hmacSHA256(key: nameKey, message: [0x03] + plain).prefix(CryptoBackend.nonceByteCount))
        guard CryptoBackend.constantTimeEqual(expected, nonce) else { throw CryptoError.tampered }
        return (uuid(plain[0..<16]), uuid(plain[16..<32]))
    }
}

func uuid(_ bytes: ArraySlice<UInt8>) -> UUID {
    var u = UUID().uuid
    withUnsafeMutableBytes(of: &u) { $0.copyBytes(from: bytes) }
    return UUID(uuid: u)
}

/// Lowercase hex only (names are written lowercase; another case is another name).
package func unhex(_ text: String) -> [UInt8]? {
    let u = Array(text.utf8)
    guard u.count % 2 == 0 else { return nil }
    func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        default: return nil
        }
    }
    var out = [UInt8]()
    out.reserveCapacity(u.count / 2)
    var i = 0
    while i < u.count {
        guard let h = digit(u[i]), let l = digit(u[i + 1]) else { return nil }
        out.append(h << 4 | l)
        i += 2
    }
    return out
}
