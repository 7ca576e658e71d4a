// The element codec and page format version 2: golden bytes of the worked example, the rule
// every engine shares (no unknown element under a known kind), and salvage of damaged files
// (randomized: every element whose record the damage did not touch comes back, nothing else).

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct ElementCodecTests {
    /// docs/page-format.md, "Worked example", version 2, compact codec (135 bytes).
    static let goldenCompactV2: [UInt8] = [
        0x4C, 0x4E, 0x50, 0x47, 0x02, 0x00, 0x01, 0x00, 0xE8, 0x17, 0x00, 0x00, 0xF0, 0x1E, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x9F, 0xD4, 0x1C, 0x1A, 0x01, 0x27, 0x90, 0x05, 0x00, 0x11, 0x22, 0x33,
        0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x00, 0x00, 0x00, 0x00,
        0xFF, 0x14, 0x00, 0x00, 0x03, 0x82, 0x7E, 0xA2, 0x25, 0xA0, 0x0F, 0xC8, 0x0A, 0x41, 0x47, 0x31,
        0xD2, 0x43, 0x33, 0x5B, 0xE2, 0x03, 0x64, 0x02, 0x34, 0x92, 0x99, 0x10, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x64, 0x00, 0x00, 0x00, 0xC8,
        0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2C,
        0x79, 0xCB, 0x0D, 0x75, 0xBD, 0xEE, 0x45,
    ]

    /// docs/page-format.md, "Worked example", version 2, fixed16 codec (169 bytes).
    static let goldenFixed16V2: [UInt8] = [
        0x4C, 0x4E, 0x50, 0x47, 0x02, 0x00, 0x00, 0x00, 0xE8, 0x17, 0x00, 0x00, 0xF0, 0x1E, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0xD9, 0x81, 0x1B, 0x4E, 0x01, 0x49, 0xD5, 0x29, 0x00, 0x11, 0x22, 0x33,
        0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x00, 0x00, 0x00, 0x00,
        0xFF, 0x14, 0x00, 0x00, 0x03, 0xE8, 0x03, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00, 0x0A, 0x00, 0xF4,
        0x01, 0x00, 0x00, 0x00, 0x00, 0xEB, 0x03, 0x00, 0x00, 0xD1, 0x07, 0x00, 0x00, 0x0A, 0x00, 0x08,
        0x02, 0x04, 0x00, 0x00, 0x00, 0xEF, 0x03, 0x00, 0x00, 0xD3, 0x07, 0x00, 0x00, 0x0A, 0x00, 0x12,
        0x02, 0x08, 0x00, 0x00, 0x00, 0xD3, 0xCC, 0x8D, 0x1E, 0x02, 0x34, 0x92, 0x99, 0x10, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x64, 0x00, 0x00,
        0x00, 0xC8, 0x00, 0x00, 0x00, 0xB8, 0x0B, 0x00, 0x00, 0xD0, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x2C, 0x79, 0xCB, 0x0D, 0x78, 0xFD, 0x88, 0xEA,
    ]

    @Test func goldenBytesOfVersion2() throws {
        #expect(try PageFile.encode(PageFileExample.page, codec: .compact) == Self.goldenCompactV2)
        #expect(try PageFile.encode(PageFileExample.page, codec: .fixed16) == Self.goldenFixed16V2)
        #expect(try PageFile.decode(Self.goldenCompactV2) == PageFileExample.page)
        #expect(try PageFile.decode(Self.goldenFixed16V2) == PageFileExample.page)
        // Both versions of the example read as the same page.
        #expect(try PageFile.decode(PageFileTests.goldenCompact) == PageFile.decode(Self.goldenCompactV2))
        let header = try Self.goldenCompactV2.withUnsafeBytes { try PageFile.readHeader($0) }
        #expect(header == PageFile.Header(version: 2, codec: .compact, canvasSize: .letter, elementCount: 2))
    }

    @Test func truncationAndEveryBitFlipOfVersion2AreErrors() {
        for golden in [Self.goldenCompactV2, Self.goldenFixed16V2] {
            for length in 0..<golden.count {
                #expect(throws: PageFormatError.self) { try PageFile.decode(Array(golden[0..<length])) }
            }
            for bit in 0..<golden.count * 8 {
                var b = golden
                b[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
                #expect(throws: PageFormatError.self) { try PageFile.decode(b) }
            }
        }
    }

    @Test func anUnknownElementUnderAKnownKindIsRefusedByEveryCoding() throws {
        for kind in [PageFile.Kind.stroke, PageFile.Kind.image] {
            let fake = Element.unknown(try UnknownElement(kind: kind, payload: Data(count: 20)))
            #expect(throws: PageFormatError.self) { try ElementCodec.check(fake) }
            for version: UInt16 in [1, 2] {
                #expect(throws: PageFormatError.self) { try PageFile.encode(PageContent(elements: [fake]), version: version) }
            }
            for checked in [false, true] {
                var w = ByteWriter()
                #expect(throws: PageFormatError.self) { try ElementCodec.writeList([fake], codec: .fixed16, checked: checked, into: &w) }
            }
        }
        // A kind this version does not know is kept byte for byte by both codings.
        let other = Element.unknown(try UnknownElement(kind: 77, payload: Data((0..<24).map { UInt8($0) })))
        for checked in [false, true] {
            var w = ByteWriter()
            try ElementCodec.writeList([other], codec: .compact, checked: checked, into: &w)
            let back = try w.bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                return try ElementCodec.readList(&r, codec: .compact, checked: checked)
            }
            #expect(back == [other])
        }
    }

    @Test func aDamagedRecordIsRefusedOnItsOwn() throws {
        var w = ByteWriter()
        try ElementCodec.writeList(PageFileExample.page.elements, codec: .compact, checked: true, into: &w)
        let good = w.bytes
        for i in 1..<good.count {
            var b = good
            b[i] ^= 0x20
            let decoded = try? b.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                return try ElementCodec.readList(&r, codec: .compact, checked: true, verify: true)
            }
            #expect(decoded == nil, "byte \(i)")
        }
    }

    @Test func reusingCodedStrokesGivesTheSameBytes() throws {
        let page = HandwritingGenerator(seed: 4).page(strokes: 8)
        for codec in SampleCodecID.allCases {
            let first = try PageFile.encode(page, codec: codec, reusing: nil)
            let again = try PageFile.encode(page, codec: codec, reusing: first.strokes)
            #expect(again.bytes == first.bytes)
            let (_, kept) = try PageFile.decodeKeepingStrokes(first.bytes)
            #expect(try PageFile.encode(page, codec: codec, reusing: kept).bytes == first.bytes)
            // A version-1 encoding from the same cache (sync blobs, content hashes).
            #expect(try PageFile.encode(page, codec: codec, reusing: kept, version: 1).bytes == PageFile.encode(page, codec: codec, version: 1))
        }
    }

    @Test func anIntactFileSalvagesWhole() throws {
        let bytes = try PageFile.encode(PageFileExample.page)
        let s = PageFile.salvage(bytes, canvasSize: .a4)
        #expect(s.intact && s.headerIntact && s.content == PageFileExample.page && s.lost == 0)
    }

    @Test func aDamagedVersion1FileSalvagesNothingAndSaysSo() {
        var b = PageFileTests.goldenCompact
        b[50] ^= 1
        let s = PageFile.salvage(b, canvasSize: .a4)
        #expect(!s.intact && s.salvaged == 0 && s.expected == nil)
        #expect(s.content.canvasSize == .a4)
    }

    /// Random damage (a flipped run of 1-64 bytes, a zeroed 4 KiB block, a truncation) of pages of
    /// 30 strokes and an image: salvage returns only elements that were written, exactly, and
    /// every element whose record bytes the damage did not touch.
    @Test func salvageKeepsEveryUntouchedElementAndNothingElse() throws {
        var rng = SeededRandom(seed: 0x5A1)
        var untouchedTotal = 0, recoveredTotal = 0
        for trial in 0..<300 {
            var page = HandwritingGenerator(seed: UInt64(trial)).page(strokes: 30)
            page.elements.insert(.image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: 1, y: 2, width: 3, height: 4))), at: 7)
            let codec: SampleCodecID = trial % 2 == 0 ? .compact : .fixed16
            let bytes = try PageFile.encode(page, codec: codec)
            let ranges = Self.recordRanges(bytes)
            #expect(ranges.count == page.elements.count)
            var b = bytes
            var touched = 0..<0
            switch trial % 3 {
            case 0:
                let n = rng.int(1...64), at = rng.int(0...b.count - 1)
                touched = at..<min(b.count, at + n)
                for i in touched { b[i] ^= UInt8(rng.int(1...255)) }
            case 1:
                let at = rng.int(0...(b.count - 1) / 4096) * 4096
                touched = at..<min(b.count, at + 4096)
                for i in touched { b[i] = 0 }
            default:
                let cut = rng.int(1...b.count - 1)
                touched = cut..<b.count
                b.removeLast(b.count - cut)
            }
            let s = PageFile.salvage(b, canvasSize: page.canvasSize)
            let written = Set(page.elements)
            #expect(s.content.elements.allSatisfy(written.contains), "trial \(trial): an element that was never written")
            let untouched = zip(page.elements, ranges).filter { !$0.1.overlaps(touched) }.map(\.0)
            let got = Set(s.content.elements)
            #expect(untouched.allSatisfy(got.contains), "trial \(trial): an untouched element was not salvaged")
            // Salvaged elements keep their order.
            let order = page.elements.filter(got.contains)
            #expect(s.content.elements == order)
            if touched.lowerBound >= PageFile.checkedHeaderSize { #expect(s.headerIntact && s.expected == page.elements.count) }
            untouchedTotal += untouched.count
            recoveredTotal += s.salvaged
        }
        #expect(recoveredTotal >= untouchedTotal)
    }

    /// The byte range of each record of a version-2 file, in order.
    static func recordRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        bytes.withUnsafeBytes { raw in
            var ranges: [Range<Int>] = []
            var offset = PageFile.checkedHeaderSize
            var budget = Int.max
            while let r = ElementCodec.record(in: raw, at: offset, verify: true, budget: &budget) {
                ranges.append(offset..<r.end)
                offset = r.end
            }
            return ranges
        }
    }
}
