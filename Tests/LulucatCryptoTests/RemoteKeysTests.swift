// The key settings: exact bytes for fixed randomness (checked by an independent Python
// implementation of docs/encryption.md §1), unlock, wrong passphrase, rewrap, every damage.

import Foundation
import Testing
@testable import LulucatCrypto

@Suite struct RemoteKeysTests {
    static let passphrase = "correct horse"
    static func fixedRandom() -> FixedRandom {
        FixedRandom([Array(0x00...0x1f), Array(0xa0...0xaf), Array(0xc0...0xcb)])
    }
    static func make(_ passphrase: String = passphrase) throws -> (settings: RemoteKeys, key: LibraryKey) {
        try RemoteKeys.create(passphrase: passphrase, iterations: testIterations, random: CryptoBackend.randomBytes)
    }

    @Test func exactBytesForFixedSaltIterationsAndNonce() throws {
        let random = Self.fixedRandom()
        let (settings, key) = try RemoteKeys.create(passphrase: Self.passphrase, iterations: 1000, random: random.callAsFunction)
        #expect(hexString(settings.encoded) == "4c4b455901010000e8030000a0a1a2a3a4a5a6a7a8a9aaabacadaeafc0c1c2c3c4c5c6c7c8c9cacb2cef571255f433e3cf04bc5668d35ed40ba23db1883130886948fa8a7ee794a398fc378faad68044597a31eb0d301566")
        #expect(settings.encoded.count == RemoteKeys.byteCount)
        #expect(key.material.bytes == Array(0x00...0x1f))
        let decoded = try RemoteKeys(decoding: settings.encoded)
        #expect(decoded == settings)
        #expect(try decoded.unlock(passphrase: Self.passphrase, minimumIterations: 1).material.bytes == Array(0x00...0x1f))
    }

    @Test func unlockGivesTheKeyAndAWrongPassphraseIsAClearError() throws {
        let (settings, key) = try Self.make()
        let unlocked = try RemoteKeys(decoding: settings.encoded).unlock(passphrase: Self.passphrase, minimumIterations: 1)
        #expect(unlocked.keyCheck == key.keyCheck)
        let sealed = try key.seal(kind: .head, document: UUID(), name: "h", plaintext: [9])
        #expect(throws: CryptoError.wrongPassphrase) { try settings.unlock(passphrase: "correct horse ", minimumIterations: 1) }
        #expect(throws: CryptoError.wrongPassphrase) { try settings.unlock(passphrase: "", minimumIterations: 1) }
        #expect(throws: CryptoError.wrongKey) { try LibraryKey.generate().open(kind: .head, document: UUID(), name: "h", sealed: sealed) }
    }

    @Test func thePassphraseIsNormalized() throws {
        let composed = "caf\u{E9} cr\u{E8}me", decomposed = "cafe\u{301} cre\u{300}me"
        let (settings, key) = try Self.make(composed)
        #expect(try settings.unlock(passphrase: decomposed, minimumIterations: 1).keyCheck == key.keyCheck)
    }

    @Test func rewrapKeepsTheKeyAndRetiresTheOldPassphrase() throws {
        let (settings, key) = try Self.make()
        let document = UUID()
        let sealed = try key.seal(kind: .blob, document: document, name: "b", plaintext: [1, 2, 3])
        let rewrapped = try settings.rewrap(oldPassphrase: Self.passphrase, newPassphrase: "new words", iterations: testIterations,
                                            minimumIterations: 1, random: CryptoBackend.randomBytes)
        #expect(rewrapped.salt != settings.salt)
        let again = try RemoteKeys(decoding: rewrapped.encoded).unlock(passphrase: "new words", minimumIterations: 1)
        #expect(again.material.bytes == key.material.bytes)
        #expect(try again.open(kind: .blob, document: document, name: "b", sealed: sealed) == [1, 2, 3])
        #expect(throws: CryptoError.wrongPassphrase) { try rewrapped.unlock(passphrase: Self.passphrase, minimumIterations: 1) }
        #expect(throws: CryptoError.wrongPassphrase) {
            try settings.rewrap(oldPassphrase: "guess", newPassphrase: "x", iterations: testIterations, minimumIterations: 1,
                                random: CryptoBackend.randomBytes)
        }
    }

    @Test func everyFlippedByteIsRefused() throws {
        let (settings, _) = try Self.make()
        let encoded = settings.encoded
        for position in 0..<encoded.count {
            var altered = encoded
            // The top byte of the count flipped by its low bit asks for 16.8 million iterations
            // (a real, slow derivation); its high bit gives a count above the ceiling instead.
            altered[position] ^= position == 11 ? 0x80 : 0x01
            #expect(throws: CryptoError.self, "byte \(position)") {
                try RemoteKeys(decoding: altered).unlock(passphrase: Self.passphrase, minimumIterations: 1)
            }
        }
    }

    @Test func everyTruncationAndEachDamageHasItsError() throws {
        let (settings, _) = try Self.make()
        let encoded = settings.encoded
        for count in 0..<encoded.count {
            #expect(throws: CryptoError.truncated(expected: 88, found: count)) { try RemoteKeys(decoding: Array(encoded.prefix(count))) }
        }
        #expect(throws: CryptoError.malformed("1 bytes after the key settings")) { try RemoteKeys(decoding: encoded + [0]) }
        #expect(throws: CryptoError.notKeySettings) { try RemoteKeys(decoding: Array("{\"remote\": 1}".utf8)) }
        var future = encoded
        future[4] = 2
        #expect(throws: CryptoError.unsupportedVersion(found: 2, supported: 1)) { try RemoteKeys(decoding: future) }
        var kdf = encoded
        kdf[5] = 2
        #expect(throws: CryptoError.malformed("unknown key derivation 2")) { try RemoteKeys(decoding: kdf) }
        var huge = encoded
        huge.replaceSubrange(8..<12, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: CryptoError.malformed("4294967295 PBKDF2 iterations (at most 20000000)")) { try RemoteKeys(decoding: huge) }
    }

    @Test func settingsBelowTheFloorAreNeverUsed() throws {
        // A server that lowers the count (or an old file) is refused before any derivation.
        let (settings, _) = try Self.make()
        #expect(throws: CryptoError.weakKeySettings(iterations: testIterations, floor: RemoteKeys.iterationFloor)) {
            try settings.unlock(passphrase: Self.passphrase)
        }
    }

    @Test func calibrationStaysWithinTheFloorAndCeiling() throws {
        let iterations = try RemoteKeys.calibratedIterations(target: .milliseconds(5))
        #expect(iterations == RemoteKeys.iterationFloor)  // 5 ms is below what the floor costs anywhere
        let calibrated = try RemoteKeys.calibratedIterations()
        #expect(calibrated >= RemoteKeys.iterationFloor && calibrated <= RemoteKeys.iterationCeiling)
        #expect(calibrated % 1000 == 0)
    }

    @Test func createAtTheFloorUnlocksWithThePublicCall() throws {
        // One real-strength derivation (the floor): the public unlock accepts it.
        let (settings, key) = try RemoteKeys.create(passphrase: Self.passphrase, iterations: RemoteKeys.iterationFloor,
                                                    random: CryptoBackend.randomBytes)
        #expect(try settings.unlock(passphrase: Self.passphrase).keyCheck == key.keyCheck)
    }
}
