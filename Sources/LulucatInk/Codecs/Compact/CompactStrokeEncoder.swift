// The compact encoder: picks each channel's predictor, scale and coder by measuring them, then writes.

/// Encodes one stroke's samples in the compact bitstream.
enum CompactStrokeEncoder {
    typealias F = CompactFormat

    /// The choices written in a varying channel's header.
    struct Choice {
        var predictor = 0
        var runs = false
        var meanIndex = 0
        var scale: UInt32 = 1
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

        var scale: UInt32 = 0
        for i in 1..<n { scale = gcd(scale, Int32(bitPattern: v[i] &- v[i - 1]).magnitude) }
        if scale == 0 && !forceRice {
            w.write(0, bits: 1)  // constant
            return
        }
        w.write(1, bits: 1)
        if scale == 0 { scale = 1 }

        var best = Choice()
        for predictor in 0..<4 {
            residualsOf(v, predictor: predictor, scale: scale, into: r)
            let rice = riceCosts(r, n)
            for j in 0..<4 where rice[j] < best.bits {
                best = Choice(predictor: predictor, runs: false, meanIndex: j, bits: rice[j])
            }
            if forceRice { continue }
            let runs = runCosts(r, n)
            for j in 0..<4 where runs[j] < best.bits {
                best = Choice(predictor: predictor, runs: true, meanIndex: j, bits: runs[j])
            }
        }
        w.write(UInt64(best.predictor), bits: 2)
        w.write(best.runs ? 1 : 0, bits: 1)
        w.write(UInt64(best.meanIndex), bits: 2)
        if scale > 1 {
            w.write(1, bits: 1)
            w.writeExpGolomb(scale - 2, order: 0)
        } else {
            w.write(0, bits: 1)
        }
        residualsOf(v, predictor: best.predictor, scale: scale, into: r)
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

    /// The zigzagged residuals r[1..<n] of the values after dividing deltas by `scale` and
    /// subtracting the predictor's guess.
    static func residualsOf(_ v: UnsafeBufferPointer<UInt32>, predictor: Int, scale: UInt32,
                            into r: UnsafeMutableBufferPointer<UInt32>) {
        let n = v.count
        let shift = Int64(F.meanShifts[predictor])
        var mean: Int64 = 0
        for i in 1..<n {
            var d = Int32(bitPattern: v[i] &- v[i - 1])
            if scale > 1 { d = Int32(truncatingIfNeeded: Int64(d) / Int64(scale)) }
            var residual = d
            if predictor != 0 {
                if i >= 2 { residual = d &- Int32(truncatingIfNeeded: (mean + 8) >> 4) }
                mean = i == 1 ? Int64(d) << 4 : mean + (((Int64(d) << 4) - mean) >> shift)
            }
            r[i] = F.zigzag(residual)
        }
    }

    /// Bits of the plain Rice coding of r[1..<n] for each of the four initial means.
    static func riceCosts(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int) -> [Int] {
        var m0 = F.initialMean(0), m1 = F.initialMean(1), m2 = F.initialMean(2), m3 = F.initialMean(3)
        var c0 = 0, c1 = 0, c2 = 0, c3 = 0
        for i in 1..<n {
            let u = r[i]
            c0 += F.riceCost(u, F.riceParameter(m0)); F.updateMean(&m0, u)
            c1 += F.riceCost(u, F.riceParameter(m1)); F.updateMean(&m1, u)
            c2 += F.riceCost(u, F.riceParameter(m2)); F.updateMean(&m2, u)
            c3 += F.riceCost(u, F.riceParameter(m3)); F.updateMean(&m3, u)
        }
        return [c0, c1, c2, c3]
    }

    /// Bits of the zero-run coding of r[1..<n] for each of the four initial means.
    static func runCosts(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int) -> [Int] {
        var m = (0..<4).map { F.initialMean($0) }
        var runMean = F.initialRunMean
        var runBits = 0
        var c = [0, 0, 0, 0]
        var run: UInt32 = 0
        for i in 1..<n {
            let u = r[i]
            if u == 0 { run += 1; continue }
            runBits += F.riceCost(run, F.riceParameter(runMean)); F.updateMean(&runMean, run)
            run = 0
            for j in 0..<4 { c[j] += F.riceCost(u - 1, F.riceParameter(m[j])); F.updateMean(&m[j], u - 1) }
        }
        if run > 0 { runBits += F.riceCost(run, F.riceParameter(runMean)) }
        return c.map { $0 + runBits }
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
        var mean = F.initialMean(meanIndex)
        for i in 1..<n {
            writeRice(r[i], F.riceParameter(mean), into: &w)
            F.updateMean(&mean, r[i])
        }
    }

    static func writeRuns(_ r: UnsafeMutableBufferPointer<UInt32>, _ n: Int, meanIndex: Int, into w: inout BitWriter) {
        var mean = F.initialMean(meanIndex)
        var runMean = F.initialRunMean
        var run: UInt32 = 0
        for i in 1..<n {
            let u = r[i]
            if u == 0 { run += 1; continue }
            writeRice(run, F.riceParameter(runMean), into: &w)
            F.updateMean(&runMean, run)
            run = 0
            writeRice(u - 1, F.riceParameter(mean), into: &w)
            F.updateMean(&mean, u - 1)
        }
        if run > 0 { writeRice(run, F.riceParameter(runMean), into: &w) }
    }
}
