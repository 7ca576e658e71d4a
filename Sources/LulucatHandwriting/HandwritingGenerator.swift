// Generates realistic handwritten pages (Apple Pencil profile) for benchmarks, tests and the demo.

import Foundation
import LulucatInk

/// A deterministic generator of handwriting: the same seed gives the same page on every machine.
///
/// The model, in a few lines:
/// - Layout: words of 2–7 letters on ruled lines with margins, left to right, top to bottom; the
///   x-height is chosen so the requested number of strokes fills the page (4–12 pt).
/// - Letters: each is one of 14 cursive templates (a, c, e, g, h, i, l, m, n, o, r, s, t, u), a
///   few via points in x-height units that begin and end near the baseline, so letters chain
///   into connected strokes of 1–5 letters. Every instance jitters its via points, slant and size;
///   i and t add a dot or a cross as a separate short stroke, as people write them.
/// - Motion: the pen passes the via points at times spaced by the 2/3 power of the distance
///   (slow in tight turns, fast on long strokes); position is a time-parametrised Catmull–Rom
///   (Barry–Goldman) spline, so velocity is continuous, sampled at 240 Hz with a little digitiser
///   noise (σ 0.03 pt) before quantizing.
/// - Pressure rises over the first ~25 ms and falls over the last ~30 ms, drifts per word, and is
///   higher on downstrokes; radius follows pressure (half the ink width × 0.4…1).
/// - Time is i × 1000/240 ms rounded: evenly spaced, about 4.17 ms.
///
/// A 2,000-stroke page averages about 150 samples a stroke: about 300,000 samples, 4.8 MB in fixed16.
public struct HandwritingGenerator: Sendable {
    public let seed: UInt64
    /// Samples a second (the Apple Pencil's rate).
    public static let sampleRate = 240.0

    public init(seed: UInt64) { self.seed = seed }

    // MARK: Pages

    /// A page of `strokes` strokes of handwriting.
    public func page(strokes count: Int, canvas: QuantizedSize = .letter, ink: Ink = Ink()) -> PageContent {
        var rng = SeededRandom(seed: seed)
        let width = Double(canvas.width) / 10, height = Double(canvas.height) / 10
        let margin = min(54, width / 8, height / 8)
        // Words average about 2.2 strokes (sized for 2.0 and measured widths, to fill about 90%) and 4.6 x-heights of line including the gap; lines are
        // 3.2 x-heights apart. Pick the x-height that makes the words fit.
        let words = max(1, Double(count) / 2.0)
        let area = max(1, (width - 2 * margin) * (height - 2 * margin))
        let xHeight = min(12, max(4, 1.1 * (area / (words * 4.6 * 3.2)).squareRoot()))
        let lineSpacing = 3.2 * xHeight
        var penX = margin, baseline = margin + 2 * xHeight
        var pass = 0
        var elements: [Element] = []
        elements.reserveCapacity(count)
        while elements.count < count {
            let letters = (0..<rng.int(2...7)).map { _ in Letter.all[rng.int(0...Letter.all.count - 1)] }
            let wordWidth = letters.reduce(0) { $0 + $1.width } * xHeight
            if penX + wordWidth > width - margin && penX > margin {
                penX = margin
                baseline += lineSpacing
                if baseline > height - margin {
                    pass += 1  // the page is full: write the next pass between the lines
                    baseline = margin + 2 * xHeight + lineSpacing * (0.5 * Double(pass % 2)) + Double(pass / 2)
                }
            }
            let size = xHeight * rng.uniform(0.92...1.08)
            let strokes = word(letters, at: (penX, baseline + rng.normal(0, 0.08 * xHeight)), xHeight: size,
                               ink: ink, rng: &rng)
            for s in strokes where elements.count < count { elements.append(.stroke(s)) }
            penX += wordWidth + xHeight * rng.uniform(0.8...1.3)
        }
        return PageContent(canvasSize: canvas, elements: elements)
    }

    /// One stroke of `letters` connected letters with its baseline starting at `origin` (in pt).
    /// `variant` picks a different stroke from the same seed.
    public func stroke(letters: Int = 3, origin: (x: Double, y: Double) = (72, 72), xHeight: Double = 6,
                       ink: Ink = Ink(), variant: UInt64 = 0) -> Stroke {
        var rng = SeededRandom(seed: seed ^ (variant &* 0x9E37_79B9_7F4A_7C15))
        let chosen = (0..<max(1, letters)).map { _ in Letter.connected[rng.int(0...Letter.connected.count - 1)] }
        return pen(through: via(chosen, at: origin, xHeight: xHeight, slant: 0.2, rng: &rng),
                   xHeight: xHeight, ink: ink, pressure: 0.45, rng: &rng)
    }

    // MARK: Words and letters

    /// The strokes of one word: connected chunks of letters, then dots and crosses.
    func word(_ letters: [Letter], at origin: (x: Double, y: Double), xHeight: Double, ink: Ink,
              rng: inout SeededRandom) -> [Stroke] {
        let slant = rng.uniform(0.1...0.3)
        let pressure = min(0.8, max(0.2, rng.normal(0.45, 0.08)))
        var strokes: [Stroke] = []
        var marks: [[(Double, Double, Double)]] = []
        var x = origin.x
        var i = 0
        while i < letters.count {
            let chunk = min(letters.count - i, rng.int(1...5))
            var pieces: [Letter] = []
            var starts: [Double] = []
            for letter in letters[i..<i + chunk] {
                starts.append(x)
                pieces.append(letter)
                x += letter.width * xHeight
            }
            strokes.append(pen(through: via(pieces, at: (starts[0], origin.y), xHeight: xHeight, slant: slant, rng: &rng),
                               xHeight: xHeight, ink: ink, pressure: pressure, rng: &rng))
            for (letter, start) in zip(pieces, starts) {
                if let mark = letter.mark {
                    marks.append(mark.map { (start + ($0.0 + slant * -$0.1) * xHeight + rng.normal(0, 0.05 * xHeight),
                                             origin.y + $0.1 * xHeight + rng.normal(0, 0.05 * xHeight), $0.2) })
                }
            }
            i += chunk
        }
        for mark in marks {
            strokes.append(pen(through: mark, xHeight: xHeight, ink: ink, pressure: pressure, rng: &rng))
        }
        return strokes
    }

    /// The via points (x, y in pt, and a relative pace) of connected letters, jittered and slanted.
    func via(_ letters: [Letter], at origin: (x: Double, y: Double), xHeight: Double, slant: Double,
             rng: inout SeededRandom) -> [(Double, Double, Double)] {
        var points: [(Double, Double, Double)] = []
        var x = origin.x
        for letter in letters {
            let stretch = rng.uniform(0.9...1.1)
            for (i, p) in letter.points.enumerated() where !(i == 0 && !points.isEmpty) {
                let jx = rng.normal(0, 0.05), jy = rng.normal(0, 0.05)
                let px = (p.0 * stretch + jx - slant * (p.1 + jy)) * xHeight
                points.append((x + px, origin.y + (p.1 + jy) * xHeight, 1))
            }
            x += letter.width * stretch * xHeight
        }
        return points
    }

    /// Moves the pen through `via` (x, y in pt, pace) and samples it at 240 Hz.
    func pen(through via: [(Double, Double, Double)], xHeight: Double, ink: Ink, pressure base: Double,
             rng: inout SeededRandom) -> Stroke {
        // Knot times: the 2/3 power of distance, so short curved segments are slow, long ones fast.
        var knots = [0.0]
        for k in 1..<max(1, via.count) {
            let d = ((via[k].0 - via[k - 1].0) * (via[k].0 - via[k - 1].0)
                + (via[k].1 - via[k - 1].1) * (via[k].1 - via[k - 1].1)).squareRoot() / xHeight
            knots.append(knots[k - 1] + (0.010 + 0.070 * pow(d, 2.0 / 3.0)) * via[k].2 * rng.uniform(0.85...1.15))
        }
        let duration = knots.last!
        let count = max(2, Int(duration * Self.sampleRate) + 1)
        var samples: [Sample] = []
        samples.reserveCapacity(count)
        var segment = 0
        let wobblePhase = rng.uniform(0...6.28), wobbleRate = rng.uniform(4...9)
        var previousY = via[0].1
        for i in 0..<count {
            let t = Double(i) / Self.sampleRate
            while segment + 1 < knots.count - 1 && t > knots[segment + 1] { segment += 1 }
            let (x, y) = via.count == 1 ? (via[0].0, via[0].1) : position(at: min(t, duration), segment, via, knots)
            // Pressure: attack and release envelopes, a slow wobble, and more on downstrokes.
            let attack = min(1, t / 0.025), release = min(1, (duration - t) / 0.03 + 0.15)
            let down = max(-1, min(1, (y - previousY) * Self.sampleRate / (25 * xHeight)))
            previousY = y
            let p = max(0, base * attack * release * (1 + 0.12 * sin(wobblePhase + wobbleRate * t)) + 0.08 * down * attack)
            let radius = Double(ink.width) / 20 * (0.4 + 0.6 * min(1, p / 0.6))
            samples.append(Sample(
                x: Quantize.position(x + rng.normal(0, 0.03)), y: Quantize.position(y + rng.normal(0, 0.03)),
                radius: Quantize.length(radius), pressure: Quantize.pressure(p),
                time: Quantize.milliseconds(t * 1000)))
        }
        return Stroke(id: uuid(&rng), ink: ink, samples: samples)
    }

    /// The Barry–Goldman (non-uniform Catmull–Rom) point at time `t` in segment `k` of `via`.
    func position(at t: Double, _ k: Int, _ via: [(Double, Double, Double)], _ knots: [Double]) -> (Double, Double) {
        let n = via.count
        func p(_ i: Int) -> (Double, Double) {
            if i < 0 { return (2 * via[0].0 - via[1].0, 2 * via[0].1 - via[1].1) }
            if i >= n { return (2 * via[n - 1].0 - via[n - 2].0, 2 * via[n - 1].1 - via[n - 2].1) }
            return (via[i].0, via[i].1)
        }
        func tk(_ i: Int) -> Double {
            if i < 0 { return knots[0] - (knots[1] - knots[0]) }
            if i >= n { return knots[n - 1] + (knots[n - 1] - knots[n - 2]) }
            return knots[i]
        }
        func lerp(_ a: (Double, Double), _ b: (Double, Double), _ ta: Double, _ tb: Double) -> (Double, Double) {
            let w = tb - ta <= 0 ? 0 : (t - ta) / (tb - ta)
            return (a.0 + (b.0 - a.0) * w, a.1 + (b.1 - a.1) * w)
        }
        let (t0, t1, t2, t3) = (tk(k - 1), tk(k), tk(k + 1), tk(k + 2))
        let a1 = lerp(p(k - 1), p(k), t0, t1), a2 = lerp(p(k), p(k + 1), t1, t2), a3 = lerp(p(k + 1), p(k + 2), t2, t3)
        let b1 = lerp(a1, a2, t0, t2), b2 = lerp(a2, a3, t1, t3)
        return lerp(b1, b2, t1, t2)
    }

    func uuid(_ rng: inout SeededRandom) -> UUID {
        let a = rng.next(), b = rng.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i))); bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

/// A cursive letter template: via points in x-height units (x right, y down, 0 the baseline,
/// -1 the x-height, -2 the ascender, +0.8 the descender), starting and ending near the baseline.
struct Letter: Sendable {
    var points: [(Double, Double)]
    var width: Double
    /// A separate mark (the dot of an i, the cross of a t): points with a relative pace.
    var mark: [(Double, Double, Double)]?

    static let a = Letter(points: [(0, -0.1), (0.6, -0.9), (0.2, -0.85), (0, -0.4), (0.25, 0), (0.6, -0.5), (0.65, -0.95), (0.6, -0.3), (0.7, 0), (0.9, -0.1)], width: 0.9)
    static let c = Letter(points: [(0, -0.2), (0.6, -0.85), (0.3, -0.95), (0.05, -0.5), (0.3, 0), (0.75, -0.15)], width: 0.75)
    static let e = Letter(points: [(0, -0.2), (0.45, -0.5), (0.55, -0.85), (0.25, -0.85), (0.1, -0.4), (0.35, 0), (0.75, -0.2)], width: 0.75)
    static let g = Letter(points: [(0, -0.2), (0.55, -0.85), (0.2, -0.85), (0.05, -0.4), (0.35, -0.1), (0.6, -0.6), (0.62, -0.9), (0.6, 0.5), (0.3, 0.85), (0.1, 0.5), (0.5, 0.1), (0.9, -0.1)], width: 0.9)
    static let h = Letter(points: [(0, -0.3), (0.4, -1.5), (0.35, -2.0), (0.1, -1.4), (0.1, 0), (0.25, -0.7), (0.55, -0.95), (0.65, -0.5), (0.65, 0), (0.9, -0.2)], width: 0.9)
    static let i = Letter(points: [(0, -0.2), (0.3, -0.9), (0.28, -0.1), (0.55, -0.15)], width: 0.55, mark: [(0.32, -1.45, 1), (0.36, -1.4, 1)])
    static let l = Letter(points: [(0, -0.3), (0.45, -1.4), (0.4, -2.0), (0.2, -1.6), (0.25, -0.3), (0.45, 0), (0.7, -0.25)], width: 0.7)
    static let m = Letter(points: [(0, -0.2), (0.12, -0.9), (0.12, 0), (0.22, -0.7), (0.42, -0.95), (0.5, -0.5), (0.5, 0), (0.6, -0.7), (0.82, -0.95), (0.9, -0.5), (0.9, 0), (1.15, -0.2)], width: 1.15)
    static let n = Letter(points: [(0, -0.2), (0.15, -0.9), (0.15, 0), (0.25, -0.7), (0.55, -0.95), (0.65, -0.5), (0.65, 0), (0.9, -0.2)], width: 0.9)
    static let o = Letter(points: [(0, -0.2), (0.5, -0.9), (0.15, -0.8), (0.1, -0.2), (0.45, 0), (0.6, -0.6), (0.5, -0.9), (0.7, -0.75), (0.95, -0.6)], width: 0.95)
    static let r = Letter(points: [(0, -0.2), (0.2, -0.9), (0.35, -0.8), (0.45, -0.9), (0.5, -0.1), (0.8, -0.2)], width: 0.8)
    static let s = Letter(points: [(0, -0.2), (0.4, -0.95), (0.55, -0.4), (0.4, 0), (0.15, -0.1), (0.75, -0.2)], width: 0.75)
    static let t = Letter(points: [(0, -0.2), (0.35, -1.6), (0.3, -0.1), (0.55, 0), (0.75, -0.2)], width: 0.75, mark: [(0.05, -1.0, 1), (0.7, -1.05, 1)])
    static let u = Letter(points: [(0, -0.2), (0.1, -0.9), (0.15, -0.1), (0.45, 0), (0.6, -0.9), (0.6, -0.15), (0.9, -0.1)], width: 0.9)

    /// Roughly English letter frequencies among the templates.
    static let all: [Letter] = [a, a, a, c, e, e, e, e, g, h, h, i, i, i, l, l, m, n, n, n, o, o, o, r, r, s, s, t, t, t, u]
    static let connected: [Letter] = [a, c, e, g, h, l, m, n, o, r, s, u]
}
