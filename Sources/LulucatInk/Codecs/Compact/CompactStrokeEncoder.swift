// The compact encoder: picks each channel's predictor, scale and coder by measuring them, then writes.

/// Encodes one stroke's samples in the compact bitstream.
enum CompactStrokeEncoder {
    typealias F = CompactFormat

    /// The choices written in a varying channel's header.
    struct Choice {
        var predictor = 0
        var runs = false
        var meanIndex = 0
        var bits = Int.max
    }

    static func encode(_ stroke: Stroke) -> [UInt8] {
        let n = stroke.samples.count
        if n == 0 { return [] }
        var values = [UInt32](repeating: 0, count: n)
        var residuals = [UInt32](repeating: 0, count: n)
        var bits = write(stroke, forcingXToOneBitPerSample: false, values: &values, residuals: &residuals)
        // The decoder trusts a count only up to 8 times the bytes left, so the bitstream must cost at
        // least a bit a sample; only strokes whose channels are all constant can be cheaper.
        if bits.bitCount < n {
            bits = write(stroke, forcingXToOneBitPerSample: true, values: &values, residuals: &residuals)
        }
        return bits.finish()
    }

    static func write(_ stroke: Stroke, forcingXToOneBitPerSample force: Bool,
                      values: inout [UInt32], residuals: inout [UInt32]) -> BitWriter {
        let samples = stroke.samples
        let n = samples.count
        var w = BitWriter(capacity: n * 3 + 32)
        func channel(_ spec: F.Channel, force: Bool = false, _ extract: (Int) -> UInt32) {
            for i in 0..<n { values[i] = extract(i) }
            values.withUnsafeBufferPointer { v in
                residuals.withUnsafeMutableBufferPointer { r in
                    writeChannel(v, spec, forceRice: force, scratch: r, into: &w)
                }
            }
        }
        samples.withUnsafeBufferPointer { s in
            channel(F.x, force: force) { UInt32(bitPattern: s[$0].x) }
            channel(F.y) { UInt32(bitPattern: s[$0].y) }
            channel(F.radius) { UInt32(s[$0].radius) }
            channel(F.pressure) { UInt32(s[$0].pressure) }
            channel(F.time) { s[$0].time }
        }
        for optional in stroke.optionalChannelValues {
            optional.withUnsafeBufferPointer { o in channel(F.optional) { UInt32(o[$0]) } }
        }
        return w
    }

    /// Writes one channel: first value, then (when there are more) its header and residuals.
    static func writeChannel(_ v: UnsafeBufferPointer<UInt32>, _ spec: F.Channel, forceRice: Bool,
                             scratch r: UnsafeMutableBufferPointer<UInt32>, into w: inout BitWriter) {
        let n = v.count
        let first = spec.signed ? F.zigzag(Int32(bitPattern: v[0])) : v[0]
        w.writeExpGolomb(first, order: spec.firstOrder)
        if n == 1 { return }

        var deltaScale: UInt32 = 0
        for i in 1..<n where deltaScale != 1 { deltaScale = gcd(deltaScale, Int32(bitPattern: v[i] &- v[i - 1]).magnitude) }
        if deltaScale == 0 && !forceRice {
            w.write(0, bits: 1)  // constant
            return
        }
        w.write(1, bits: 1)
        let line = fitLine(v)
        var lineScale: UInt32 = 0
        for i in 1..<n where lineScale != 1 { lineScale = gcd(lineScale, Int32(bitPattern: v[i] &- onLine(v[0], line, i)).magnitude) }
        func scale(_ predictor: Int) -> UInt32 {
            max(1, predictor == F.linePredictor ? lineScale : deltaScale)
        }

        var best = Choice()
        for predictor in 0..<4 {
            residualsOf(v, predictor: predictor, scale: scale(predictor), line: line, into: r)
            // The line's slope costs header bits the others do not spend.
            let extra = predictor == F.linePredictor ? expGolombBits(F.zigzag(line.slope), F.slopeOrder) + F.phaseBits : 0
            let rice = riceCosts(r, n)
            for j in 0..<4 where rice[j] + extra < best.bits {
                best = Choice(predictor: predictor, runs: false, meanIndex: j, bits: rice[j] + extra)
            }
            if forceRice { continue }
            let runs = runCosts(r, n)
            for j in 0..<4 where runs[j] + extra < best.bits {
                best = Choice(predictor: predictor, runs: true, meanIndex: j, bits: runs[j] + extra)
            }
        }
        let chosenScale = scale(best.predictor)
        w.write(UInt64(best.predictor), bits: 2)
        w.write(best.runs ? 1 : 0, bits: 1)
        w.write(UInt64(best.meanIndex), bits: 2)
        if chosenScale > 1 {
            w.write(1, bits: 1)
            w.writeExpGolomb(chosenScale - 2, order: 0)
        } else {
            w.write(0, bits: 1)
        }
        if best.predictor == F.linePredictor {
            w.writeExpGolomb(F.zigzag(line.slope), order: F.slopeOrder)
            w.write(UInt64(line.phase), bits: F.phaseBits)
        }
        residualsOf(v, predictor: best.predictor, scale: chosenScale, line: line, into: r)
        if best.runs {
            writeRuns(r, n, meanIndex: best.meanIndex, into: &w)
        } else {
            writeRice(r, n, meanIndex: best.meanIndex, into: &w)
        }
    }

    static func gcd(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// A line through the first value: slope in 1/4096 a sample, and phase (0..<4096) added
    /// before the shift.
    struct Line {
        var slope: Int32 = 0
        var phase: Int64 = F.slopeHalf
    }

    /// The line through the first value that fits the others best: near the least-squares slope,
    /// a slope and phase that hit every value when there is one (an even clock rounded to whole
    /// ms, whatever its phase), else the least-squares slope, rounding to nearest.
    static func fitLine(_ v: UnsafeBufferPointer<UInt32>) -> Line {
        let n = v.count
        var sxy = 0.0, sxx = 0.0
        for i in 1..<n {
            let d = Double(Int32(bitPattern: v[i] &- v[0]))
            sxy += Double(i) * d
            sxx += Double(i) * Double(i)
        }
        let fitted = (sxy / sxx * Double(1 << F.slopeShift)).rounded()
        guard fitted.isFinite, abs(fitted) < Double(Int32.max) - 8 else { return Line() }
        let unit = Int64(1) << F.slopeShift
        for candidate in Int32(fitted) - 4...Int32(fitted) + 4 {
            // The phases that put value i on the line form an interval; intersect them.
            var lo = Int64.min, hi = Int64.max
            for i in 1..<n {
                let low = Int64(Int32(bitPattern: v[i] &- v[0])) * unit - Int64(i) * Int64(candidate)
                lo = max(lo, low)
                hi = min(hi, low + unit - 1)
                if lo > hi { break }
            }
            if max(lo, 0) <= min(hi, unit - 1) { return Line(slope: candidate, phase: max(lo, 0)) }
        }
        // No slope hits every value: the least-squares line, rounding to nearest.
        return Line(slope: Int32(fitted))
    }

    @inline(__always) static func onLine(_ origin: UInt32, _ line: Line, _ i: Int) -> UInt32 {
        origin &+ UInt32(truncatingIfNeeded: (Int64(i) &* Int64(line.slope) &+ line.phase) &>> F.slopeShift)
    }

    static func expGolombBits(_ value: UInt32, _ k: Int) -> Int {
        let w = (UInt64(value) >> UInt64(k)) + 1
        return 2 * (63 - w.leadingZeroBitCount) + 1 + k
    }

    /// The zigzagged residuals r[1..<n] of the values: for predictors 0–2 the deltas divided by
    /// `scale` minus the predictor's guess; for the line, the distance to it divided by `scale`.
    static func residualsOf(_ v: UnsafeBufferPointer<UInt32>, predictor: Int, scale: UInt32, line: Line,
                            into r: UnsafeMutableBufferPointer<UInt32>) {
        let n = v.count
        if predictor == F.linePredictor {
            for i in 1..<n {
                var d = Int32(bitPattern: v[i] &- onLine(v[0], line, i))
                if scale > 1 { d = Int32(truncatingIfNeeded: Int64(d) / Int64(scale)) }
                r[i] = F.zigzag(d)
            }
            return
        }
        var mean: Int64 = 0
        for i in 1..<n {
            var d = Int32(bitPattern: v[i] &- v[i - 1])
            if scale > 1 { d = Int32(truncatingIfNeeded: Int64(d) / Int64(scale)) }
            var residual = d
            if predictor != 0 {
                if i >= 2 { residual = d &- F.predictedDelta(mean) }
                mean = i == 1 ? Int64(d) << 4 : F.nextDeltaMean(mean, d, predictor: predictor)
            }
            r[i] = F.zigzag(residual)
        }
    }

    /// Bits of the plain Rice coding of r[1..<n] for each of the four initial means.
    static func riceCosts(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int) -> [Int] {
        var m0 = F.RiceMean(F.initialMean(0)), m1 = F.RiceMean(F.initialMean(1))
        var m2 = F.RiceMean(F.initialMean(2)), m3 = F.RiceMean(F.initialMean(3))
        var c0 = 0, c1 = 0, c2 = 0, c3 = 0
        for i in 1..<n {
            let u = r[i]
            c0 &+= F.riceCost(u, m0.k); m0.update(u)
            c1 &+= F.riceCost(u, m1.k); m1.update(u)
            c2 &+= F.riceCost(u, m2.k); m2.update(u)
            c3 &+= F.riceCost(u, m3.k); m3.update(u)
        }
        return [c0, c1, c2, c3]
    }

    /// Bits of the zero-run coding of r[1..<n] for each of the four initial means.
    static func runCosts(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int) -> [Int] {
        var m0 = F.RiceMean(F.initialMean(0)), m1 = F.RiceMean(F.initialMean(1))
        var m2 = F.RiceMean(F.initialMean(2)), m3 = F.RiceMean(F.initialMean(3))
        var runMean = F.RiceMean(F.initialRunMean)
        var runBits = 0, c0 = 0, c1 = 0, c2 = 0, c3 = 0
        var run: UInt32 = 0
        for i in 1..<n {
            let u = r[i]
            if u == 0 { run &+= 1; continue }
            runBits &+= F.riceCost(run, runMean.k); runMean.update(run)
            run = 0
            let v = u &- 1
            c0 &+= F.riceCost(v, m0.k); m0.update(v)
            c1 &+= F.riceCost(v, m1.k); m1.update(v)
            c2 &+= F.riceCost(v, m2.k); m2.update(v)
            c3 &+= F.riceCost(v, m3.k); m3.update(v)
        }
        if run > 0 { runBits &+= F.riceCost(run, runMean.k) }
        return [c0 &+ runBits, c1 &+ runBits, c2 &+ runBits, c3 &+ runBits]
    }

    @inline(__always) static func writeRice(_ u: UInt32, _ k: Int, into w: inout BitWriter) {
        let q = Int(u >> UInt32(k))
        if q < F.escapeLength {
            w.write(1 << UInt64(q), bits: q + 1)
            if k > 0 { w.write(UInt64(u) & ((1 << UInt64(k)) - 1), bits: k) }
        } else {
            w.write(0, bits: F.escapeLength)
            w.write(UInt64(u), bits: 32)
        }
    }

    static func writeRice(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int, meanIndex: Int, into w: inout BitWriter) {
        var mean = F.RiceMean(F.initialMean(meanIndex))
        for i in 1..<n {
            writeRice(r[i], mean.k, into: &w)
            mean.update(r[i])
        }
    }

    static func writeRuns(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int, meanIndex: Int, into w: inout BitWriter) {
        var mean = F.RiceMean(F.initialMean(meanIndex))
        var runMean = F.RiceMean(F.initialRunMean)
        var run: UInt32 = 0
        for i in 1..<n {
            let u = r[i]
            if u == 0 { run += 1; continue }
            writeRice(run, runMean.k, into: &w)
            runMean.update(run)
            run = 0
            writeRice(u - 1, mean.k, into: &w)
            mean.update(u - 1)
        }
        if run > 0 { writeRice(run, runMean.k, into: &w) }
    }
}
