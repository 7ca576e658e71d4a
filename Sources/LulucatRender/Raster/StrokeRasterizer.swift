// Turns a stroke's samples into coverage: tapered capsules between samples, smoothed with
// Catmull-Rom where the samples are far apart in pixels.

import LulucatInk

enum StrokeRasterizer {
    /// Narrower than this radius (in pixels) a stroke is drawn at this radius with its opacity
    /// scaled down instead: a 0.2 px line as a faint 1 px line, not a broken dotted one.
    static let hairlineRadius: Double = 0.5
    /// Segments longer than this (pixels) are subdivided along a Catmull-Rom curve.
    static let smoothingStep: Double = 2

    /// Writes the stroke's coverage into `mask` at `scale` pixels per point.
    static func addStroke(_ points: [StrokePoint], scale: Double, to mask: CoverageMask) {
        guard !points.isEmpty else { return }
        @inline(__always) func pixel(_ p: StrokePoint) -> PixelPoint {
            let r = p.radius * scale
            let (drawn, weight) = r < hairlineRadius ? (hairlineRadius, r / hairlineRadius) : (r, 1)
            return PixelPoint(x: Float(p.x * scale), y: Float(p.y * scale), r: Float(drawn), w: Float(weight * p.opacity))
        }
        let pixels = decimate(points.map(pixel))
        if pixels.count == 1 {
            let p = pixels[0]
            mask.addDisc(x: p.x, y: p.y, radius: p.r, weight: p.w)
            return
        }
        for i in 0..<(pixels.count - 1) {
            let a = pixels[i], b = pixels[i + 1]
            let length = Double(((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot())
            if length <= smoothingStep {
                mask.addCapsule(ax: a.x, ay: a.y, ar: a.r, aw: a.w, bx: b.x, by: b.y, br: b.r, bw: b.w)
                continue
            }
            // Far-apart samples (a large scale, or a fast pen): follow the curve through the
            // neighbours instead of a straight chord, so curves stay round when zoomed.
            // At the ends the missing neighbour is the reflection of the other one, so a straight
            // two-sample stroke stays exactly its tapered capsule. Radii follow the same spline as
            // positions: a disc's size must match where along the segment it sits.
            let p0 = i > 0 ? pixels[i - 1] : PixelPoint(x: 2 * a.x - b.x, y: 2 * a.y - b.y, r: 2 * a.r - b.r, w: a.w)
            let p3 = i + 2 < pixels.count ? pixels[i + 2] : PixelPoint(x: 2 * b.x - a.x, y: 2 * b.y - a.y, r: 2 * b.r - a.r, w: b.w)
            let pieces = min(64, Int((length / smoothingStep).rounded(.up)))
            var previous = a
            for k in 1...pieces {
                let t = Float(k) / Float(pieces)
                let next: PixelPoint
                if k == pieces {
                    next = b
                } else {
                    next = PixelPoint(x: catmullRom(p0.x, a.x, b.x, p3.x, t), y: catmullRom(p0.y, a.y, b.y, p3.y, t),
                                      r: max(0, catmullRom(p0.r, a.r, b.r, p3.r, t)), w: a.w + (b.w - a.w) * t)
                }
                mask.addCapsule(ax: previous.x, ay: previous.y, ar: previous.r, aw: previous.w,
                                bx: next.x, by: next.y, br: next.r, bw: next.w)
                previous = next
            }
        }
    }

    /// Samples closer than this (pixels) to the last one kept are merged into the next segment
    /// when their radius and weight barely differ. At 240 Hz a thumbnail gets many samples per
    /// pixel; drawing each would cost far more than it shows. A 1 px chord leaves a curve of
    /// radius R (pixels) by 1/(8R) px: under 0.13 px wherever the curve's radius is a pixel or more.
    static let minimumStep: Float = 1

    static func decimate(_ points: [PixelPoint]) -> [PixelPoint] {
        guard points.count > 2 else { return points }
        var kept: [PixelPoint] = [points[0]]
        kept.reserveCapacity(points.count)
        var last = points[0]
        for i in 1..<(points.count - 1) {
            let p = points[i]
            let dx = p.x - last.x, dy = p.y - last.y
            if dx * dx + dy * dy < minimumStep * minimumStep && abs(p.r - last.r) < 0.1 && abs(p.w - last.w) < 0.02 {
                continue
            }
            kept.append(p)
            last = p
        }
        kept.append(points[points.count - 1])
        return kept
    }

    /// A sample in pixels: centre, drawn radius, weight (opacity times the hairline fade).
    struct PixelPoint { var x, y, r, w: Float }

    /// Uniform Catmull-Rom between p1 (t = 0) and p2 (t = 1).
    @inline(__always)
    static func catmullRom(_ p0: Float, _ p1: Float, _ p2: Float, _ p3: Float, _ t: Float) -> Float {
        let t2 = t * t, t3 = t2 * t
        return 0.5 * ((2 * p1) + (-p0 + p2) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t2 + (-p0 + 3 * p1 - 3 * p2 + p3) * t3)
    }
}
