// The stroke rasterizer's promises: uniform translucent strokes (no seams or dots at joints),
// opacity channels, hairlines, highlighters under ink, absurd coordinates clipped.

import Foundation
import LulucatInk
import Testing
@testable import LulucatRender

@Suite struct StrokeRasterTests {
    static let canvas = QuantizedSize(width: 2000, height: 1000)  // 200 x 100 pt

    /// Distance from (px, py) to the polyline through `points`.
    static func distance(_ px: Double, _ py: Double, to points: [(Double, Double)]) -> Double {
        var best = Double.infinity
        for i in 0..<(points.count - 1) {
            let (ax, ay) = points[i], (bx, by) = points[i + 1]
            let dx = bx - ax, dy = by - ay
            let l2 = dx * dx + dy * dy
            let t = l2 > 0 ? min(max(((px - ax) * dx + (py - ay) * dy) / l2, 0), 1) : 0
            best = min(best, hypot(px - (ax + t * dx), py - (ay + t * dy)))
        }
        return best
    }

    /// A translucent stroke of many tiny segments must have one value all along its inside.
    @Test(arguments: ["straight", "circle", "zigzag"])
    func translucentStrokeHasNoSeams(shape: String) throws {
        let radius = 4.0
        // The shape as a few corners; the stroke samples it every 0.25 pt (tiny segments), and the
        // distance to the corners' polyline says which pixels are inside.
        var corners: [(Double, Double)] = []
        switch shape {
        case "straight": corners = [(20, 50), (170, 50)]
        case "circle":
            corners = (0...60).map { i -> (Double, Double) in
                let a = Double(i) / 60 * 2 * Double.pi * 0.9
                return (100 + 35 * cos(a), 50 + 35 * sin(a))
            }
        default: corners = (0...10).map { i -> (Double, Double) in (20 + 15 * Double(i), i % 2 == 0 ? 35 : 65) }
        }
        var path: [(Double, Double)] = []
        for i in 0..<(corners.count - 1) {
            let (ax, ay) = corners[i], (bx, by) = corners[i + 1]
            let steps = max(1, Int((hypot(bx - ax, by - ay) / 0.25).rounded()))
            for k in 0..<steps { path.append((ax + (bx - ax) * Double(k) / Double(steps), ay + (by - ay) * Double(k) / Double(steps))) }
        }
        path.append(corners.last!)
        let samples = path.map { TestPages.sample($0.0, $0.1, radius: radius) }
        let stroke = Stroke(ink: Ink(color: RGBA8(r: 0, g: 0, b: 0, a: 128)), samples: samples)
        let scale = 2.0
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(stroke)]),
                                            scale: scale, assets: { _ in nil }).image
        let expected = 255 - 128  // white under black at alpha 128/255: 127
        var inside = 0
        var values: [Int: Int] = [:]
        for y in 0..<image.height {
            for x in 0..<image.width {
                let d = Self.distance((Double(x) + 0.5) / scale, (Double(y) + 0.5) / scale, to: corners)
                if d < radius - 1 {
                    inside += 1
                    values[Int(image.pixel(x: x, y: y).r), default: 0] += 1
                }
            }
        }
        #expect(inside > 1000)
        #expect(values.keys.allSatisfy { abs($0 - expected) <= 1 }, "inside values \(values)")
    }

    @Test func opacityChannelFadesTheStroke() throws {
        let samples = (0...100).map { TestPages.sample(20 + 1.5 * Double($0), 50, radius: 3) }
        let opacity = (0...100).map { UInt16(1000 - 10 * $0) }
        let stroke = Stroke(ink: Ink(color: .black), samples: samples, opacity: opacity)
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(stroke)]),
                                            scale: 1, assets: { _ in nil }).image
        let start = Int(image.pixel(x: 25, y: 50).r), middle = Int(image.pixel(x: 95, y: 50).r)
        let end = Int(image.pixel(x: 165, y: 50).r)
        #expect(start < 15)
        #expect(abs(middle - 127) < 12)
        #expect(end > 230)
        // A channel of the wrong length is ignored rather than read out of bounds.
        let broken = Stroke(ink: Ink(color: .black), samples: samples, opacity: [0, 0])
        let plain = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(broken)]),
                                            scale: 1, assets: { _ in nil }).image
        #expect(plain.pixel(x: 165, y: 50).r < 5)
    }

    @Test func hairlinesStayVisibleAndFaint() throws {
        let samples = (0...50).map { TestPages.sample(20 + 3 * Double($0), 50.5, radius: 0.1) }
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(Stroke(samples: samples))]),
                                            scale: 1, assets: { _ in nil }).image
        // A 0.2 pt line at 1 px a point: every column along it is touched, none fully black.
        for x in 25..<165 {
            let darkest = (45..<56).map { Int(image.pixel(x: x, y: $0).r) }.min()!
            #expect(darkest < 230 && darkest > 150, "column \(x): \(darkest)")
        }
    }

    @Test func zeroRadiusFallsBackToTheInkWidth() throws {
        let samples = [TestPages.sample(20, 50, radius: 0), TestPages.sample(120, 50, radius: 0)]
        let stroke = Stroke(ink: Ink(color: .black, width: 60), samples: samples)  // 6 pt wide
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(stroke)]),
                                            scale: 1, assets: { _ in nil }).image
        #expect(image.pixel(x: 70, y: 48).r == 0)
        #expect(image.pixel(x: 70, y: 45).r == 255)
    }

    @Test func singleSampleIsADot() throws {
        let stroke = Stroke(samples: [TestPages.sample(50, 50, radius: 5)])
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(stroke)]),
                                            scale: 1, assets: { _ in nil }).image
        #expect(image.pixel(x: 50, y: 50).r == 0)
        #expect(image.pixel(x: 52, y: 52).r == 0)
        #expect(image.pixel(x: 55, y: 55).r == 255)
    }

    @Test func highlighterStaysUnderInkWhateverTheOrder() throws {
        let ink = Stroke(ink: Ink(color: .black), samples: [TestPages.sample(20, 50, radius: 2), TestPages.sample(180, 50, radius: 2)])
        let marker = Stroke(ink: Ink(tool: .highlighter, color: RGBA8(r: 255, g: 255, b: 0)),
                            samples: [TestPages.sample(100, 10, radius: 8), TestPages.sample(100, 90, radius: 8)])
        for elements in [[Element.stroke(ink), .stroke(marker)], [.stroke(marker), .stroke(ink)]] {
            let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: elements),
                                                scale: 1, assets: { _ in nil }).image
            #expect(image.pixel(x: 100, y: 50) == (0, 0, 0, 255))     // ink over the highlighter
            #expect(image.pixel(x: 100, y: 30) == (255, 255, 0, 255)) // highlighter on paper
            #expect(image.pixel(x: 60, y: 50) == (0, 0, 0, 255))
        }
        // Multiplied, not painted: a highlighter over a highlighter darkens.
        let second = Stroke(ink: Ink(tool: .highlighter, color: RGBA8(r: 0, g: 255, b: 255)),
                            samples: [TestPages.sample(60, 30, radius: 8), TestPages.sample(140, 30, radius: 8)])
        let both = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(marker), .stroke(second)]),
                                           scale: 1, assets: { _ in nil }).image
        #expect(both.pixel(x: 100, y: 30) == (0, 255, 0, 255))
    }

    @Test func absurdCoordinatesAreClipped() throws {
        let far = Int32.max, near = Int32.min
        let samples = [Sample(x: near, y: near, radius: 10, pressure: 0, time: 0),
                       Sample(x: far, y: far, radius: 10, pressure: 0, time: 1),
                       Sample(x: 500, y: 500, radius: UInt16.max, pressure: 0, time: 2),
                       Sample(x: far, y: near, radius: 0, pressure: 0, time: 3)]
        let result = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(Stroke(samples: samples))]),
                                             scale: 1, assets: { _ in nil })
        // The 6553.5 pt dot covers the whole canvas.
        #expect(result.image.pixels.enumerated().allSatisfy { $0.offset % 4 == 3 || $0.element == 0 })
    }

    @Test func strokesOutsideTheCanvasDrawNothing() throws {
        let samples = [TestPages.sample(-50, -50, radius: 3), TestPages.sample(-10, -80, radius: 3)]
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(Stroke(samples: samples)), .stroke(Stroke(samples: []))]),
                                            scale: 1, assets: { _ in nil }).image
        #expect(image.pixels.allSatisfy { $0 == 255 })
    }

    /// The capsule distance function against brute force over discs along the segment.
    @Test func taperedCapsuleMatchesDiscUnion() throws {
        let a = (x: 30.0, y: 40.0, r: 12.0), b = (x: 90.0, y: 55.0, r: 3.0)
        let stroke = Stroke(samples: [TestPages.sample(a.x, a.y, radius: a.r), TestPages.sample(b.x, b.y, radius: b.r)])
        let image = try PageRenderer.render(PageContent(canvasSize: Self.canvas, elements: [.stroke(stroke)]),
                                            scale: 1, assets: { _ in nil }).image
        var checked = 0
        for y in 0..<100 {
            for x in 0..<200 {
                let px = Double(x) + 0.5, py = Double(y) + 0.5
                // Signed distance to the union of discs lerped along the segment (the convex hull).
                let d = (0...400).map { i -> Double in
                    let t = Double(i) / 400
                    return hypot(px - (a.x + t * (b.x - a.x)), py - (a.y + t * (b.y - a.y))) - (a.r + t * (b.r - a.r))
                }.min()!
                let value = image.pixel(x: x, y: y).r
                if d < -0.7 { #expect(value == 0, "(\(x), \(y)) d=\(d)"); checked += 1 }
                if d > 0.7 { #expect(value == 255, "(\(x), \(y)) d=\(d)"); checked += 1 }
            }
        }
        #expect(checked > 19000)
    }
}
