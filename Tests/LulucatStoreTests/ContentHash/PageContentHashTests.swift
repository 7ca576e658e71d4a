// The content hash used to verify migrations: SHA-256 against FIPS 180-4 vectors, and a page hash
// that changes with any field and not with the engine.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct PageContentHashTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func sha256KnownVectors() {
        #expect(hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // 56 bytes: the padding spills into a second block.
        #expect(hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func pageHashFollowsEveryField() throws {
        let page = samplePage()
        #expect(try page.contentHash() == page.contentHash())
        #expect(try page.contentHash().count == 64)
        var moved = page
        guard case .stroke(var s) = moved.elements[0] else { Issue.record("expected a stroke"); return }
        s.samples[3].pressure &+= 1
        moved.elements[0] = .stroke(s)
        #expect(try moved.contentHash() != page.contentHash())
        var reordered = page
        reordered.elements.swapAt(0, 1)
        #expect(try reordered.contentHash() != page.contentHash())
        var resized = page
        resized.canvasSize = .letter
        #expect(try resized.contentHash() != page.contentHash())
        // The hash is of the canonical fixed16 page encoding, so any engine can recompute it.
        #expect(try page.contentHash() == hex(SHA256.hash(PageFile.encode(page, codec: .fixed16, version: 1))))
    }
}
