// PencilKit-shaped points to and from strokes: rounding within half a quantum, exact round trips
// of stored strokes, and bad points refused with nothing made.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct PencilPointTests {
    @Test func pointsBecomeSamplesAndChannels() throws {
        let points = [
            PencilPoint(location: InkPoint(x: 10.04, y: 20.06), timeOffset: 0, size: InkSize(width: 2.5, height: 2.5),
                        opacity: 0.8, force: 1.5, azimuth: 1.0, altitude: 0.75),
            PencilPoint(location: InkPoint(x: 11, y: 19.96), timeOffset: 0.0166, size: InkSize(width: 3, height: 3),
                        opacity: 1, force: 0, azimuth: -0.5, altitude: .pi / 2),
        ]
        let id = UUID()
        let s = try Stroke(id: id, ink: Ink(tool: .pencil), pencilPoints: points)
        #expect(s.id == id && s.ink.tool == .pencil)
        #expect(s.samples == [Sample(x: 100, y: 201, radius: 13, pressure: 1500, time: 0),
                              Sample(x: 110, y: 200, radius: 15, pressure: 0, time: 17)])
        #expect(s.opacity == [800, 1000])
        #expect(s.azimuth == [1000, 5783])
        #expect(s.altitude == [750, 1571])
        #expect(s.channelsAreConsistent)
    }

    @Test func storedStrokesRoundTripExactly() throws {
        var rng = SeededRandom(seed: 31)
        for var stroke in HandwritingGenerator(seed: 6).page(strokes: 50).strokes {
            let n = stroke.samples.count
            stroke.azimuth = (0..<n).map { _ in UInt16(rng.next() % 6284) }
            stroke.altitude = (0..<n).map { _ in UInt16(rng.next() % 1572) }
            stroke.opacity = (0..<n).map { _ in UInt16(rng.next() % 1001) }
            #expect(try Stroke(id: stroke.id, ink: stroke.ink, pencilPoints: stroke.pencilPoints) == stroke)
        }
        // Without channels, the samples come back and the channels read as PencilKit's defaults.
        let plain = HandwritingGenerator(seed: 7).page(strokes: 1).strokes[0]
        let again = try Stroke(id: plain.id, ink: plain.ink, pencilPoints: plain.pencilPoints)
        #expect(again.samples == plain.samples)
        #expect(again.opacity == Array(repeating: 1000, count: plain.samples.count))
        #expect(again.altitude == Array(repeating: 1571, count: plain.samples.count))
        #expect(again.azimuth == Array(repeating: 0, count: plain.samples.count))
    }

    @Test func randomPointsComeBackWithinHalfAQuantum() throws {
        var rng = SeededRandom(seed: 32)
        var points: [PencilPoint] = []
        for i in 0..<2000 {
            let w = rng.uniform(0...40)
            points.append(PencilPoint(location: InkPoint(x: rng.uniform(-100...900), y: rng.uniform(-100...1200)),
                                      timeOffset: Double(i) / 240 + rng.uniform(0...0.001), size: InkSize(width: w, height: w),
                                      opacity: rng.uniform(0...1), force: rng.uniform(0...4.2),
                                      azimuth: rng.uniform(0...6.28), altitude: rng.uniform(0...1.57)))
        }
        let back = try Stroke(pencilPoints: points).pencilPoints
        #expect(back.count == points.count)
        for (p, q) in zip(points, back) {
            #expect(abs(p.location.x - q.location.x) <= 0.05 + 1e-9 && abs(p.location.y - q.location.y) <= 0.05 + 1e-9)
            #expect(abs(p.size.width - q.size.width) <= 0.1 + 1e-9 && q.size.height == q.size.width)
            #expect(abs(p.timeOffset - q.timeOffset) <= 0.0005 + 1e-9)
            #expect(abs(p.force - q.force) <= 0.0005 + 1e-9 && abs(p.opacity - q.opacity) <= 0.0005 + 1e-9)
            #expect(abs(p.azimuth - q.azimuth) <= 0.0005 + 1e-9 && abs(p.altitude - q.altitude) <= 0.0005 + 1e-9)
        }
    }

    @Test func aBadPointIsRefusedAndNothingIsMade() {
        let good = PencilPoint(location: InkPoint(x: 1, y: 1), timeOffset: 0, size: InkSize(width: 1, height: 1))
        var cases: [(String, PencilPoint)] = []
        var p = good; p.location.x = .nan; cases.append(("x", p))
        p = good; p.force = -1; cases.append(("force", p))
        p = good; p.altitude = 2; cases.append(("altitude", p))
        p = good; p.timeOffset = -.infinity; cases.append(("time offset", p))
        p = good; p.size.width = .infinity; cases.append(("radius", p))
        p = good; p.size.height = .nan; cases.append(("height", p))
        p = good; p.opacity = .nan; cases.append(("opacity", p))
        for (what, bad) in cases {
            #expect(throws: QuantizeError.self) { try Stroke(pencilPoints: [good, bad, good]) }
            do { _ = try Stroke(pencilPoints: [good, bad]) } catch { #expect(error.what == what) }
        }
    }
}
