// Sealed head names (docs/encryption.md §4.1) and blob names over a digest (§4): exact values
// reproduced by an independent Python implementation (hashlib, hmac, cryptography 48), round
// trips, and every altered name refused.

import Foundation
import Testing
@testable import LulucatCrypto

@Suite struct SealedNameTests {
    let key = try! LibraryKey(SecretBytes(Array(0..<32)))
    let document = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    let device = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!

    @Test func theNameIsTheDocumentedBytes() throws {
        let name = try key.sealedHeadName(document: document, device: device)
        #expect(name == "56083032923bdc0225ba25ceea28b95e7893be146f0b2d03187d427006b4b15ed8a4dea026bc11ccdf5eaed2285d219181bc64d6e535a82238f9d719")
        #expect(name.count == LibraryKey.sealedHeadNameLength)
        // Deterministic: the device rewrites its head in place.
        #expect(try key.sealedHeadName(document: document, device: device) == name)
        let opened = try #require(try key.openSealedHeadName(name))
        #expect(opened.document == document && opened.device == device)
        // A blob's name is the keyed MAC of the document and the content's SHA-256.
        let sha256OfHello = bytes("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        #expect(try key.blobName(document: document, content: sha256OfHello) == "944b789b9c5a3d0f546f25d626cae60c56ef28474e35e910cf15dfe98b0a418a")
    }

    @Test func namesShowNothingOfThePairAndDifferPerPair() throws {
        var rng = TestRandom(state: 11)
        var seen = Set<String>()
        for _ in 0..<200 {
            let d = UUID(), v = UUID()
            let name = try key.sealedHeadName(document: d, device: v)
            #expect(!name.contains(d.uuidString.lowercased().prefix(8)) && !name.contains(v.uuidString.lowercased().prefix(8)))
            #expect(seen.insert(name).inserted)
            let back = try #require(try key.openSealedHeadName(name))
            #expect(back.document == d && back.device == v)
            _ = rng.next()
        }
        // Swapping document and device is another name.
        #expect(try key.sealedHeadName(document: device, device: document) != key.sealedHeadName(document: document, device: device))
    }

    @Test func everyAlteredDigitIsRefusedAndOtherShapesAreNotHeads() throws {
        let name = Array(try key.sealedHeadName(document: document, device: device).utf8)
        for i in name.indices {
            var altered = name
            altered[i] = altered[i] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(throws: CryptoError.tampered) { try key.openSealedHeadName(String(decoding: altered, as: UTF8.self)) }
        }
        let other = try LibraryKey(SecretBytes(Array(repeating: 7, count: 32)))
        #expect(throws: CryptoError.tampered) { try other.openSealedHeadName(String(decoding: name, as: UTF8.self)) }
        for shape in ["", "keys", String(decoding: name.dropLast(), as: UTF8.self), String(decoding: name, as: UTF8.self).uppercased(),
                      String(decoding: name, as: UTF8.self) + "00", document.uuidString + "." + device.uuidString + ".head",
                      String(repeating: "g", count: 120)] {
            #expect(try key.openSealedHeadName(shape) == nil, "\(shape)")
        }
    }
}
