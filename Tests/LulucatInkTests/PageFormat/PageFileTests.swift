// The page content file: golden bytes, round trips, and every kind of bad input.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct PageFileTests {
    /// docs/page-format.md, "Worked example" of version 1, compact codec (still read; written on
    /// request for content hashes and sync blobs).
    static let goldenCompact: [UInt8] = [
        0x4C, 0x4E, 0x50, 0x47, 0x01, 0x00, 0x01, 0x00, 0xE8, 0x17, 0x00, 0x00, 0xF0, 0x1E, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x14, 0x00,
        0x02,
        0x01, 0x21,
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
        0x00, 0x00, 0x03,
        0x82, 0x7E, 0xA2, 0x25, 0xA0, 0x0F, 0xC8, 0x0A, 0x41, 0x47, 0x31, 0xD2, 0x43, 0x33,
        0x02, 0x34,
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
        0x64, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0xAC, 0x47, 0xFF, 0x42,
    ]

    /// docs/page-format.md, "Worked example" of version 1, fixed16 codec.
    static let goldenFixed16: [UInt8] = [
        0x4C, 0x4E, 0x50, 0x47, 0x01, 0x00, 0x00, 0x00, 0xE8, 0x17, 0x00, 0x00, 0xF0, 0x1E, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x14, 0x00,
        0x02,
        0x01, 0x43,
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
        0x00, 0x00, 0x03,
        0xE8, 0x03, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00, 0x0A, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00,
        0xEB, 0x03, 0x00, 0x00, 0xD1, 0x07, 0x00, 0x00, 0x0A, 0x00, 0x08, 0x02, 0x04, 0x00, 0x00, 0x00,
        0xEF, 0x03, 0x00, 0x00, 0xD3, 0x07, 0x00, 0x00, 0x0A, 0x00, 0x12, 0x02, 0x08, 0x00, 0x00, 0x00,
        0x02, 0x34,
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
        0x64, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x17, 0x5C, 0x27, 0xB4,
    ]

    @Test func goldenBytes() throws {
        #expect(try PageFile.encode(PageFileExample.page, codec: .compact, version: 1) == Self.goldenCompact)
        #expect(try PageFile.encode(PageFileExample.page, codec: .fixed16, version: 1) == Self.goldenFixed16)
        #expect(try PageFile.decode(Self.goldenCompact) == PageFileExample.page)
        #expect(try PageFile.decode(Self.goldenFixed16) == PageFileExample.page)
        #expect(CRC32C.checksum(Array(Self.goldenCompact.dropLast(4))) == 0x42FF_47AC)
    }

    @Test(arguments: SampleCodecID.allCases)
    func pagesRoundTrip(_ codec: SampleCodecID) throws {
        var elements = TestInk.awkwardStrokes().map(Element.stroke)
        elements.insert(.image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: -5, y: .max, width: 0, height: 7), rotation: -9000)), at: 3)
        elements.append(.unknown(try UnknownElement(kind: 200, payload: Data((0..<40).map { UInt8($0) }))))
        var inkA = Ink(tool: Tool(rawValue: 77), color: RGBA8(r: 1, g: 2, b: 3, a: 4), width: 65535)
        for i in elements.indices where i % 3 == 0 {
            if case .stroke(var s) = elements[i] { s.ink = inkA; elements[i] = .stroke(s) }
            inkA.width -= 1
        }
        let page = PageContent(canvasSize: QuantizedSize(width: 0, height: .max), elements: elements)
        #expect(try PageFile.decode(try PageFile.encode(page, codec: codec)) == page)
        let empty = PageContent(canvasSize: .a4)
        #expect(try PageFile.decode(try PageFile.encode(empty, codec: codec)) == empty)
    }

    @Test func unknownElementKindsSurviveByteExact() throws {
        let unknown = try UnknownElement(kind: 9, payload: Data([UInt8](repeating: 0xAB, count: 16) + [1, 2, 3, 0, 255]))
        var page = PageFileExample.page
        page.elements.insert(.unknown(unknown), at: 1)
        let bytes = try PageFile.encode(page, codec: .compact)
        let decoded = try PageFile.decode(bytes)
        #expect(decoded.elements[1] == .unknown(unknown))
        #expect(try PageFile.encode(decoded, codec: .compact) == bytes)
        // Written by hand as a newer app would: the kind, the length, the payload.
        var handMade = Array(Self.goldenCompact.dropLast(4))
        handMade[24] = 3  // three elements
        handMade += [0xF0, 17] + [UInt8](repeating: 0x5A, count: 17)
        handMade = (handMade + [0, 0, 0, 0]).withFixedChecksum()
        let read = try PageFile.decode(handMade)
        #expect(read.elements.count == 3)
        #expect(try PageFile.encode(read, codec: .compact, version: 1) == handMade)
    }

    @Test func anUnknownElementCannotPoseAsAKnownKind() throws {
        let fake = try UnknownElement(kind: PageFile.Kind.stroke, payload: Data(count: 20))
        #expect(throws: PageFormatError.self) {
            try PageFile.encode(PageContent(elements: [.unknown(fake)]))
        }
    }

    @Test func truncationAtEveryOffsetIsAnError() {
        for codec in [Self.goldenCompact, Self.goldenFixed16] {
            for length in 0..<codec.count {
                #expect(throws: PageFormatError.self) { try PageFile.decode(Array(codec[0..<length])) }
            }
        }
    }

    @Test func everySingleBitFlipIsAnError() {
        for codec in [Self.goldenCompact, Self.goldenFixed16] {
            for bit in 0..<codec.count * 8 {
                var b = codec
                b[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
                #expect(throws: PageFormatError.self) { try PageFile.decode(b) }
            }
        }
    }

    @Test func randomGarbageIsAnError() {
        var rng = SeededRandom(seed: 11)
        for trial in 0..<2000 {
            var b = (0..<rng.int(0...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if trial % 2 == 0 && b.count >= 8 { b.replaceSubrange(0..<8, with: Self.goldenCompact[0..<8]) }
            #expect(throws: PageFormatError.self) { try PageFile.decode(b) }
        }
    }

    @Test func headerErrorsSayWhatIsWrong() {
        var b = Self.goldenCompact
        b[0] = 0x4D
        #expect(throws: PageFormatError.badMagic) { try PageFile.decode(b.withFixedChecksum()) }
        b = Self.goldenCompact
        b[4] = 3
        #expect(throws: PageFormatError.unsupportedVersion(3)) { try PageFile.decode(b.withFixedChecksum()) }
        b = Self.goldenCompact
        b[6] = 9
        #expect(throws: PageFormatError.unknownCodec(9)) { try PageFile.decode(b.withFixedChecksum()) }
        b = Self.goldenCompact
        b[7] = 1
        #expect(throws: PageFormatError.invalidField(offset: 7, "reserved flags 0x1 are not zero")) { try PageFile.decode(b.withFixedChecksum()) }
        b = Self.goldenCompact
        b[15] = 0x80
        #expect(throws: PageFormatError.self) { try PageFile.decode(b.withFixedChecksum()) }
        b = Self.goldenCompact
        b[20] ^= 1
        #expect(throws: PageFormatError.checksumMismatch(stored: 0x42FF_47AC, computed: CRC32C.checksum(Array(b.dropLast(4))))) {
            try PageFile.decode(b)
        }
    }

    /// Counts and lengths beyond what the file holds, with a valid CRC so the checks behind the
    /// checksum are the ones that answer.
    @Test func oversizedCountsAndLengthsAreErrors() {
        func corrupt(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
            var b = Array(Self.goldenCompact.dropLast(4))
            edit(&b)
            return (b + [0, 0, 0, 0]).withFixedChecksum()
        }
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        let cases: [(String, [UInt8])] = [
            ("ink count", corrupt { $0.replaceSubrange(16..<17, with: huge) }),
            ("ink count 2", corrupt { $0[16] = 2 }),
            ("element count", corrupt { $0.replaceSubrange(24..<25, with: huge) }),
            ("element count 3", corrupt { $0[24] = 3 }),
            ("element length", corrupt { $0.replaceSubrange(26..<27, with: [0xFF, 0xFF, 0x03]) }),
            ("element length +1", corrupt { $0[26] += 1 }),
            ("element length -1", corrupt { $0[26] -= 1 }),
            ("ink index", corrupt { $0[43] = 1 }),
            ("channel bits", corrupt { $0[44] = 0x08 }),
            ("sample count", corrupt { $0.replaceSubrange(45..<46, with: [0x80, 0x80, 0x40]) }),
            ("sample count 4", corrupt { $0[45] = 4 }),
            ("sample count 200", corrupt { $0[45] = 0x7F }),
            ("varint too long", corrupt { $0.replaceSubrange(24..<25, with: [UInt8](repeating: 0x80, count: 11) + [0]) }),
            ("image length", corrupt { $0[61] = 0x35 }),
        ]
        for (name, bytes) in cases {
            #expect(throws: PageFormatError.self, "\(name)") { try PageFile.decode(bytes) }
        }
        // fixed16 with a sample count whose bytes the file does not hold.
        var f = Array(Self.goldenFixed16.dropLast(4))
        f.replaceSubrange(45..<46, with: [0x80, 0x80, 0x40])
        #expect(throws: PageFormatError.self) { try PageFile.decode((f + [0, 0, 0, 0]).withFixedChecksum()) }
    }

    /// Mutations under a recomputed CRC reach the codec's decoder: never a crash, and whatever
    /// decodes encodes again to a page that decodes the same.
    @Test func mutationsUnderAFixedChecksumNeverCrash() throws {
        var rng = SeededRandom(seed: 3)
        let page = PageContent(elements: HandwritingGenerator(seed: 9).page(strokes: 6).elements
            + [.image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: 1, y: 2, width: 3, height: 4)))])
        for codec in SampleCodecID.allCases {
            let original = try PageFile.encode(page, codec: codec)
            var accepted = 0
            for _ in 0..<1500 {
                var b = original
                for _ in 0..<rng.int(1...4) {
                    let at = rng.int(PageFile.headerSize...b.count - 5)
                    b[at] = rng.int(0...1) == 0 ? UInt8(truncatingIfNeeded: rng.next()) : b[at] ^ (1 << UInt8(rng.int(0...7)))
                }
                do {
                    let decoded = try PageFile.decode(b.withFixedChecksum())
                    #expect(try PageFile.decode(try PageFile.encode(decoded, codec: codec)) == decoded)
                    accepted += 1
                } catch {}
            }
            #expect(accepted < 1500)
        }
    }
    /// A hollow read (sync's read of a page whose strokes it has seen) decodes only the strokes it
    /// is not asked to hollow; the hollow ones keep their id, ink and coded bytes, and a version-1
    /// encoding that copies them (the sync blob) is byte for byte the one of the whole page. The
    /// digests it hands out are the coded strokes' own.
    @Test func aHollowReadEncodesLikeTheWholePage() throws {
        var page = PageContent(canvasSize: .a4, elements: TestInk.awkwardStrokes(seed: 3).map(Element.stroke))
        page.elements += HandwritingGenerator(seed: 5).page(strokes: 6).elements
        let bytes = try PageFile.encode(page, codec: .compact)
        let (whole, kept) = try PageFile.decodeKeepingStrokes(bytes)
        #expect(whole == page)
        var asked: [UUID: UInt64] = [:]
        let strokes = page.strokes
        let pick = Set(strokes.enumerated().filter { $0.offset % 3 != 1 }.map(\.element.id))
        let (content, hollowKept, hollow) = try PageFile.decodeKeepingStrokes(bytes) { id, digest, codec in
            #expect(codec == .compact)
            asked[id] = digest
            return pick.contains(id)
        }
        #expect(hollow == pick)
        #expect(Set(asked.keys) == Set(strokes.map(\.id)))
        for s in strokes { #expect(asked[s.id] == kept.digest(of: s) && hollowKept.digest(of: s) == asked[s.id]) }
        #expect(content.elements.map(\.id) == page.elements.map(\.id))
        for (e, original) in zip(content.elements, page.elements) {
            if hollow.contains(e.id), case .stroke(let h) = e, case .stroke(let o) = original {
                #expect(h.samples.isEmpty && h.ink == o.ink)
            } else {
                #expect(e == original, "a stroke not picked is decoded whole")
            }
        }
        #expect(try PageFile.encode(content, codec: .compact, reusing: hollowKept, version: 1, hollow: hollow).bytes
                == PageFile.encode(page, codec: .compact, version: 1))
        // A hollow stroke is never coded from its (missing) samples: without the coded strokes to
        // copy, or in another codec, the encoding is refused.
        #expect(throws: PageFormatError.self) { try PageFile.encode(content, codec: .compact, reusing: nil, version: 1, hollow: hollow) }
        #expect(throws: PageFormatError.self) { try PageFile.encode(content, codec: .fixed16, reusing: hollowKept, version: 1, hollow: hollow) }
        #expect(throws: PageFormatError.self) { try PageFile.encode(content, codec: .compact, reusing: nil, hollow: hollow) }
        // A version-1 file is read whole: nothing hollow.
        let v1 = try PageFile.encode(page, codec: .compact, version: 1)
        let (c1, _, h1) = try PageFile.decodeKeepingStrokes(v1) { _, _, _ in true }
        #expect(h1.isEmpty && c1 == page)
        // A damaged file is refused as always.
        var bad = bytes
        bad[bytes.count / 2] ^= 0x10
        #expect(throws: PageFormatError.self) { try PageFile.decodeKeepingStrokes(bad) { _, _, _ in true } }
    }
}
