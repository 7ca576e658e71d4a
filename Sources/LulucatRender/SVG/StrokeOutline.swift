// A stroke's variable-width outline as SVG path data: the union of tapered capsules between
// simplified samples, all wound the same way so the non-zero fill rule paints their union once.

import Foundation

enum StrokeOutline {
    /// Samples closer than this (points) to the simplified outline are dropped: the 0.1 pt quantum
    /// the samples are stored in, so the outline is the raster's shape to a fifth of a pixel at 2x.
    static let tolerance = 0.1

    /// Path data (`d`) for the stroke's outline, in points.
    static func pathData(_ points: [StrokePoint]) -> String {
        let kept = simplify(points)
        var d = ""
        d.reserveCapacity(kept.count * 64)
        if kept.count == 1 {
            appendCircle(kept[0], to: &d)
            return d
        }
        for i in 0..<(kept.count - 1) { appendCapsule(kept[i], kept[i + 1], to: &d) }
        return d
    }

    /// The convex hull of two discs: tangent line on one side, arc round B's far side, tangent line
    /// back, arc round A. Every piece turns the same way (counter-clockwise on screen), so overlapping
    /// pieces add to the winding number instead of cancelling. After the first point the commands
    /// are relative (shorter); each point is rounded to 0.01 pt before the differences are taken,
    /// so rounding never accumulates.
    static func appendCapsule(_ a: StrokePoint, _ b: StrokePoint, to d: inout String) {
        let dx = b.x - a.x, dy = b.y - a.y
        let length = (dx * dx + dy * dy).squareRoot()
        if length <= abs(a.radius - b.radius) + 1e-9 {
            appendCircle(a.radius >= b.radius ? a : b, to: &d)
            return
        }
        let ux = dx / length, uy = dy / length
        let s = (a.radius - b.radius) / length
        let c = (1 - s * s).squareRoot()
        // Normals of the two tangent lines: s*u +/- c*perp(u), perp(u) = (-uy, ux).
        let lx = s * ux - c * uy, ly = s * uy + c * ux
        let rx = s * ux + c * uy, ry = s * uy - c * ux
        let largeB = s < 0 ? "1" : "0", largeA = s > 0 ? "1" : "0"
        let aLeft = hundredths(a.x + a.radius * lx, a.y + a.radius * ly)
        let bLeft = hundredths(b.x + b.radius * lx, b.y + b.radius * ly)
        let bRight = hundredths(b.x + b.radius * rx, b.y + b.radius * ry)
        let aRight = hundredths(a.x + a.radius * rx, a.y + a.radius * ry)
        d += "M"; fixed(aLeft.0, &d); d += " "; fixed(aLeft.1, &d)
        d += "l"; delta(aLeft, bLeft, &d)
        d += "a"; number(b.radius, &d); d += " "; number(b.radius, &d); d += " 0 \(largeB) 0 "; delta(bLeft, bRight, &d)
        d += "l"; delta(bRight, aRight, &d)
        d += "a"; number(a.radius, &d); d += " "; number(a.radius, &d); d += " 0 \(largeA) 0 "; delta(aRight, aLeft, &d)
        d += "z"
    }

    /// A full circle as two half arcs, turning the same way as the capsules.
    static func appendCircle(_ p: StrokePoint, to d: inout String) {
        let r = p.radius
        d += "M"; point(p.x + r, p.y, &d)
        d += "a"; number(r, &d); d += " "; number(r, &d); d += " 0 1 0 "; point(-2 * r, 0, &d)
        d += "a"; number(r, &d); d += " "; number(r, &d); d += " 0 1 0 "; point(2 * r, 0, &d)
        d += "z"
    }

    private static func hundredths(_ x: Double, _ y: Double) -> (Int, Int) {
        func h(_ v: Double) -> Int { v.isFinite ? Int(max(-1e15, min(1e15, (v * 100).rounded()))) : 0 }
        return (h(x), h(y))
    }

    private static func delta(_ from: (Int, Int), _ to: (Int, Int), _ d: inout String) {
        fixed(to.0 - from.0, &d); d += " "; fixed(to.1 - from.1, &d)
    }

    /// Ramer-Douglas-Peucker over (x, y, radius): keeps the samples the outline needs.
    static func simplify(_ points: [StrokePoint]) -> [StrokePoint] {
        guard points.count > 2 else { return points }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        var stack = [(0, points.count - 1)]
        while let (first, last) = stack.popLast() {
            guard last > first + 1 else { continue }
            let a = points[first], b = points[last]
            let dx = b.x - a.x, dy = b.y - a.y
            let lengthSquared = dx * dx + dy * dy
            var worst = 0.0, worstIndex = -1
            for i in (first + 1)..<last {
                let p = points[i]
                let t = lengthSquared > 0 ? min(max(((p.x - a.x) * dx + (p.y - a.y) * dy) / lengthSquared, 0), 1) : 0
                let ex = p.x - (a.x + t * dx), ey = p.y - (a.y + t * dy)
                let er = p.radius - (a.radius + t * (b.radius - a.radius))
                let error = (ex * ex + ey * ey).squareRoot() + abs(er)
                if error > worst { worst = error; worstIndex = i }
            }
            if worst > tolerance {
                keep[worstIndex] = true
                stack.append((first, worstIndex))
                stack.append((worstIndex, last))
            }
        }
        return zip(points, keep).compactMap { $1 ? $0 : nil }
    }

    static func point(_ x: Double, _ y: Double, _ d: inout String) {
        number(x, &d); d += " "; number(y, &d)
    }

    /// Appends `v` with at most two decimals and no trailing zeros (fast, locale-free).
    static func number(_ v: Double, _ d: inout String) {
        guard v.isFinite else { d += "0"; return }
        fixed(Int(max(-1e15, min(1e15, (v * 100).rounded()))), &d)
    }

    /// Appends a count of hundredths as a decimal: 150 -> "1.5", -5 -> "-0.05".
    static func fixed(_ hundredths: Int, _ d: inout String) {
        if hundredths < 0 { d += "-" }
        let m = hundredths.magnitude
        d += String(m / 100)
        let frac = m % 100
        if frac != 0 {
            d += frac % 10 == 0 ? ".\(frac / 10)" : (frac < 10 ? ".0\(frac)" : ".\(frac)")
        }
    }
}
