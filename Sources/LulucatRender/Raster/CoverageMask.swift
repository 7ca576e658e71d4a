// A stroke's coverage, built as one mask and composited once, so overlapping pieces never double up.

/// Coverage (0...1) per pixel of the canvas for the stroke being drawn.
///
/// Every piece of a stroke (a tapered capsule between two samples) writes the *maximum* of its
/// coverage and what is there, so where pieces overlap at a joint the stroke is exactly as opaque as
/// anywhere else: no seams, no dark dots. Each row remembers the span that was touched; compositing
/// visits and clears only those spans, so a stroke costs the pixels it covers, not the canvas.
final class CoverageMask {
    let width: Int
    let height: Int
    private let values: UnsafeMutablePointer<Float>
    private let rowStart: UnsafeMutablePointer<Int32>
    private let rowEnd: UnsafeMutablePointer<Int32>
    private var firstRow = Int.max
    private var lastRow = -1

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        values = .allocate(capacity: max(1, width * height))
        values.initialize(repeating: 0, count: max(1, width * height))
        rowStart = .allocate(capacity: max(1, height))
        rowStart.initialize(repeating: Int32.max, count: max(1, height))
        rowEnd = .allocate(capacity: max(1, height))
        rowEnd.initialize(repeating: -1, count: max(1, height))
    }

    deinit {
        values.deallocate()
        rowStart.deallocate()
        rowEnd.deallocate()
    }

    /// The pixels whose centres lie within half a pixel of `lo...hi` (coverage is 0.5 - distance,
    /// so nothing further gets any), clipped to `0..<limit`; nil when empty. Done in Double so absurd
    /// coordinates from a corrupt file clip instead of overflowing.
    @inline(__always)
    private static func clip(_ lo: Float, _ hi: Float, _ limit: Int) -> (Int, Int)? {
        let l = max(0, (Double(lo) - 1).rounded(.up))
        let h = min(Double(limit - 1), Double(hi).rounded(.down))
        guard l <= h, h >= 0, l < Double(limit) else { return nil }
        return (Int(l), Int(h))
    }

    @inline(__always)
    private func markRows(_ y0: Int, _ y1: Int, _ x0: Int, _ x1: Int) {
        firstRow = min(firstRow, y0)
        lastRow = max(lastRow, y1)
        for y in y0...y1 {
            if Int32(x0) < rowStart[y] { rowStart[y] = Int32(x0) }
            if Int32(x1) > rowEnd[y] { rowEnd[y] = Int32(x1) }
        }
    }

    /// Adds the convex hull of disc A (centre, radius, weight) and disc B, weights interpolated
    /// along the segment: a tapered capsule. Coordinates in pixels.
    func addCapsule(ax: Float, ay: Float, ar: Float, aw: Float,
                    bx: Float, by: Float, br: Float, bw: Float) {
        guard let (x0, x1) = Self.clip(min(ax - ar, bx - br), max(ax + ar, bx + br), width),
              let (y0, y1) = Self.clip(min(ay - ar, by - br), max(ay + ar, by + br), height)
        else { return }
        markRows(y0, y1, x0, x1)
        let dx = bx - ax, dy = by - ay
        let h = dx * dx + dy * dy
        let b = ar - br
        if h <= b * b + 1e-6 {
            // One disc holds the other (or both are the same point): the larger disc alone.
            if ar >= br { addDisc(ax, ay, ar, aw, x0, x1, y0, y1) } else { addDisc(bx, by, br, bw, x0, x1, y0, y1) }
            return
        }
        // Signed distance to an uneven capsule (Inigo Quilez, "2D distance functions").
        let cx = (h - b * b).squareRoot(), cy = b
        let invH = 1 / h
        let sameWeight = aw == bw
        let full = max(aw, bw)
        let rows = RowSpans(ax: ax, ay: ay, ar: ar, bx: bx, by: by, br: br, length: h.squareRoot())
        for y in y0...y1 {
            guard let (xs, xe) = rows.span(row: y, x0: x0, x1: x1) else { continue }
            let py = Float(y) + 0.5 - ay
            let row = values + y * width
            for x in xs...xe {
                // Consecutive capsules overlap; a pixel already at this capsule's most cannot rise.
                if row[x] >= full { continue }
                let px = Float(x) + 0.5 - ax
                let qx = abs(px * dy - py * dx) * invH
                let qy = (px * dx + py * dy) * invH
                let k = cx * qy - cy * qx
                let d: Float
                if k < 0 {
                    d = (h * (qx * qx + qy * qy)).squareRoot() - ar
                } else if k > cx {
                    d = (h * (qx * qx + qy * qy + 1 - 2 * qy)).squareRoot() - br
                } else {
                    d = cx * qx + cy * qy - ar
                }
                var c = 0.5 - d
                if c <= 0 { continue }
                if c > 1 { c = 1 }
                if !sameWeight {
                    let t = min(max(qy, 0), 1)
                    c *= aw + (bw - aw) * t
                } else {
                    c *= aw
                }
                if c > row[x] { row[x] = c }
            }
        }
    }

    /// Adds a disc (a single-sample stroke, a dot).
    func addDisc(x cx: Float, y cy: Float, radius r: Float, weight w: Float) {
        guard let (x0, x1) = Self.clip(cx - r, cx + r, width), let (y0, y1) = Self.clip(cy - r, cy + r, height) else { return }
        markRows(y0, y1, x0, x1)
        addDisc(cx, cy, r, w, x0, x1, y0, y1)
    }

    private func addDisc(_ cx: Float, _ cy: Float, _ r: Float, _ w: Float, _ x0: Int, _ x1: Int, _ y0: Int, _ y1: Int) {
        let reach = r + 0.5
        for y in y0...y1 {
            let py = Float(y) + 0.5 - cy
            guard py * py < reach * reach else { continue }
            let half = (reach * reach - py * py).squareRoot()
            guard let (xs, xe) = RowSpans.pixels(cx - half, cx + half, x0, x1) else { continue }
            let row = values + y * width
            for x in xs...xe {
                if row[x] >= w { continue }
                let px = Float(x) + 0.5 - cx
                var c = 0.5 - ((px * px + py * py).squareRoot() - r)
                if c <= 0 { continue }
                if c > 1 { c = 1 }
                c *= w
                if c > row[x] { row[x] = c }
            }
        }
    }

    /// Which pixels of a row a tapered capsule can touch: the row's slice of the capsule grown by
    /// half a pixel (beyond that, coverage is 0). The grown capsule is the convex hull of the two
    /// grown discs, so its slice runs between the outermost crossings of the row with the two discs
    /// and the two tangent segments. Skipping the bounding box's empty corners saves a third of
    /// the distance evaluations.
    struct RowSpans {
        let ax, ay, ra, bx, by, rb: Float
        /// Tangent segments (left and right of the axis) of the grown hull.
        let l1x, l1y, l2x, l2y, r1x, r1y, r2x, r2y: Float

        init(ax: Float, ay: Float, ar: Float, bx: Float, by: Float, br: Float, length: Float) {
            self.ax = ax; self.ay = ay; self.bx = bx; self.by = by
            ra = ar + 0.5; rb = br + 0.5
            let ux = (bx - ax) / length, uy = (by - ay) / length
            let s = (ar - br) / length
            let c = max(0, 1 - s * s).squareRoot()
            let nlx = s * ux - c * uy, nly = s * uy + c * ux
            let nrx = s * ux + c * uy, nry = s * uy - c * ux
            l1x = ax + ra * nlx; l1y = ay + ra * nly; l2x = bx + rb * nlx; l2y = by + rb * nly
            r1x = ax + ra * nrx; r1y = ay + ra * nry; r2x = bx + rb * nrx; r2y = by + rb * nry
        }

        @inline(__always)
        func span(row y: Int, x0: Int, x1: Int) -> (Int, Int)? {
            let cy = Float(y) + 0.5
            var lo = Float.infinity, hi = -Float.infinity
            let da = cy - ay
            if da * da < ra * ra { let w = (ra * ra - da * da).squareRoot(); lo = min(lo, ax - w); hi = max(hi, ax + w) }
            let db = cy - by
            if db * db < rb * rb { let w = (rb * rb - db * db).squareRoot(); lo = min(lo, bx - w); hi = max(hi, bx + w) }
            if l1y != l2y && (cy - l1y) * (cy - l2y) <= 0 {
                let x = l1x + (cy - l1y) * (l2x - l1x) / (l2y - l1y)
                lo = min(lo, x); hi = max(hi, x)
            }
            if r1y != r2y && (cy - r1y) * (cy - r2y) <= 0 {
                let x = r1x + (cy - r1y) * (r2x - r1x) / (r2y - r1y)
                lo = min(lo, x); hi = max(hi, x)
            }
            guard lo <= hi else { return nil }
            return RowSpans.pixels(lo, hi, x0, x1)
        }

        /// The pixels of `x0...x1` whose centres lie in `lo...hi` (with a hair of slack for rounding).
        @inline(__always)
        static func pixels(_ lo: Float, _ hi: Float, _ x0: Int, _ x1: Int) -> (Int, Int)? {
            let first = max(Float(x0), (lo - 0.5 - 0.01).rounded(.up))
            let last = min(Float(x1), (hi - 0.5 + 0.01).rounded(.down))
            guard first <= last else { return nil }
            return (Int(first), Int(last))
        }
    }

    /// How the mask's colour meets the canvas.
    enum Blend { case normal, multiply }

    /// Composites `color` (alpha included) through the mask onto `canvas` (opaque RGBA8, same size),
    /// then clears the mask for the next stroke.
    func composite(onto canvas: UnsafeMutableBufferPointer<UInt8>, r: UInt8, g: UInt8, b: UInt8, alpha: Float, blend: Blend) {
        guard firstRow <= lastRow else { return }
        let cr = Float(r), cg = Float(g), cb = Float(b)
        // Multiply by (1 - a) + a * colour: what remains of the paper's light through the ink.
        let mr = 1 - cr / 255, mg = 1 - cg / 255, mb = 1 - cb / 255
        for y in firstRow...lastRow {
            let start = Int(rowStart[y]), end = Int(rowEnd[y])
            rowStart[y] = Int32.max
            rowEnd[y] = -1
            guard start <= end else { continue }
            let row = values + y * width
            for x in start...end {
                let m = row[x]
                if m <= 0 { continue }
                row[x] = 0
                let a = m * alpha
                let i = (y * width + x) * 4
                let dr = Float(canvas[i]), dg = Float(canvas[i + 1]), db = Float(canvas[i + 2])
                switch blend {
                case .normal:
                    canvas[i] = UInt8(dr + (cr - dr) * a + 0.5)
                    canvas[i + 1] = UInt8(dg + (cg - dg) * a + 0.5)
                    canvas[i + 2] = UInt8(db + (cb - db) * a + 0.5)
                case .multiply:
                    canvas[i] = UInt8(dr * (1 - a * mr) + 0.5)
                    canvas[i + 1] = UInt8(dg * (1 - a * mg) + 0.5)
                    canvas[i + 2] = UInt8(db * (1 - a * mb) + 0.5)
                }
            }
        }
        firstRow = Int.max
        lastRow = -1
    }
}
