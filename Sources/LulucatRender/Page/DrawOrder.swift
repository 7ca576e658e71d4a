// The order in which a page's elements are drawn, shared by the rasterizer and the SVG writer.

import LulucatInk

/// One drawing step of a page.
enum DrawStep {
    /// A highlighter stroke, blended by multiplying onto what is below, as a highlighter on paper.
    case highlighter(Stroke)
    /// Any other stroke, painted over what is below.
    case ink(Stroke)
    case image(ImageElement)
}

enum DrawOrder {
    /// The page's elements as drawing steps.
    ///
    /// Highlighters blend under the ink: within each run of strokes between two images, the run's
    /// highlighter strokes are drawn first, then its other strokes, each group in z-order. Images
    /// keep their z-order place, so an image pasted over writing still covers it (and a highlighter
    /// drawn over an image still marks it). Elements of unknown kinds are not drawn.
    static func steps(for content: PageContent) -> [DrawStep] {
        var steps: [DrawStep] = []
        steps.reserveCapacity(content.elements.count)
        var highlighters: [Stroke] = []
        var ink: [Stroke] = []
        func flush() {
            steps += highlighters.map(DrawStep.highlighter)
            steps += ink.map(DrawStep.ink)
            highlighters.removeAll(keepingCapacity: true)
            ink.removeAll(keepingCapacity: true)
        }
        for element in content.elements {
            switch element {
            case .stroke(let s):
                if s.ink.tool == .highlighter { highlighters.append(s) } else { ink.append(s) }
            case .image(let i):
                flush()
                steps.append(.image(i))
            case .unknown:
                continue
            }
        }
        flush()
        return steps
    }
}

/// A stroke's samples as the renderers draw them: positions and radii in points, weights 0...1.
struct StrokePoint {
    var x: Double, y: Double
    /// Radius of the ink in points.
    var radius: Double
    /// Opacity at this sample (the per-sample channel when present, else 1).
    var opacity: Double
}

extension Stroke {
    /// The samples in points. A sample of radius 0 is drawn at half the ink's base width, so a
    /// stroke recorded without radii still shows.
    var drawingPoints: [StrokePoint] {
        let fallback = Double(ink.width) / 20
        let opacities = (opacity?.count == samples.count) ? opacity : nil
        var points: [StrokePoint] = []
        points.reserveCapacity(samples.count)
        for (i, s) in samples.enumerated() {
            let r = s.radius == 0 ? fallback : Double(s.radius) / 10
            let o = opacities.map { Double(min($0[i], 1000)) / 1000 } ?? 1
            points.append(StrokePoint(x: Double(s.x) / 10, y: Double(s.y) / 10, radius: r, opacity: o))
        }
        return points
    }
}
