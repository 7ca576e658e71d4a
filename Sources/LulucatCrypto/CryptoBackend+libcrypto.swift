// The Linux (non-Apple) backend: OpenSSL 3's libcrypto through CLibcrypto. Every return code is
// checked; a failure throws with libcrypto's own message and clears its error queue.
#if !canImport(CryptoKit)
import CLibcrypto

typealias Platform = LibcryptoBackend

enum LibcryptoBackend {
    static var name: String {
        guard let text = OpenSSL_version(OPENSSL_VERSION) else { return "libcrypto" }
        return String(cString: text) + " (libcrypto)"
    }

    /// Parameter names live for the whole process: an OSSL_PARAM keeps the pointer, not a copy.
    private static func cString(_ text: String) -> UnsafePointer<CChar> {
        let utf8 = Array(text.utf8CString)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count)
        pointer.initialize(from: utf8, count: utf8.count)
        return UnsafePointer(pointer)
    }
    nonisolated(unsafe) private static let paramDigest = cString("digest")   // OSSL_KDF_PARAM_DIGEST
    nonisolated(unsafe) private static let paramKey = cString("key")         // OSSL_KDF_PARAM_KEY
    nonisolated(unsafe) private static let paramSalt = cString("salt")       // OSSL_KDF_PARAM_SALT
    nonisolated(unsafe) private static let paramInfo = cString("info")       // OSSL_KDF_PARAM_INFO
    nonisolated(unsafe) private static let paramPassword = cString("pass")   // OSSL_KDF_PARAM_PASSWORD
    nonisolated(unsafe) private static let paramIterations = cString("iter") // OSSL_KDF_PARAM_ITER
    nonisolated(unsafe) private static let paramPKCS5 = cString("pkcs5")     // OSSL_KDF_PARAM_PKCS5
    nonisolated(unsafe) private static let sha256 = UnsafeMutablePointer(mutating: cString("SHA2-256"))
    /// The cipher and digest fetched once: OpenSSL 3 fetches an algorithm from its provider on
    /// every call given the legacy `EVP_chacha20_poly1305()`/`EVP_sha256()`, a lock and a lookup
    /// per object (docs/encryption.md §7). Fetched objects are immutable and shared by threads;
    /// if a fetch fails, the legacy getter is used (and fails where it would have anyway).
    nonisolated(unsafe) private static let chacha20Poly1305: OpaquePointer? = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil)
    nonisolated(unsafe) private static let sha256Digest: OpaquePointer? = EVP_MD_fetch(nil, "SHA2-256", nil)
    /// A valid address for empty inputs: libcrypto refuses some NULL pointers even with length 0.
    nonisolated(unsafe) private static let empty = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)

    private static func address(_ buffer: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        buffer.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) } ?? empty
    }

    /// The oldest queued libcrypto error as text; the queue is left empty.
    private static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no detail from libcrypto" }
        var text = [CChar](repeating: 0, count: 256)
        return text.withUnsafeMutableBufferPointer { buffer in
            ERR_error_string_n(code, buffer.baseAddress, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }

    private static func check(_ result: Int32, _ function: String) throws {
        guard result == 1 else { throw CryptoError.backend(function: function, detail: lastError()) }
    }

    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        OPENSSL_cleanse(base, buffer.count)
    }

    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, 1 << 30)
            try check(RAND_bytes(buffer.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)),
                      "RAND_bytes")
            offset += chunk
        }
    }

    static func sha256(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        precondition(out.count == CryptoBackend.macByteCount)
        var length: UInt32 = 0
        try check(EVP_Digest(address(message), message.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length,
                             sha256Digest ?? EVP_sha256(), nil), "EVP_Digest")
    }

    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        precondition(out.count == CryptoBackend.macByteCount)
        guard key.count <= Int(Int32.max) else { throw CryptoError.invalidArgument("an HMAC key over 2 GiB") }
        var length: UInt32 = 0
        let result = HMAC(sha256Digest ?? EVP_sha256(), address(key), Int32(key.count),
                          address(message).assumingMemoryBound(to: UInt8.self), message.count,
                          out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
        guard result != nil else { throw CryptoError.backend(function: "HMAC", detail: lastError()) }
        guard length == UInt32(CryptoBackend.macByteCount) else {
            throw CryptoError.backend(function: "HMAC", detail: "returned \(length) bytes, not 32")
        }
    }

    /// Runs the EVP_KDF `algorithm` with `params` (terminated by the caller), writing `out`.
    private static func deriveKDF(_ algorithm: String, _ params: inout [OSSL_PARAM], into out: UnsafeMutableRawBufferPointer) throws {
        guard let kdf = EVP_KDF_fetch(nil, algorithm, nil) else {
            throw CryptoError.backend(function: "EVP_KDF_fetch(\(algorithm))", detail: lastError())
        }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else {
            throw CryptoError.backend(function: "EVP_KDF_CTX_new(\(algorithm))", detail: lastError())
        }
        defer { EVP_KDF_CTX_free(context) }
        try check(EVP_KDF_derive(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count, &params),
                  "EVP_KDF_derive(\(algorithm))")
    }

    static func hkdfSHA256(key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
                           into out: UnsafeMutableRawBufferPointer) throws {
        // Mode: extract and expand (the default). An empty salt or info is left out: the RFC's default.
        var params = [
            OSSL_PARAM_construct_utf8_string(paramDigest, sha256, 0),
            OSSL_PARAM_construct_octet_string(paramKey, address(key), key.count),
        ]
        if salt.count > 0 { params.append(OSSL_PARAM_construct_octet_string(paramSalt, address(salt), salt.count)) }
        if info.count > 0 { params.append(OSSL_PARAM_construct_octet_string(paramInfo, address(info), info.count)) }
        params.append(OSSL_PARAM_construct_end())
        try deriveKDF("HKDF", &params, into: out)
    }

    static func pbkdf2SHA256(password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int,
                             into out: UnsafeMutableRawBufferPointer) throws {
        // pkcs5 = 1 turns off the provider's SP 800-132 lower bounds (salt, length, 1,000
        // iterations) so the RFC vectors run; RemoteKeys enforces its own, higher floor.
        var iterationCount = UInt64(iterations)
        var pkcs5: Int32 = 1
        try withUnsafeMutablePointer(to: &iterationCount) { iter in
            try withUnsafeMutablePointer(to: &pkcs5) { mode in
                var params = [
                    OSSL_PARAM_construct_utf8_string(paramDigest, sha256, 0),
                    OSSL_PARAM_construct_octet_string(paramPassword, address(password), password.count),
                    OSSL_PARAM_construct_octet_string(paramSalt, address(salt), salt.count),
                    OSSL_PARAM_construct_uint64(paramIterations, iter),
                    OSSL_PARAM_construct_int(paramPKCS5, mode),
                    OSSL_PARAM_construct_end(),
                ]
                try deriveKDF("PBKDF2", &params, into: out)
            }
        }
    }

    /// Feeds `input` to EVP_EncryptUpdate/EVP_DecryptUpdate in pieces an `int` can count.
    private static func update(_ context: OpaquePointer, _ input: UnsafeRawBufferPointer, _ output: UnsafeMutableRawPointer?,
                               _ function: String,
                               _ body: (OpaquePointer, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>, UnsafePointer<UInt8>, Int32) -> Int32) throws {
        var offset = 0
        while offset < input.count {
            let chunk = min(input.count - offset, 1 << 30)
            var written: Int32 = 0
            let out = output.map { $0.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
            try check(body(context, out, &written, input.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk)),
                      function)
            // A stream cipher writes exactly what it reads; associated data (no output) writes nothing.
            if output != nil, written != Int32(chunk) {
                throw CryptoError.backend(function: function, detail: "wrote \(written) bytes for \(chunk)")
            }
            offset += chunk
        }
    }

    static func sealChaChaPoly(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                               plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
                               tag: UnsafeMutableRawBufferPointer) throws {
        precondition(ciphertext.count == plaintext.count && tag.count == CryptoBackend.tagByteCount)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.backend(function: "EVP_CIPHER_CTX_new", detail: lastError()) }
        defer { EVP_CIPHER_CTX_free(context) }  // also cleanses the key schedule
        try check(EVP_EncryptInit_ex(context, chacha20Poly1305 ?? EVP_chacha20_poly1305(), nil,
                                     key.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                     nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)), "EVP_EncryptInit_ex")
        try update(context, associatedData, nil, "EVP_EncryptUpdate(aad)") { EVP_EncryptUpdate($0, $1, $2, $3, $4) }
        try update(context, plaintext, ciphertext.baseAddress, "EVP_EncryptUpdate") { EVP_EncryptUpdate($0, $1, $2, $3, $4) }
        var written: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        try check(EVP_EncryptFinal_ex(context, &scratch, &written), "EVP_EncryptFinal_ex")
        guard written == 0 else { throw CryptoError.backend(function: "EVP_EncryptFinal_ex", detail: "wrote \(written) bytes") }
        try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), tag.baseAddress), "EVP_CIPHER_CTX_ctrl(GET_TAG)")
    }

    static func openChaChaPoly(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
                               ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                               plaintext: UnsafeMutableRawBufferPointer) throws {
        precondition(ciphertext.count == plaintext.count && tag.count == CryptoBackend.tagByteCount)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.backend(function: "EVP_CIPHER_CTX_new", detail: lastError()) }
        defer { EVP_CIPHER_CTX_free(context) }
        do {
            try check(EVP_DecryptInit_ex(context, chacha20Poly1305 ?? EVP_chacha20_poly1305(), nil,
                                         key.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                         nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)), "EVP_DecryptInit_ex")
            try update(context, associatedData, nil, "EVP_DecryptUpdate(aad)") { EVP_DecryptUpdate($0, $1, $2, $3, $4) }
            try update(context, ciphertext, plaintext.baseAddress, "EVP_DecryptUpdate") { EVP_DecryptUpdate($0, $1, $2, $3, $4) }
            try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), address(tag)), "EVP_CIPHER_CTX_ctrl(SET_TAG)")
            var written: Int32 = 0
            var scratch = [UInt8](repeating: 0, count: 16)
            guard EVP_DecryptFinal_ex(context, &scratch, &written) == 1, written == 0 else {
                ERR_clear_error()
                throw CryptoError.authenticationFailed
            }
        } catch {
            cleanse(plaintext)  // nothing of an unauthenticated plaintext leaves
            throw error
        }
    }
}
#endif
