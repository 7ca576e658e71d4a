// A live gesture (issue 32, item 5): any number of pinch or twist events costs one rounding, against
// the exact transform of the whole gesture; quantized steps, one per event, drift by far more.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct TransformGestureTests {
    /// The largest distance, in points, between each sample and where the exact transform of the
    /// whole gesture puts the original one.
    func error(_ after: [Stroke], _ originals: [Stroke], _ exact: SimilarityTransform) -> Double {
        var worst = 0.0
        for (a, o) in zip(after, originals) {
            for (p, q) in zip(a.samples, o.samples) {
                let m = exact.map(x: Double(q.x), y: Double(q.y))
                let dx = Double(p.x) - m.x, dy = Double(p.y) - m.y
                worst = max(worst, (dx * dx + dy * dy).squareRoot() / 10)
            }
        }
        return worst
    }

    func session(_ tmp: TemporaryFolder, seed: UInt64) async throws -> (DocumentSession, UUID, [Stroke]) {
        let strokes = HandwritingGenerator(seed: seed).page(strokes: 30, canvas: .letter).strokes
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Gestures")
        let s = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        let page = await s.pageIDs()[0]
        try await s.append(strokes.map { .stroke($0) }, to: page)
        return (s, page, strokes)
    }

    /// 100 pinch events of ×1.0037 and 300 twist events of 0.4567°: within one quantum (0.1 pt)
    /// of the exact result, previews equal to what is committed, undone exactly.
    @Test func pinchAndTwistGesturesEndWithinOneQuantum() async throws {
        let tmp = TemporaryFolder()
        let (s, page, strokes) = try await session(tmp, seed: 32)
        let ids = strokes.map(\.id)
        let (cx, cy) = (3060.0, 3960.0)

        // Pinch: each event gives the scale since the gesture began.
        let pinch = try await s.beginTransform(ids, on: page)
        var scale = 1.0
        var preview: [Element] = []
        for _ in 0..<100 {
            scale *= 1.0037
            preview = pinch.preview(.scaling(scale, aboutX: cx, y: cy))
        }
        let undoPinch = try await s.commit(pinch, .scaling(scale, aboutX: cx, y: cy))
        let pinched = try await s.content(of: page).strokes
        #expect(pinched.map { Element.stroke($0) } == preview, "the preview is what is stored")
        let pinchError = error(pinched, strokes, .scaling(pow(1.0037, 100), aboutX: cx, y: cy))

        // Twist, after the pinch: composed against the originals, still one rounding.
        let twist = try await s.beginTransform(ids, on: page)
        var degrees = 0.0
        for _ in 0..<300 { degrees += 0.4567; _ = twist.preview(.rotation(degrees: degrees, aboutX: cx, y: cy)) }
        try await s.commit(twist, .rotation(degrees: degrees, aboutX: cx, y: cy))
        let twisted = try await s.content(of: page).strokes
        let both = SimilarityTransform.scaling(pow(1.0037, 100), aboutX: cx, y: cy).followed(by: .rotation(degrees: 300 * 0.4567, aboutX: cx, y: cy))
        let twistError = error(twisted, strokes, both)

        // The same events as quantized steps, one per event (what an app did before): far off.
        var stepped = strokes.map { Element.stroke($0) }
        let step = QuantizedTransform(scale: 1004, centerX: 3060, centerY: 3960)
        for _ in 0..<100 { stepped = stepped.map { step.apply(to: $0) } }
        let steppedError = error(stepped.map { $0.stroke! }, strokes, .scaling(pow(1.0037, 100), aboutX: cx, y: cy))
        print("gesture figures: 100 pinch events x1.0037: \(String(format: "%.3f", pinchError)) pt from exact; then 300 twist events of 0.4567 deg: \(String(format: "%.3f", twistError)) pt; the pinch as 100 quantized steps: \(String(format: "%.1f", steppedError)) pt")
        #expect(pinchError <= 0.1 && twistError <= 0.1, "\(pinchError) \(twistError)")
        #expect(steppedError > 10, "the check above can fail: \(steppedError)")

        // Undone: the twist's changes, then the pinch's, give the page back exactly.
        let current = try await s.content(of: page).strokes
        #expect(current == twisted)
        try await s.apply(undoPinch, to: page)
        #expect(try await s.content(of: page).strokes == strokes)
        try await s.close()
    }

    /// A gesture whose element was erased meanwhile commits nothing and says which; a transform
    /// that is not finite or has no size is refused.
    @Test func aStaleOrDegenerateGestureChangesNothing() async throws {
        let tmp = TemporaryFolder()
        let (s, page, strokes) = try await session(tmp, seed: 33)
        let gesture = try await s.beginTransform([strokes[0].id, strokes[1].id], on: page)
        try await s.delete([strokes[1].id], from: page)
        let before = try await s.content(of: page)
        await #expect(throws: StoreError.self) { try await s.commit(gesture, .scaling(2, aboutX: 0, y: 0)) }
        await #expect(throws: StoreError.self) {
            try await s.commit(try await s.beginTransform([strokes[0].id], on: page), .scaling(0, aboutX: 0, y: 0))
        }
        await #expect(throws: StoreError.self) {
            try await s.commit(try await s.beginTransform([strokes[0].id], on: page), .rotation(degrees: .nan, aboutX: 0, y: 0))
        }
        #expect(try await s.content(of: page) == before)
        await #expect(throws: StoreError.self) { _ = try await s.beginTransform([UUID()], on: page) }
        try await s.close()
    }
}
