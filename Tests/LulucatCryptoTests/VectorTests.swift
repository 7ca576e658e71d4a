// The backend against the RFCs' own test vectors (each also checked with Python's hashlib, hmac
// and the `cryptography` package before it was typed here).

import Testing
@testable import LulucatCrypto

@Suite struct VectorTests {
    // RFC 4231 §4.2–4.8, HMAC-SHA256 (case 5 is truncated output and not used).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", hexString(Array("Hi There".utf8)),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (hexString(Array("Jefe".utf8)), hexString(Array("what do ya want for nothing?".utf8)),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (String(repeating: "aa", count: 131), hexString(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (String(repeating: "aa", count: 131),
         hexString(Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8)),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmacSHA256RFC4231(key: String, data: String, mac: String) throws {
        #expect(hexString(try CryptoBackend.hmacSHA256(key: SecretBytes(bytes(key)), message: bytes(data))) == mac)
    }

    @Test func hmacWithEmptyKeyAndMessage() throws {
        // HMAC-SHA256("", ""), checked with Python's hmac.
        #expect(hexString(try CryptoBackend.hmacSHA256(key: SecretBytes([]), message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    // RFC 5869 Appendix A.1–A.3, HKDF-SHA256.
    @Test func hkdfRFC5869Case1() throws {
        let okm = try CryptoBackend.hkdfSHA256(inputKey: SecretBytes([UInt8](repeating: 0x0b, count: 22)),
                                               salt: bytes("000102030405060708090a0b0c"),
                                               info: bytes("f0f1f2f3f4f5f6f7f8f9"), outputCount: 42)
        #expect(hexString(okm.bytes) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func hkdfRFC5869Case2() throws {
        let okm = try CryptoBackend.hkdfSHA256(inputKey: SecretBytes(Array(0x00...0x4f)), salt: Array(0x60...0xaf),
                                               info: Array(0xb0...0xff), outputCount: 82)
        #expect(hexString(okm.bytes) == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87")
    }

    @Test func hkdfRFC5869Case3EmptySaltAndInfo() throws {
        let okm = try CryptoBackend.hkdfSHA256(inputKey: SecretBytes([UInt8](repeating: 0x0b, count: 22)), salt: [], info: [],
                                               outputCount: 42)
        #expect(hexString(okm.bytes) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test func hkdfRefusesImpossibleLengths() {
        #expect(throws: CryptoError.self) { try CryptoBackend.hkdfSHA256(inputKey: SecretBytes([1]), salt: [], info: [], outputCount: 0) }
        #expect(throws: CryptoError.self) { try CryptoBackend.hkdfSHA256(inputKey: SecretBytes([1]), salt: [], info: [], outputCount: 8161) }
    }

    // RFC 7914 §11, PBKDF2-HMAC-SHA256.
    @Test func pbkdf2RFC7914OneIteration() throws {
        let dk = try CryptoBackend.pbkdf2SHA256(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, outputCount: 64)
        #expect(hexString(dk.bytes) == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
    }

    @Test func pbkdf2RFC7914EightyThousandIterations() throws {
        let dk = try CryptoBackend.pbkdf2SHA256(password: Array("Password".utf8), salt: Array("NaCl".utf8), iterations: 80000, outputCount: 64)
        #expect(hexString(dk.bytes) == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
    }

    @Test func pbkdf2RefusesZeroIterations() {
        #expect(throws: CryptoError.invalidArgument("PBKDF2 iteration count 0 (1...\(UInt32.max))")) {
            try CryptoBackend.pbkdf2SHA256(password: [1], salt: [2], iterations: 0, outputCount: 32)
        }
    }

    // RFC 8439 §2.8.2, AEAD_CHACHA20_POLY1305.
    static let aeadKey = SecretBytes(Array(0x80...0x9f))
    static let aeadNonce = bytes("070000004041424344454647")
    static let aeadAD = bytes("50515253c0c1c2c3c4c5c6c7")
    static let aeadPlaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    static let aeadSealed = bytes("""
        d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6
        3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36
        92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
        3ff4def08e4b7a9de576d26586cec64b6116
        1ae10b594f09e26a7e902ecbd0600691
        """)

    @Test func chachaPolyRFC8439Seal() throws {
        let sealed = try CryptoBackend.sealChaChaPoly(key: Self.aeadKey, nonce: Self.aeadNonce, plaintext: Self.aeadPlaintext,
                                                      associatedData: Self.aeadAD)
        #expect(sealed == Self.aeadSealed)
        #expect(try CryptoBackend.openChaChaPoly(key: Self.aeadKey, nonce: Self.aeadNonce, sealed: sealed, associatedData: Self.aeadAD)
                == Self.aeadPlaintext)
    }

    @Test func chachaPolyRefusesEveryFlippedBitOfTheVector() {
        var rng = TestRandom(state: 8439)
        for position in 0..<Self.aeadSealed.count {
            var sealed = Self.aeadSealed
            sealed[position] ^= UInt8(1) << UInt8(rng.next() % 8)
            #expect(throws: CryptoError.authenticationFailed) {
                try CryptoBackend.openChaChaPoly(key: Self.aeadKey, nonce: Self.aeadNonce, sealed: sealed, associatedData: Self.aeadAD)
            }
        }
        var ad = Self.aeadAD
        ad[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) {
            try CryptoBackend.openChaChaPoly(key: Self.aeadKey, nonce: Self.aeadNonce, sealed: Self.aeadSealed, associatedData: ad)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try CryptoBackend.openChaChaPoly(key: Self.aeadKey, nonce: Self.aeadNonce, sealed: Array(Self.aeadSealed.dropLast()),
                                             associatedData: Self.aeadAD)
        }
    }

    @Test func chachaPolyEmptyPlaintextAndWrongSizes() throws {
        let key = try SecretBytes.random(count: 32)
        let nonce = try CryptoBackend.randomBytes(12)
        let sealed = try CryptoBackend.sealChaChaPoly(key: key, nonce: nonce, plaintext: [], associatedData: [])
        #expect(sealed.count == 16)
        #expect(try CryptoBackend.openChaChaPoly(key: key, nonce: nonce, sealed: sealed, associatedData: []) == [])
        #expect(throws: CryptoError.self) { try CryptoBackend.sealChaChaPoly(key: SecretBytes([1, 2]), nonce: nonce, plaintext: [], associatedData: []) }
        #expect(throws: CryptoError.self) { try CryptoBackend.sealChaChaPoly(key: key, nonce: [1], plaintext: [], associatedData: []) }
    }

    @Test func randomBytesDiffer() throws {
        let a = try CryptoBackend.randomBytes(32), b = try CryptoBackend.randomBytes(32)
        #expect(a.count == 32 && a != b)
        #expect(try CryptoBackend.randomBytes(0) == [])
        #expect(!CryptoBackend.name.isEmpty)
    }
}
