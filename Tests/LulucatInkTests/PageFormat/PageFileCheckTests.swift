// PageFile.check: the same verdict as decode on every input, and the summary of what decode gives,
// without keeping the elements.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct PageFileCheckTests {
    /// A page of awkward strokes, images (two showing one asset) and an element of unknown kind.
    static func page(seed: UInt64) throws -> PageContent {
        var rng = SeededRandom(seed: seed)
        var elements: [Element] = TestInk.awkwardStrokes(seed: seed).map { .stroke($0) }
        let asset = UUID()
        for i in 0..<3 {
            elements.insert(.image(ImageElement(id: UUID(), assetID: i == 2 ? UUID() : asset,
                                                frame: QuantizedRect(x: Int32(i), y: 2, width: 30, height: 40), rotation: 9000)),
                            at: rng.int(0...elements.count))
        }
        elements.append(.unknown(try UnknownElement(kind: 77, payload: Data((0..<40).map { UInt8($0) }))))
        return PageContent(canvasSize: QuantizedSize(width: 6120, height: 7920), elements: elements)
    }

    @Test(arguments: [SampleCodecID.compact, .fixed16])
    func theSummaryIsWhatDecodeGives(_ codec: SampleCodecID) throws {
        for seed in 1...4 as ClosedRange<UInt64> {
            let content = try Self.page(seed: seed)
            let bytes = try PageFile.encode(content, codec: codec)
            let summary = try PageFile.check(bytes)
            #expect(summary == PageSummary(try PageFile.decode(bytes)))
            #expect(summary.elementCount == content.elements.count)
            #expect(summary.sampleCount == content.sampleCount)
            #expect(summary.assetIDs.count == 2)
            #expect(summary.canvasSize == content.canvasSize)
        }
        #expect(try PageFile.check(PageFile.encode(PageContent(), codec: codec)) ==
                PageSummary(canvasSize: .letter, elementCount: 0, sampleCount: 0, assetIDs: []))
    }

    /// Every truncation and a spread of byte flips (CRC fixed up, so the decoding itself is tried):
    /// check throws exactly when decode throws, with the same error.
    @Test func checkRefusesExactlyWhatDecodeRefuses() throws {
        let good = try PageFile.encode(try Self.page(seed: 9), codec: .compact)
        func verdict(_ bytes: [UInt8], _ f: ([UInt8]) throws(PageFormatError) -> Void) -> String {
            do throws(PageFormatError) { try f(bytes); return "ok" } catch { return "\(error)" }
        }
        func same(_ bytes: [UInt8]) {
            let d = verdict(bytes) { b throws(PageFormatError) in _ = try PageFile.decode(b) }
            let c = verdict(bytes) { b throws(PageFormatError) in _ = try PageFile.check(b) }
            #expect(d == c)
        }
        var refused = 0
        for n in stride(from: 0, to: good.count, by: max(1, good.count / 300)) {
            same(Array(good.prefix(n)))
        }
        var rng = SeededRandom(seed: 3)
        for _ in 0..<400 {
            var bytes = good
            let at = rng.int(PageFile.headerSize...(good.count - PageFile.trailerSize - 1))
            bytes[at] ^= UInt8(rng.int(1...255))
            let crc = CRC32C.checksum(Array(bytes[0..<(bytes.count - 4)]))
            withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
            same(bytes)
            if (try? PageFile.check(bytes)) == nil { refused += 1 }
        }
        #expect(refused > 50)  // the flips do reach the decoder's checks
    }
}
