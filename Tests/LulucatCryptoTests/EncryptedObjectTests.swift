// The encrypted object format: exact bytes (checked by an independent Python implementation of
// docs/encryption.md), round trips, and every refusal: each byte flipped, each truncation, a wrong
// kind, document, name or key, a future version.

import Foundation
import Testing
@testable import LulucatCrypto

@Suite struct EncryptedObjectTests {
    static let document = UUID(uuidString: "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8")!
    static let other = UUID(uuidString: "00000000-1111-4222-8333-444444444444")!
    static let headName = "6F1C2A3B-4D5E-4F60-8172-93A4B5C6D7E8.0A0B0C0D-0E0F-4011-8213-141516171819.head"
    static func fixedKey() throws -> LibraryKey { try LibraryKey(SecretBytes(Array(0x00...0x1f))) }

    @Test func exactBytesOfAHead() throws {
        let key = try Self.fixedKey()
        #expect(hexString(key.keyCheck) == "0d7f0caa7775a76a")
        let sealed = try key.seal(kind: .head, document: Self.document, name: Self.headName,
                                  plaintext: Array("head bytes".utf8), nonce: Array(0x10...0x1b))
        #expect(hexString(sealed) == "4c434f42010200000a000000000000000d7f0caa7775a76a101112131415161718191a1bba6dd400d467699b3ae86db349bdc79cd620908b9c2fea34cec9804d0f4bdca7ab9b")
        #expect(try key.open(kind: .head, document: Self.document, name: Self.headName, sealed: sealed) == Array("head bytes".utf8))
    }

    @Test func subkeysAreHKDFOfTheLibraryKeyWithTheirInfoStrings() throws {
        // docs/encryption.md §2, reproduced with Python's `cryptography` HKDF.
        let key = try Self.fixedKey()
        #expect(hexString(key.blobKey.bytes) == "f6a2bf24d92baef41f5fc574240af7dd9b7dca9a98aebef89c3634bff01aa0e1")
        #expect(hexString(key.headKey.bytes) == "b1583fc064f09dd310be46e09cf303a729b1526ab26a5aa7bd98371b1a9b969b")
        #expect(hexString(key.settingsKey.bytes) == "a7f3acae673c1a827ad8c5f089697f652af4d834d0237f945256465ca6001a71")
        #expect(hexString(key.nameKey.bytes) == "e82568067abcda4eb6bf8fd45808c4fadc3421b3ffe7815397e1dc52aac8c75b")
        #expect(hexString(key.checkKey.bytes) == "8e704ce4a84e70b5f85251c4dd7fa0ec5b040c4d16c6d212c37a6801f1c14302")
        #expect(throws: CryptoError.self) { try LibraryKey(SecretBytes([1, 2, 3])) }
    }

    @Test func blobNamesAreKeyedMACsOfDocumentAndContent() throws {
        let key = try Self.fixedKey()
        let name = try key.blobName(document: Self.document, content: Array("page blob".utf8))
        #expect(name == "af808fe50ea27e3d3f0154529c7f1ff32a67a7686203d7034221599109d36ba3")
        #expect(try key.blobName(document: Self.document, content: Array("page blob".utf8)) == name)
        #expect(try key.blobName(document: Self.other, content: Array("page blob".utf8)) != name)
        #expect(try key.blobName(document: Self.document, content: Array("page blob!".utf8)) != name)
        #expect(try LibraryKey.generate().blobName(document: Self.document, content: Array("page blob".utf8)) != name)
    }

    @Test func roundTripsAtManySizesAndKinds() throws {
        let key = try LibraryKey.generate()
        var rng = TestRandom(state: 17)
        for size in [0, 1, 15, 16, 17, 63, 64, 65, 1000, 65_536, 300_001] {
            let plaintext = rng.bytes(size)
            for kind in [ObjectKind.blob, .head, .settings] {
                let name = try key.blobName(document: Self.document, content: plaintext)
                let sealed = try key.seal(kind: kind, document: Self.document, name: name, plaintext: plaintext)
                #expect(sealed.count == size + EncryptedObject.overhead)
                #expect(try key.open(kind: kind, document: Self.document, name: name, sealed: sealed) == plaintext)
                // A fresh nonce every time: the same plaintext never seals to the same bytes.
                #expect(try key.seal(kind: kind, document: Self.document, name: name, plaintext: plaintext) != sealed)
            }
        }
    }

    @Test func theCiphertextHidesThePlaintext() throws {
        let key = try LibraryKey.generate()
        let plaintext = Array(String(repeating: "Lecture notes, page 3. ", count: 40).utf8)
        let sealed = try key.seal(kind: .blob, document: Self.document, name: "n", plaintext: plaintext)
        let needle = Array("Lecture".utf8)
        #expect(!sealed.indices.dropLast(needle.count).contains { sealed[$0..<$0 + needle.count].elementsEqual(needle) })
        #expect(!sealed.indices.dropLast(16).contains { sealed[$0..<$0 + 16].elementsEqual(uuidBytes(Self.document)) })
    }

    @Test func everyFlippedByteIsRefused() throws {
        let key = try LibraryKey.generate()
        let plaintext = Array("a small head".utf8)
        let sealed = try key.seal(kind: .head, document: Self.document, name: Self.headName, plaintext: plaintext)
        for position in 0..<sealed.count {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var altered = sealed
                altered[position] ^= mask
                #expect(throws: CryptoError.self, "byte \(position) ^ \(mask)") {
                    try key.open(kind: .head, document: Self.document, name: Self.headName, sealed: altered)
                }
            }
        }
        // Payload and tag bytes are caught by the AEAD itself.
        var altered = sealed
        altered[EncryptedObject.headerByteCount] ^= 1
        #expect(throws: CryptoError.tampered) { try key.open(kind: .head, document: Self.document, name: Self.headName, sealed: altered) }
        altered = sealed
        altered[altered.count - 1] ^= 1
        #expect(throws: CryptoError.tampered) { try key.open(kind: .head, document: Self.document, name: Self.headName, sealed: altered) }
        altered = sealed
        altered[EncryptedObject.Offset.nonce] ^= 1   // a nonce changed: its place checks no longer match
        #expect(throws: CryptoError.self) { try key.open(kind: .head, document: Self.document, name: Self.headName, sealed: altered) }
    }

    @Test func everyTruncationIsRefused() throws {
        let key = try LibraryKey.generate()
        let sealed = try key.seal(kind: .blob, document: Self.document, name: "b", plaintext: Array(repeating: 7, count: 40))
        for count in 0..<sealed.count {
            #expect(throws: CryptoError.truncated(expected: count < EncryptedObject.overhead ? EncryptedObject.overhead : sealed.count,
                                                  found: count)) {
                try key.open(kind: .blob, document: Self.document, name: "b", sealed: Array(sealed.prefix(count)))
            }
        }
        #expect(throws: CryptoError.malformed("1 bytes after the tag")) {
            try key.open(kind: .blob, document: Self.document, name: "b", sealed: sealed + [0])
        }
    }

    @Test func eachMisplacementHasItsOwnError() throws {
        let key = try LibraryKey.generate()
        let sealed = try key.seal(kind: .blob, document: Self.document, name: "name-a", plaintext: [1, 2, 3])
        #expect(throws: CryptoError.wrongKind(expected: .head, found: 1)) {
            try key.open(kind: .head, document: Self.document, name: "name-a", sealed: sealed)
        }
        #expect(throws: CryptoError.wrongDocument) { try key.open(kind: .blob, document: Self.other, name: "name-a", sealed: sealed) }
        #expect(throws: CryptoError.wrongName) { try key.open(kind: .blob, document: Self.document, name: "name-b", sealed: sealed) }
        #expect(throws: CryptoError.wrongKey) {
            try LibraryKey.generate().open(kind: .blob, document: Self.document, name: "name-a", sealed: sealed)
        }
        #expect(throws: CryptoError.notAnEncryptedObject) {
            try key.open(kind: .blob, document: Self.document, name: "name-a", sealed: Array("LSPB not encrypted".utf8))
        }
        var future = sealed
        future[EncryptedObject.Offset.version] = 2
        #expect(throws: CryptoError.unsupportedVersion(found: 2, supported: 1)) {
            try key.open(kind: .blob, document: Self.document, name: "name-a", sealed: future)
        }
        var reserved = sealed
        reserved[EncryptedObject.Offset.reserved] = 1
        #expect(throws: CryptoError.malformed("reserved header bytes are not zero")) {
            try key.open(kind: .blob, document: Self.document, name: "name-a", sealed: reserved)
        }
        var unknown = sealed
        unknown[EncryptedObject.Offset.kind] = 9
        #expect(throws: CryptoError.malformed("unknown object kind 9")) {
            try key.open(kind: .blob, document: Self.document, name: "name-a", sealed: unknown)
        }
    }

    @Test func swappingTwoObjectsIsRefused() throws {
        // Two blobs of one document swapped on the server, and two devices' heads swapped.
        let key = try LibraryKey.generate()
        let a = [UInt8](repeating: 1, count: 100), b = [UInt8](repeating: 2, count: 100)
        let nameA = try key.blobName(document: Self.document, content: a), nameB = try key.blobName(document: Self.document, content: b)
        let sealedA = try key.seal(kind: .blob, document: Self.document, name: nameA, plaintext: a)
        #expect(throws: CryptoError.wrongName) { try key.open(kind: .blob, document: Self.document, name: nameB, sealed: sealedA) }
        let head1 = "\(Self.document.uuidString).11111111-1111-4111-8111-111111111111.head"
        let head2 = "\(Self.document.uuidString).22222222-2222-4222-8222-222222222222.head"
        let sealed1 = try key.seal(kind: .head, document: Self.document, name: head1, plaintext: a)
        #expect(throws: CryptoError.wrongName) { try key.open(kind: .head, document: Self.document, name: head2, sealed: sealed1) }
    }

    @Test func seededRandomObjectsAndMutations() throws {
        // Invariant: an object opens only at its own place and only unaltered; never a crash.
        let key = try LibraryKey.generate()
        var rng = TestRandom(state: 2026)
        for _ in 0..<200 {
            let plaintext = rng.bytes(Int(rng.next() % 300))
            let name = "n\(rng.next() % 1000)"
            let sealed = try key.seal(kind: .blob, document: Self.document, name: name, plaintext: plaintext)
            var altered = sealed
            switch rng.next() % 3 {
            case 0: altered[Int(rng.next() % UInt64(altered.count))] ^= UInt8(1 + rng.next() % 255)
            case 1: altered.removeLast(Int(1 + rng.next() % UInt64(altered.count)))
            default: altered.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(altered.count + 1)))
            }
            #expect(throws: CryptoError.self) { try key.open(kind: .blob, document: Self.document, name: name, sealed: altered) }
            #expect(try key.open(kind: .blob, document: Self.document, name: name, sealed: sealed) == plaintext)
        }
    }

    @Test func overLongNamesAreRefused() throws {
        let key = try LibraryKey.generate()
        let long = String(repeating: "x", count: EncryptedObject.maximumNameByteCount + 1)
        #expect(throws: CryptoError.self) { try key.seal(kind: .blob, document: Self.document, name: long, plaintext: []) }
    }
}
