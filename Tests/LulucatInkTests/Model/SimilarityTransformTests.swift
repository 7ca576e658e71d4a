// SimilarityTransform: the same map as QuantizedTransform, and composition that does not drift.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct SimilarityTransformTests {
    @Test func mapsPointsAsTheQuantizedTransformDoes() {
        var rng = SeededRandom(seed: 77)
        for _ in 0..<2000 {
            let q = QuantizedTransform(dx: Int32(rng.next() % 2000) - 1000, dy: Int32(rng.next() % 2000) - 1000,
                                       scale: Int32(1 + rng.next() % 4000), rotation: Int32(rng.next() % 72000) - 36000,
                                       centerX: Int32(rng.next() % 9000), centerY: Int32(rng.next() % 9000))
            let x = Int32(rng.next() % 10_000) - 1000, y = Int32(rng.next() % 10_000) - 1000
            let (ex, ey) = q.apply(x: x, y: y)
            let (gx, gy) = SimilarityTransform(q).apply(x: x, y: y)
            // Rounding may differ only where the exact value is within a hair of a half.
            #expect(abs(Int64(ex) - Int64(gx)) <= 1 && abs(Int64(ey) - Int64(gy)) <= 1)
        }
        let t = SimilarityTransform(QuantizedTransform(dx: 10, dy: 20, scale: 2000, rotation: 9000, centerX: 100, centerY: 100))
        #expect(t.apply(x: 200, y: 100) == (110, 320))  // (100, 0) from the centre: doubled, turned a quarter clockwise
        #expect(abs(t.scale - 2) < 1e-12 && abs(t.rotation - .pi / 2) < 1e-12)
    }

    @Test func composesInOrder() {
        let move = SimilarityTransform(.translation(dx: 100, dy: 0))
        let turn = SimilarityTransform(QuantizedTransform(rotation: 9000))
        #expect(move.followed(by: turn).apply(x: 0, y: 0) == (0, 100))
        #expect(turn.followed(by: move).apply(x: 0, y: 0) == (100, 0))
        #expect(SimilarityTransform.identity.followed(by: turn) == turn)
    }

    @Test func aFullTurnInOneDegreeStepsIsTheIdentity() {
        let step = SimilarityTransform(QuantizedTransform(rotation: 100, centerX: 3060, centerY: 3960))
        var total = SimilarityTransform.identity
        for _ in 0..<360 { total = total.followed(by: step) }
        #expect(abs(total.a - 1) < 1e-9 && abs(total.b) < 1e-9 && abs(total.tx) < 1e-6 && abs(total.ty) < 1e-6)
        for stroke in HandwritingGenerator(seed: 3).page(strokes: 20).strokes {
            #expect(total.apply(to: .stroke(stroke)) == .stroke(stroke))
        }
        let image = ImageElement(assetID: UUID(), frame: QuantizedRect(x: 11, y: 22, width: 333, height: 444), rotation: -2500)
        #expect(total.apply(to: .image(image)) == .image(image))
    }

    @Test func scaleRoundsRadiiAndImageSizesOnce() {
        let half = SimilarityTransform(QuantizedTransform(scale: 500))
        let s = Stroke(samples: [Sample(x: 10, y: 20, radius: 15, pressure: 1, time: 0)])
        #expect(half.apply(to: .stroke(s)).stroke!.samples == [Sample(x: 5, y: 10, radius: 8, pressure: 1, time: 0)])
        let image = ImageElement(assetID: UUID(), frame: QuantizedRect(x: 0, y: 0, width: 100, height: 50))
        #expect(half.apply(to: .image(image)).image!.frame == QuantizedRect(x: 0, y: 0, width: 50, height: 25))
        let unknown = Element.unknown(try! UnknownElement(kind: 9, payload: Data(repeating: 1, count: 20)))
        #expect(half.apply(to: unknown) == unknown)
    }
}
