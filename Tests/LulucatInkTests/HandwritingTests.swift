// Real ink read from JSONL, and the handwriting generator's page profile.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct InkJSONLTests {
    @Test func readsPointsQuantizedAndFillsMissingChannels() throws {
        let text = """
        {"t0_ms": 0, "points": [[10.04, 20.06, 0, 0.5], [10.15, 20.0, 4.4, 1.2345]]}

        {"t0_ms": null, "points": [[-1.25, 3, null, null], [-1.35, 3.05, null, 0.25]]}
        """
        let strokes = try InkJSONL.strokes(from: Data(text.utf8), ink: Ink(width: 30))
        #expect(strokes.count == 2)
        #expect(strokes[0].samples == [
            Sample(x: 100, y: 201, radius: 15, pressure: 500, time: 0),
            Sample(x: 102, y: 200, radius: 15, pressure: 1235, time: 4),
        ])
        #expect(strokes[1].samples == [
            Sample(x: -13, y: 30, radius: 15, pressure: 0, time: 0),
            Sample(x: -14, y: 31, radius: 15, pressure: 250, time: 0),
        ])
        #expect(try InkJSONL.strokes(from: Data(text.utf8)).map(\.id) == strokes.map(\.id))
    }

    @Test func aBadLineIsNamed() {
        let text = "{\"points\": [[1, 2, 3, 0.1]]}\n{\"points\": [[1]]}\n"
        #expect(throws: InkJSONL.ParseError.self) { try InkJSONL.strokes(from: Data(text.utf8)) }
        do {
            _ = try InkJSONL.strokes(from: Data(text.utf8))
        } catch {
            #expect(error.line == 2)
        }
        #expect(throws: InkJSONL.ParseError.self) { try InkJSONL.strokes(from: Data("[1, 2]\n".utf8)) }
        #expect(throws: InkJSONL.ParseError.self) { try InkJSONL.strokes(from: Data("{\"points\": [[1e999, 2]]}".utf8)) }
    }

    @Test(.enabled(if: TestInk.sharedInkRoot() != nil, "needs shared/data/ink (or LNOTE_INK_DIR)"))
    func realInkFilesParse() throws {
        let strokes = try TestInk.realStrokes()
        #expect(strokes.count == 2236 + 80)
        #expect(strokes.reduce(0) { $0 + $1.samples.count } == 43726 + 3215)
    }
}

@Suite struct HandwritingGeneratorTests {
    @Test func sameSeedSamePage() {
        let a = HandwritingGenerator(seed: 5).page(strokes: 40)
        let b = HandwritingGenerator(seed: 5).page(strokes: 40)
        let c = HandwritingGenerator(seed: 6).page(strokes: 40)
        #expect(a == b)
        #expect(a != c)
        #expect(HandwritingGenerator(seed: 5).stroke(variant: 2) == HandwritingGenerator(seed: 5).stroke(variant: 2))
    }

    @Test func pagesHaveTheApplePencilProfile() {
        let page = HandwritingGenerator(seed: 2026).page(strokes: 400, canvas: .letter)
        #expect(page.strokes.count == 400)
        let samples = page.sampleCount
        // About 150 samples a stroke: 2,000 strokes come to 3–5 MB in fixed16.
        #expect(samples / 400 > 110 && samples / 400 < 190)
        #expect(samples * 16 * 5 > 3_000_000 && samples * 16 * 5 < 5_000_000)
        for s in page.strokes {
            // 240 Hz: time i × 1000/240 ms, rounded.
            for (i, sample) in s.samples.enumerated() {
                #expect(abs(Double(sample.time) - Double(i) * 1000 / 240) <= 0.5 + 1e-9)
            }
            // Smooth: no jump between samples beyond what a fast pen moves in 4 ms (10 pt).
            for (a, b) in zip(s.samples, s.samples.dropFirst()) {
                #expect(abs(Int(a.x) - Int(b.x)) < 100 && abs(Int(a.y) - Int(b.y)) < 100)
            }
            #expect(Set(s.samples.map(\.pressure)).count > 1 || s.samples.count < 4)
            #expect(s.samples.allSatisfy { $0.x >= 0 && $0.x <= page.canvasSize.width && $0.y >= 0 && $0.y <= page.canvasSize.height })
        }
        // Pressure and radius vary as a pen's do: up at the start, down at the end, and radius with them.
        let long = page.strokes.filter { $0.samples.count > 60 }
        #expect(!long.isEmpty)
        for s in long.prefix(20) {
            let mid = s.samples[s.samples.count / 2]
            #expect(s.samples[0].pressure < mid.pressure)
            #expect(s.samples[s.samples.count - 1].pressure < mid.pressure)
            #expect(s.samples[0].radius <= mid.radius)
        }
    }
}
