// Saving a page with elements appended extends its file (PageFile.encode(_:codec:appendingTo:)):
// the bytes are those of coding the page whole, and what cannot be extended is refused.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct PageFileAppendTests {
    /// Random sequences of saves, each appending 0-4 elements of every kind (handwriting, awkward
    /// strokes with optional channels and extreme values, images, unknown kinds) and sometimes
    /// resizing the canvas, starting from an empty page, a written page and a page read back from
    /// its file: every extended file is byte for byte the page coded whole, and decodes to it.
    @Test(arguments: SampleCodecID.allCases)
    func extendingGivesTheBytesOfCodingWhole(codec: SampleCodecID) throws {
        let awkward = TestInk.awkwardStrokes(seed: 11)
        let written = HandwritingGenerator(seed: 21).page(strokes: 40).strokes
        var rng = SeededRandom(seed: 0xA99E_4D00 &+ UInt64(codec.rawValue))
        var next = 0
        func element() throws -> Element {
            next += 1
            switch rng.int(0...5) {
            case 0: return .image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: Int32(next), y: 2, width: 30, height: 40), rotation: Int32(next % 7)))
            case 1: return .unknown(try UnknownElement(kind: UInt8(3 + next % 200), payload: Data((0..<(16 + next % 40)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ next) })))
            case 2, 3:
                var s = awkward[next % awkward.count]
                s.id = UUID()
                return .stroke(s)
            default:
                var s = written[next % written.count]
                s.id = UUID()
                return .stroke(s)
            }
        }
        let starts: [PageContent] = [
            PageContent(canvasSize: .a4),
            PageContent(canvasSize: .letter, elements: try (0..<30).map { _ in try element() }),
        ]
        for start in starts {
            for readBack in [false, true] {
                var page = start
                var file = try PageFile.encode(page, codec: codec, reusing: nil)
                if readBack {
                    let (content, kept) = try PageFile.decodeKeepingStrokes(file.bytes)
                    #expect(content == page)
                    file.strokes = kept
                }
                for step in 0..<25 {
                    for _ in 0..<rng.int(0...4) { page.elements.append(try element()) }
                    if rng.int(0...6) == 0 { page.canvasSize = QuantizedSize(width: Int32(rng.int(0...99_999)), height: .max - Int32(step)) }
                    let whole = try PageFile.encode(page, codec: codec)
                    let extended = try #require(try PageFile.encode(page, codec: codec, appendingTo: file.strokes))
                    #expect(extended.bytes == whole, "step \(step)")
                    #expect(try PageFile.decode(extended.bytes) == page)
                    #expect(extended.strokes.count == page.strokes.count)
                    // Its coded strokes serve the next save as a whole file's do.
                    #expect(try PageFile.encode(page, codec: codec, reusing: extended.strokes).bytes == whole)
                    #expect(try PageFile.canonicalBytes(page, codec: codec, reusing: extended.strokes)
                            == PageFile.canonicalBytes(page, codec: codec))
                    for s in page.strokes { #expect(extended.strokes.digest(of: s) != nil) }
                    file = extended
                }
            }
        }
    }

    /// A page changed in every way between encodings that reuse the last one's coded strokes
    /// (strokes deleted, moved, replaced, their samples changed and forgotten, their ink changed
    /// without being forgotten, images and unknown elements among them, from a version-1 file
    /// too): the records of unchanged strokes are copied, in runs, and the bytes are always those
    /// of coding the page whole.
    @Test(arguments: SampleCodecID.allCases)
    func reusingAfterAnyChangeGivesTheBytesOfCodingWhole(codec: SampleCodecID) throws {
        let model = HandwritingGenerator(seed: 31).page(strokes: 30).strokes + TestInk.awkwardStrokes(seed: 5)
        var rng = SeededRandom(seed: 0x5B11_CE00 &+ UInt64(codec.rawValue))
        func fresh() -> Element {
            var s = model[rng.int(0...model.count - 1)]
            s.id = UUID()
            return .stroke(s)
        }
        var page = PageContent(canvasSize: .a4, elements: (0..<40).map { _ in fresh() })
        page.elements.insert(.image(ImageElement(assetID: UUID(), frame: QuantizedRect(x: 1, y: 2, width: 3, height: 4))), at: 7)
        page.elements.insert(.unknown(try UnknownElement(kind: 77, payload: Data(repeating: 9, count: 20))), at: 20)
        for start in [1, 2] as [UInt16] {
            var cache = try PageFile.decodeKeepingStrokes(try PageFile.encode(page, codec: codec, version: start)).strokes
            for step in 0..<60 {
                let n = page.elements.count
                switch rng.int(0...6) {
                case 0 where n > 1: page.elements.remove(at: rng.int(0...n - 1))
                case 1 where n > 1:
                    let e = page.elements.remove(at: rng.int(0...n - 1))
                    page.elements.insert(e, at: rng.int(0...n - 1))
                case 2 where n > 0:
                    let i = rng.int(0...n - 1)
                    cache.forget([page.elements[i].id])
                    page.elements.replaceSubrange(i...i, with: (0..<rng.int(0...2)).map { _ in fresh() })
                case 3 where n > 0:
                    let i = rng.int(0...n - 1)
                    if case .stroke(var s) = page.elements[i], !s.samples.isEmpty {
                        s.samples[0].x &+= 1
                        cache.forget([s.id])
                        page.elements[i] = .stroke(s)
                    }
                case 4 where n > 0:
                    // The ink changed under the same id, the coded samples still the stroke's.
                    let i = rng.int(0...n - 1)
                    if case .stroke(var s) = page.elements[i] {
                        s.ink.width &+= 1
                        page.elements[i] = .stroke(s)
                    }
                default:
                    page.elements.insert(fresh(), at: rng.int(0...n))
                }
                let whole = try PageFile.encode(page, codec: codec)
                let again = try PageFile.encode(page, codec: codec, reusing: cache)
                #expect(again.bytes == whole, "step \(step)")
                #expect(again.strokes.count == page.strokes.count)
                #expect(try PageFile.canonicalBytes(page, codec: codec, reusing: again.strokes) == PageFile.canonicalBytes(page, codec: codec))
                cache = again.strokes
            }
        }
    }

    /// What cannot be extended is refused (nil), never written wrong: another codec, a version-1
    /// file, a page with fewer elements than the file, an appended stroke the file holds already,
    /// a page whose last element before the appended ones is not the file's.
    @Test func whatCannotBeExtendedIsRefused() throws {
        let page = HandwritingGenerator(seed: 8).page(strokes: 6)
        let file = try PageFile.encode(page, codec: .compact, reusing: nil)
        var more = page
        more.elements.append(.stroke(HandwritingGenerator(seed: 9).stroke(letters: 2, origin: (10, 10), variant: 1)))
        #expect(try PageFile.encode(more, codec: .compact, appendingTo: file.strokes) != nil)
        #expect(try PageFile.encode(more, codec: .fixed16, appendingTo: file.strokes) == nil)
        let v1 = try PageFile.decodeKeepingStrokes(try PageFile.encode(page, codec: .compact, version: 1)).strokes
        #expect(try PageFile.encode(more, codec: .compact, appendingTo: v1) == nil)
        var fewer = page
        fewer.elements.removeLast()
        #expect(try PageFile.encode(fewer, codec: .compact, appendingTo: file.strokes) == nil)
        var again = page
        again.elements.append(page.elements[2])
        #expect(try PageFile.encode(again, codec: .compact, appendingTo: file.strokes) == nil)
        var reordered = more
        reordered.elements.swapAt(5, 6)
        #expect(try PageFile.encode(reordered, codec: .compact, appendingTo: file.strokes) == nil)
        // An appended element no engine may store is refused as by a whole encoding.
        var bad = page
        bad.elements.append(.stroke(Stroke(samples: [Sample(x: 1, y: 1, radius: 1, pressure: 1, time: 0)], azimuth: [])))
        #expect(throws: PageFormatError.self) { try PageFile.encode(bad, codec: .compact, appendingTo: file.strokes) }
        var unchanged = file.strokes
        #expect(throws: PageFormatError.self) { try PageFile.extend(&unchanged, to: bad, codec: .compact) }
        #expect(unchanged.bytes == file.bytes && unchanged.count == file.strokes.count)
        // Extending in place leaves any other copy of the coded strokes as it was (values).
        var grown = file.strokes
        let bytes = try #require(try PageFile.extend(&grown, to: more, codec: .compact))
        #expect(bytes == (try PageFile.encode(more, codec: .compact)) && grown.bytes == bytes && grown.count == 7)
        #expect(file.strokes.bytes == file.bytes && file.strokes.count == 6)
        #expect(try PageFile.encode(page, codec: .compact, reusing: file.strokes).bytes == file.bytes)
        // And a buffer nothing else holds grows where it is, save after save.
        var page2 = more
        var alone = try PageFile.decodeKeepingStrokes(bytes).strokes
        for k in 0..<20 {
            page2.elements.append(.stroke(HandwritingGenerator(seed: 30).stroke(letters: 1, origin: (Double(k), 5), variant: UInt64(k))))
            let out = try #require(try PageFile.extend(&alone, to: page2, codec: .compact))
            #expect(out == (try PageFile.encode(page2, codec: .compact)))
        }
    }

    /// Appending with a set of the page's ids (the session's way) accepts and refuses exactly
    /// what `apply(_:)` does, with the same errors, and keeps the set equal to the page's ids
    /// through every kind of change.
    @Test func applyingWithIDsMatchesApplying() throws {
        let strokes = HandwritingGenerator(seed: 12).page(strokes: 30).elements
        var plain = PageContent(canvasSize: .a4, elements: Array(strokes[0..<10]))
        var indexed = plain
        var ids: Set<UUID>?
        var rng = SeededRandom(seed: 77)
        for step in 0..<300 {
            let present = plain.elements.map(\.id)
            let change: PageChange
            switch rng.int(0...6) {
            case 0, 1, 2:
                // New, repeated or present ids.
                let pick = (0..<rng.int(0...3)).map { _ in strokes[rng.int(0...strokes.count - 1)] }
                change = .append(pick)
            case 3: change = .delete(present.isEmpty ? [UUID()] : [present[rng.int(0...present.count - 1)]])
            case 4:
                let id = present.isEmpty ? UUID() : present[rng.int(0...present.count - 1)]
                change = .replace(id, with: (0..<rng.int(0...2)).map { _ in strokes[rng.int(0...strokes.count - 1)] })
            case 5: change = .move(present.prefix(2).map { $0 }, to: .back)
            default: change = .resize(QuantizedSize(width: Int32(step), height: 9))
            }
            let expected = Result { () throws(PageChangeError) in try plain.apply(change) }
            let got = Result { () throws(PageChangeError) in try indexed.apply(change, ids: &ids) }
            switch (expected, got) {
            case (.success, .success): break
            case (.failure(let a), .failure(let b)): #expect(a == b, "step \(step)")
            default: Issue.record("step \(step): \(change) gave \(expected) without the set, \(got) with it")
            }
            #expect(indexed == plain, "step \(step)")
            if let ids { #expect(ids == Set(plain.elements.map(\.id)), "step \(step)") }
        }
    }
}
