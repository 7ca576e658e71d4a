// The encrypted object format (docs/encryption.md §3): every blob and head on the remote is
// magic + version + kind + length + key check + nonce + place checks + ciphertext + tag, sealed
// with ChaCha20-Poly1305 under the kind's subkey, its associated data binding it to its kind,
// document and name so that nothing can be moved to another place.

import Foundation

/// The byte layout of an encrypted object, in one place.
package enum EncryptedObject {
    /// "LCOB".
    package static let magic: [UInt8] = [0x4C, 0x43, 0x4F, 0x42]
    package static let version: UInt8 = 1
    /// Bytes before the ciphertext.
    package static let headerByteCount = 44
    /// Every byte an object adds to its plaintext: header and tag.
    package static let overhead = headerByteCount + CryptoBackend.tagByteCount
    /// Longest name bound into an object, in UTF-8 bytes.
    package static let maximumNameByteCount = 1024

    enum Offset {
        static let version = 4, kind = 5, reserved = 6, length = 8, keyCheck = 16, nonce = 24
        static let documentCheck = 36, nameCheck = 40
    }
}

extension LibraryKey {
    /// Seals `plaintext` as an object of `kind` that belongs to `document` under `name`.
    ///
    /// - Parameters:
    ///   - name: the object's remote name (a blob's `blobName`, a head's file name); at most 1,024
    ///     UTF-8 bytes.
    /// - Returns: `plaintext.count + 60` bytes, different at every call (a random nonce).
    /// - Throws: `CryptoError.invalidArgument` for an over-long name, `.backend` if libcrypto fails.
    package func seal(kind: ObjectKind, document: UUID, name: String, plaintext: [UInt8]) throws -> [UInt8] {
        try seal(kind: kind, document: document, name: name, plaintext: plaintext,
                 nonce: CryptoBackend.randomBytes(CryptoBackend.nonceByteCount))
    }

    /// `seal` with a given nonce: for exact-byte tests only. A nonce must never repeat under one key.
    package func seal(kind: ObjectKind, document: UUID, name: String, plaintext: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= EncryptedObject.maximumNameByteCount else {
            throw CryptoError.invalidArgument("an object name of \(nameBytes.count) UTF-8 bytes (at most 1024)")
        }
        guard nonce.count == CryptoBackend.nonceByteCount else {
            throw CryptoError.invalidArgument("a nonce of \(nonce.count) bytes (12)")
        }
        var header = [UInt8]()
        header.reserveCapacity(EncryptedObject.headerByteCount)
        header.append(contentsOf: EncryptedObject.magic)
        header.append(EncryptedObject.version)
        header.append(kind.rawValue)
        header.append(contentsOf: [0, 0])
        withUnsafeBytes(of: UInt64(plaintext.count).littleEndian) { header.append(contentsOf: $0) }
        header.append(contentsOf: keyCheck)
        header.append(contentsOf: nonce)
        header.append(contentsOf: try documentCheck(nonce: nonce, document: document))
        header.append(contentsOf: try nameCheck(nonce: nonce, name: nameBytes))
        assert(header.count == EncryptedObject.headerByteCount)
        let associatedData = EncryptedObject.associatedData(header: header[...], document: document, name: nameBytes)

        let total = EncryptedObject.overhead + plaintext.count
        let key = objectKey(kind)
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            out.copyBytes(from: header)
            let ciphertextEnd = EncryptedObject.headerByteCount + plaintext.count
            try key.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try associatedData.withUnsafeBytes { ad in
                        try plaintext.withUnsafeBytes { p in
                            try Platform.sealChaChaPoly(
                                key: k, nonce: n, associatedData: ad, plaintext: p,
                                ciphertext: UnsafeMutableRawBufferPointer(rebasing: out[EncryptedObject.headerByteCount..<ciphertextEnd]),
                                tag: UnsafeMutableRawBufferPointer(rebasing: out[ciphertextEnd...]))
                        }
                    }
                }
            }
            initialized = total
        }
    }

    /// Opens an object sealed by `seal` with the same kind, document and name.
    ///
    /// - Throws: a distinct `CryptoError` for each refusal, checked in this order:
    ///   `.notAnEncryptedObject`, `.unsupportedVersion`, `.truncated`, `.malformed`, `.wrongKind`,
    ///   `.wrongKey`, `.wrongDocument`, `.wrongName`, `.tampered`. Nothing of the plaintext is
    ///   returned unless every byte authenticates.
    package func open(kind: ObjectKind, document: UUID, name: String, sealed: [UInt8]) throws -> [UInt8] {
        let header = try EncryptedObject.parseHeader(sealed, expectedKind: kind)
        guard CryptoBackend.constantTimeEqual(header.keyCheck, keyCheck) else { throw CryptoError.wrongKey }
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= EncryptedObject.maximumNameByteCount else { throw CryptoError.wrongName }
        guard CryptoBackend.constantTimeEqual(header.documentCheck, try documentCheck(nonce: header.nonce, document: document)) else {
            throw CryptoError.wrongDocument
        }
        guard CryptoBackend.constantTimeEqual(header.nameCheck, try nameCheck(nonce: header.nonce, name: nameBytes)) else {
            throw CryptoError.wrongName
        }
        let associatedData = EncryptedObject.associatedData(header: sealed[0..<EncryptedObject.headerByteCount],
                                                            document: document, name: nameBytes)
        let count = header.length
        let key = objectKey(kind)
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do {
                try key.withUnsafeBytes { k in
                    try header.nonce.withUnsafeBytes { n in
                        try associatedData.withUnsafeBytes { ad in
                            try sealed.withUnsafeBytes { s in
                                let ciphertextEnd = EncryptedObject.headerByteCount + count
                                try Platform.openChaChaPoly(
                                    key: k, nonce: n, associatedData: ad,
                                    ciphertext: UnsafeRawBufferPointer(rebasing: s[EncryptedObject.headerByteCount..<ciphertextEnd]),
                                    tag: UnsafeRawBufferPointer(rebasing: s[ciphertextEnd...]),
                                    plaintext: UnsafeMutableRawBufferPointer(buffer))
                            }
                        }
                    }
                }
            } catch CryptoError.authenticationFailed {
                throw CryptoError.tampered
            }
            initialized = count
        }
    }

    /// 4 bytes that tell a wrong document from an altered object without naming the document:
    /// keyed, and different for every nonce, so two objects of one document are not linkable.
    func documentCheck(nonce: [UInt8], document: UUID) throws -> [UInt8] {
        Array(try CryptoBackend.hmacSHA256(key: checkKey, message: [0x01] + nonce + uuidBytes(document)).prefix(4))
    }

    func nameCheck(nonce: [UInt8], name: [UInt8]) throws -> [UInt8] {
        Array(try CryptoBackend.hmacSHA256(key: checkKey, message: [0x02] + nonce + name).prefix(4))
    }
}

extension EncryptedObject {
    struct Header {
        var length: Int
        var keyCheck: ArraySlice<UInt8>
        var nonce: [UInt8]
        var documentCheck: ArraySlice<UInt8>
        var nameCheck: ArraySlice<UInt8>
    }

    /// The associated data: the 44 header bytes, the document's 16 bytes, the name's UTF-8 length
    /// (2 bytes, little-endian) and the name.
    static func associatedData(header: ArraySlice<UInt8>, document: UUID, name: [UInt8]) -> [UInt8] {
        var data = [UInt8]()
        data.reserveCapacity(header.count + 18 + name.count)
        data.append(contentsOf: header)
        data.append(contentsOf: uuidBytes(document))
        data.append(UInt8(name.count & 0xFF))
        data.append(UInt8(name.count >> 8))
        data.append(contentsOf: name)
        return data
    }

    /// Every check that needs no key, in the documented order.
    static func parseHeader(_ bytes: [UInt8], expectedKind: ObjectKind) throws -> Header {
        let prefix = min(bytes.count, magic.count)
        guard bytes[0..<prefix].elementsEqual(magic[0..<prefix]) else { throw CryptoError.notAnEncryptedObject }
        if bytes.count > Offset.version {
            let found = bytes[Offset.version]
            guard found != 0 else { throw CryptoError.malformed("format version 0") }
            guard found <= version else { throw CryptoError.unsupportedVersion(found: Int(found), supported: Int(version)) }
        }
        guard bytes.count >= overhead else { throw CryptoError.truncated(expected: overhead, found: bytes.count) }
        guard bytes[Offset.reserved] == 0, bytes[Offset.reserved + 1] == 0 else {
            throw CryptoError.malformed("reserved header bytes are not zero")
        }
        let kindByte = bytes[Offset.kind]
        guard let kind = ObjectKind(rawValue: kindByte) else { throw CryptoError.malformed("unknown object kind \(kindByte)") }
        guard kind == expectedKind else { throw CryptoError.wrongKind(expected: expectedKind, found: kindByte) }
        var length: UInt64 = 0
        for i in (0..<8).reversed() { length = length << 8 | UInt64(bytes[Offset.length + i]) }
        guard length <= UInt64(Int.max - overhead) else { throw CryptoError.truncated(expected: Int.max, found: bytes.count) }
        let expected = overhead + Int(length)
        guard bytes.count >= expected else { throw CryptoError.truncated(expected: expected, found: bytes.count) }
        guard bytes.count == expected else { throw CryptoError.malformed("\(bytes.count - expected) bytes after the tag") }
        return Header(length: Int(length),
                      keyCheck: bytes[Offset.keyCheck..<Offset.nonce],
                      nonce: Array(bytes[Offset.nonce..<Offset.documentCheck]),
                      documentCheck: bytes[Offset.documentCheck..<Offset.nameCheck],
                      nameCheck: bytes[Offset.nameCheck..<headerByteCount])
    }
}
