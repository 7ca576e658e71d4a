// The canonical form of a page (`PageFile.canonicalVersion`, `PageFile.canonicalBytes`): the bytes
// that sync's blobs and element fingerprints and the store's content hash are defined on. These
// tests pin them: if one fails, every blob name, fingerprint and content hash would change.

import Foundation
import Testing
@testable import LulucatInk

@Suite struct CanonicalPageTests {
    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace }.utf8)
        precondition(digits.count % 2 == 0)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// The worked example's stroke alone on a 0 × 0 canvas in fixed16: the shape of the page an
    /// element fingerprint hashes. Written out by hand from docs/page-format.md (version 1).
    static let oneStrokeFixed16 = bytes(hex: """
        4c4e5047 0100 00 00 00000000 00000000
        01 00 000000ff 1400
        01
        01 43 00112233445566778899aabbccddeeff 00 00 03
        e8030000 d0070000 0a00 f401 00000000
        eb030000 d1070000 0a00 0802 04000000
        ef030000 d3070000 0a00 1202 08000000
        1f88f0d2
        """)

    /// docs/page-format.md, "Worked example" of version 1, compact codec (the blob's codec).
    static let examplePageCompact = bytes(hex: """
        4c4e5047 0100 01 00 e8170000 f01e0000
        01 00 000000ff 1400
        02
        01 21 00112233445566778899aabbccddeeff 00 00 03 827ea225a00fc80a414731d24333
        02 34 10000000000040008000000000000001 20000000000040008000000000000002
              64000000 c8000000 b80b0000 d0070000 00000000
        ac47ff42
        """)

    @Test func theCanonicalVersionIsOne() {
        #expect(PageFile.canonicalVersion == 1)
        #expect(PageFile.canonicalVersion != PageFile.version, "the canonical form is not the stored form")
    }

    @Test func canonicalBytesArePinned() throws {
        let stroke = PageFileExample.page.elements[0]
        let one = PageContent(canvasSize: QuantizedSize(width: 0, height: 0), elements: [stroke])
        #expect(try PageFile.canonicalBytes(one, codec: .fixed16) == Self.oneStrokeFixed16)
        #expect(try PageFile.canonicalBytes(PageFileExample.page, codec: .compact) == Self.examplePageCompact)
        #expect(try PageFile.canonicalBytes(PageFileExample.page, codec: .compact) == PageFileTests.goldenCompact)
        #expect(try PageFile.canonicalBytes(PageFileExample.page, codec: .fixed16) == PageFileTests.goldenFixed16)
    }

    @Test(arguments: SampleCodecID.allCases)
    func canonicalBytesAreTheVersion1Encoding(_ codec: SampleCodecID) throws {
        var elements = TestInk.awkwardStrokes().map(Element.stroke)
        elements.insert(.image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: -5, y: 9, width: 0, height: 7))), at: 2)
        elements.append(.unknown(try UnknownElement(kind: 200, payload: Data((0..<40).map { UInt8($0) }))))
        let page = PageContent(canvasSize: .a4, elements: elements)
        let canonical = try PageFile.canonicalBytes(page, codec: codec)
        #expect(canonical == (try PageFile.encode(page, codec: codec, version: 1)))
        #expect(canonical == (try PageFile.encode(page, codec: codec, reusing: nil, version: 1).bytes))
        #expect(try PageFile.canonicalBytes(PageContent(canvasSize: .letter), codec: codec)
            == (try PageFile.encode(PageContent(canvasSize: .letter), codec: codec, version: 1)))

        // Copying coded strokes (from the stored version-2 file, some read hollow) gives the same bytes.
        let stored = try PageFile.encode(page, codec: codec)
        let kept = try PageFile.decodeKeepingStrokes(stored)
        #expect(try PageFile.canonicalBytes(kept.content, codec: codec, reusing: kept.strokes) == canonical)
        let read = try PageFile.decodeKeepingStrokes(stored) { _, _, _ in true }
        #expect(!read.hollow.isEmpty)
        #expect(try PageFile.canonicalBytes(read.content, codec: codec, reusing: read.strokes, hollow: read.hollow) == canonical)
        #expect(throws: PageFormatError.self) {
            try PageFile.canonicalBytes(read.content, codec: codec, reusing: nil, hollow: read.hollow)
        }
    }
}
