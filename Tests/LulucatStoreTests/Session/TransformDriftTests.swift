// Repeated transforms through the session do not drift: steps compose against the element's
// samples before its first transform and are rounded once (issue 13, item 5).

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct TransformDriftTests {
    let noAutosave = SessionOptions(autosaveDelay: nil)

    /// The largest distance, in points, between the samples of two strokes with the same samples count.
    func drift(_ a: Stroke, _ b: Stroke) -> Double {
        zip(a.samples, b.samples).map { p, q in
            let dx = Double(p.x) - Double(q.x), dy = Double(p.y) - Double(q.y)
            return (dx * dx + dy * dy).squareRoot() / 10
        }.max() ?? 0
    }

    func openWithPage(_ tmp: TemporaryFolder, _ elements: [Element]) async throws -> (Library, UUID, DocumentSession, UUID) {
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Drift")
        let session = try await library.open(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        try await session.append(elements, to: page)
        return (library, package.id, session, page)
    }

    @Test func threeHundredSixtyRotationsOfOneDegreeEndWhereTheyStarted() async throws {
        let strokes = HandwritingGenerator(seed: 13).page(strokes: 40, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let (library, id, session, page) = try await openWithPage(tmp, strokes.map { .stroke($0) })
        let oneDegree = QuantizedTransform(rotation: 100, centerX: 3060, centerY: 3960)
        for _ in 0..<360 { try await session.transform(strokes.map(\.id), by: oneDegree, on: page) }
        let after = try await session.content(of: page).strokes
        let worst = zip(strokes, after).map { drift($0, $1) }.max()!
        print("drift after 360 x 1 degree through DocumentSession.transform: \(worst) pt over \(strokes.count) strokes")
        #expect(worst <= 0.05)
        #expect(after == strokes)

        // The old way, each step rounded against the last, drifts by far more: the check above can fail.
        var baked = strokes.map { Element.stroke($0) }
        for _ in 0..<360 { baked = baked.map { oneDegree.apply(to: $0) } }
        let bakedWorst = zip(strokes, baked).map { drift($0, $1.stroke!) }.max()!
        print("drift after 360 x 1 degree, each step rounded (before): \(bakedWorst) pt")
        #expect(bakedWorst > 0.5)

        // What was saved is what the session showed.
        try await session.close()
        let reopened = try await library.open(id, options: noAutosave)
        #expect(try await reopened.content(of: page).strokes == strokes)
        try await reopened.close()
    }

    @Test func scalingToATenthAndBackKeepsRadiiAndPositions() async throws {
        let strokes = HandwritingGenerator(seed: 14).page(strokes: 10, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let (_, _, session, page) = try await openWithPage(tmp, strokes.map { .stroke($0) })
        let down = QuantizedTransform(scale: 100, centerX: 500, centerY: 700)
        let up = QuantizedTransform(scale: 10_000, centerX: 500, centerY: 700)
        try await session.transform(strokes.map(\.id), by: down, on: page)
        let small = try await session.content(of: page).strokes
        #expect(small[0].samples[0].radius == UInt16((Double(strokes[0].samples[0].radius) / 10).rounded()))
        try await session.transform(strokes.map(\.id), by: up, on: page)
        #expect(try await session.content(of: page).strokes == strokes)
        try await session.close()
    }

    @Test func anImageRotatedFullCircleKeepsItsFrame() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Image")
        let session = try await library.open(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        let frame = QuantizedRect(x: 1234, y: 2345, width: 1001, height: 777)
        let image = try await session.insertImage(Data([0xFF, 0xD8, 0xFF, 0xD9]), fileExtension: "jpg",
                                                  frame: frame, rotation: 1500, on: page)
        let step = QuantizedTransform(dx: 3, dy: -2, rotation: 100, centerX: 4000, centerY: 100)
        let back = QuantizedTransform(dx: -3, dy: 2)
        for _ in 0..<360 {
            try await session.transform([image.id], by: step, on: page)
            try await session.transform([image.id], by: back, on: page)
        }
        let after = try await session.content(of: page).images[0]
        #expect(after.frame == frame)
        #expect(after.rotation == 1500)
        try await session.close()
    }

    @Test func randomStepsThenTheirInversesGiveTheOriginalBack() async throws {
        var rng = SeededRandom(seed: 1313)
        let strokes = HandwritingGenerator(seed: 15).page(strokes: 8, canvas: .letter).strokes
        let tmp = TemporaryFolder()
        let (_, _, session, page) = try await openWithPage(tmp, strokes.map { .stroke($0) })
        let ids = strokes.map(\.id)
        for _ in 0..<20 {
            var forwards: [QuantizedTransform] = [], inverses: [[QuantizedTransform]] = []
            for _ in 0..<Int(1 + rng.next() % 30) {
                let cx = Int32(rng.next() % 6000), cy = Int32(rng.next() % 8000)
                let rotation = Int32(rng.next() % 36000) - 18000
                let (scale, unscale): (Int32, Int32) = [(1000, 1000), (2000, 500), (500, 2000), (1250, 800), (100, 10_000)][Int(rng.next() % 5)]
                let dx = Int32(rng.next() % 400) - 200, dy = Int32(rng.next() % 400) - 200
                // Scale and rotate about the centre, then translate; undone by translating back, then
                // scaling and rotating back about the same centre.
                forwards.append(QuantizedTransform(dx: dx, dy: dy, scale: scale, rotation: rotation, centerX: cx, centerY: cy))
                inverses.append([.translation(dx: -dx, dy: -dy),
                                 QuantizedTransform(scale: unscale, rotation: -rotation, centerX: cx, centerY: cy)])
            }
            for t in forwards { try await session.transform(ids, by: t, on: page) }
            for pair in inverses.reversed() { for t in pair { try await session.transform(ids, by: t, on: page) } }
            let after = try await session.content(of: page).strokes
            #expect(after == strokes)
        }
        try await session.close()
    }

    @Test func anElementChangedByOtherMeansStartsAgainFromWhatItIsNow() async throws {
        let a = sampleStroke(20, seed: 4)
        let tmp = TemporaryFolder()
        let (_, _, session, page) = try await openWithPage(tmp, [.stroke(a)])
        let turn = QuantizedTransform(rotation: 4500, centerX: 0, centerY: 0)
        try await session.transform([a.id], by: turn, on: page)
        // An undo puts the stroke back as it was; a later transform maps it, not the stale original.
        let undo = try await session.apply([.update([.stroke(a)])], to: page)
        #expect(!undo.isEmpty)
        let moved = QuantizedTransform.translation(dx: 100, dy: 50)
        try await session.transform([a.id], by: moved, on: page)
        #expect(try await session.content(of: page).strokes == [moved.apply(to: .stroke(a)).stroke!])
        // An erased stroke's pieces are new elements; transforming one does not bring the rest back.
        let pieces = try await session.erase(stroke: a.id, keeping: [0..<5, 10..<20], on: page)
        try await session.transform([pieces[0]], by: .translation(dx: -100, dy: -50), on: page)
        let content = try await session.content(of: page)
        #expect(content.strokes.map(\.samples.count) == [5, 10])
        #expect(content.strokes[0].samples[0].x == a.samples[0].x)
        try await session.close()
    }
}
