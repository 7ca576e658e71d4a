// The Apple backend: CryptoKit for HMAC, HKDF and ChaCha20-Poly1305, CommonCrypto for PBKDF2,
// Security for random bytes. Not compiled on Linux; kept small so it can be checked by eye.
#if canImport(CryptoKit)
import CryptoKit
import CommonCrypto
import Foundation
import Security

typealias Platform = CryptoKitBackend

enum CryptoKitBackend {
    static var name: String { "CryptoKit" }

    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        _ = memset_s(base, buffer.count, 0, buffer.count)
    }

    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let status = SecRandomCopyBytes(kSecRandomDefault, buffer.count, base)
        guard status == errSecSuccess else { throw CryptoError.backend(function: "SecRandomCopyBytes", detail: "status \(status)") }
    }

    static func sha256(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        SHA256.hash(data: message).withUnsafeBytes { out.copyMemory(from: $0) }
    }

    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        code.withUnsafeBytes { out.copyMemory(from: $0) }
    }

    static func hkdfSHA256(key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
                           into out: UnsafeMutableRawBufferPointer) throws {
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: info,
                                             outputByteCount: out.count)
        derived.withUnsafeBytes { out.copyMemory(from: $0) }
    }

    static func pbkdf2SHA256(password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int,
                             into out: UnsafeMutableRawBufferPointer) throws {
        // Empty inputs get a valid address (CommonCrypto may refuse NULL even with length 0).
        var none: UInt8 = 0
        let status = withUnsafePointer(to: &none) { empty in
            CCKeyDerivationPBKDF(CCPBKDFAlgorithm(kCCPBKDF2),
                                 UnsafeRawPointer(password.baseAddress ?? UnsafeRawPointer(empty)).assumingMemoryBound(to: CChar.self),
                                 password.count,
                                 UnsafeRawPointer(salt.baseAddress ?? UnsafeRawPointer(empty)).assumingMemoryBound(to: UInt8.self),
                                 salt.count,
                                 CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), UInt32(iterations),
                                 out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
        }
        guard status == Int32(kCCSuccess) else { throw CryptoError.backend(function: "CCKeyDerivationPBKDF", detail: "status \(status)") }
    }

    static func sealChaChaPoly(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                               plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
                               tag: UnsafeMutableRawBufferPointer) throws {
        do {
            let box = try ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: try ChaChaPoly.Nonce(data: nonce),
                                          authenticating: associatedData)
            box.ciphertext.withUnsafeBytes { ciphertext.copyMemory(from: $0) }
            box.tag.withUnsafeBytes { tag.copyMemory(from: $0) }
        } catch {
            throw CryptoError.backend(function: "ChaChaPoly.seal", detail: "\(error)")
        }
    }

    static func openChaChaPoly(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                               ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                               plaintext: UnsafeMutableRawBufferPointer) throws {
        let opened: Data
        do {
            let box = try ChaChaPoly.SealedBox(nonce: try ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            opened = try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: associatedData)
        } catch {
            throw CryptoError.authenticationFailed
        }
        opened.withUnsafeBytes { plaintext.copyMemory(from: $0) }
    }
}
#endif
