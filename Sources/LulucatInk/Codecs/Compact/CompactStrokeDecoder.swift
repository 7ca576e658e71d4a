// The compact decoder: tight loops per channel and predictor, writing straight into the samples' fields.

/// Decodes one stroke's samples from the compact bitstream.
enum CompactStrokeDecoder {
    typealias F = CompactFormat

    /// Where decoded values of one channel go: a field of type `W` in strided records.
    struct FieldPointer<W: FixedWidthInteger & UnsignedInteger> {
        var base: UnsafeMutableRawPointer
        var stride: Int
        @inline(__always) func store(_ v: UInt32, at i: Int) {
            base.storeBytes(of: W(truncatingIfNeeded: v), toByteOffset: i &* stride, as: W.self)
        }
    }

    static let sampleStride = MemoryLayout<Sample>.stride
    static let xOffset = MemoryLayout<Sample>.offset(of: \Sample.x)!
    static let yOffset = MemoryLayout<Sample>.offset(of: \Sample.y)!
    static let radiusOffset = MemoryLayout<Sample>.offset(of: \Sample.radius)!
    static let pressureOffset = MemoryLayout<Sample>.offset(of: \Sample.pressure)!
    static let timeOffset = MemoryLayout<Sample>.offset(of: \Sample.time)!

    static func decode(count n: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]]) {
        let start = reader.fileOffset
        // The encoder spends at least a bit a sample, so a larger count is corrupt; checking it
        // here bounds every allocation below by the bytes actually present.
        guard n <= 8 * reader.remaining else {
            throw .invalidField(offset: start, "sample count \(n) needs more than the \(reader.remaining) bytes left (at least one bit a sample)")
        }
        if n == 0 {
            return ([], [[UInt16]](repeating: [], count: channels.rawValue.nonzeroBitCount))
        }
        let buffer = UnsafeRawBufferPointer(rebasing: reader.buffer[reader.offset...])
        var bits = BitReader(buffer)
        var decoded: (samples: [Sample], channels: [[UInt16]]) = ([], [])
        var failure: PageFormatError?
        // Residuals of run-coded channels, shared by the stroke's channels (on the stack when
        // small); eight spare slots let short runs be zeroed with one fixed-size store.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: n + 8) { scratch in
            do throws(PageFormatError) {
                decoded = try decodeChannels(n, channels, &bits, start: start, scratch: scratch.baseAddress!)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }

        let used = (bits.position + 7) / 8
        let padding = used * 8 - bits.position
        if padding > 0 {
            let last = buffer[used - 1]
            guard last >> UInt8(8 - padding) == 0 else {
                throw .invalidField(offset: start + used - 1, "padding bits after the samples are not zero")
            }
        }
        try reader.skip(used)
        return decoded
    }

    /// Decodes the five sample channels and the optional ones.
    static func decodeChannels(_ n: Int, _ channels: OptionalChannels, _ bits: inout BitReader, start: Int,
                               scratch: UnsafeMutablePointer<UInt32>) throws(PageFormatError)
        -> (samples: [Sample], channels: [[UInt16]]) {
        var failure: PageFormatError?
        let samples = [Sample](unsafeUninitializedCapacity: n) { storage, initialized in
            let base = UnsafeMutableRawPointer(storage.baseAddress!)
            do throws(PageFormatError) {
                try decodeChannel(n, scratch, F.x, &bits, start: start, into: FieldPointer<UInt32>(base: base + xOffset, stride: sampleStride))
                try decodeChannel(n, scratch, F.y, &bits, start: start, into: FieldPointer<UInt32>(base: base + yOffset, stride: sampleStride))
                try decodeChannel(n, scratch, F.radius, &bits, start: start, into: FieldPointer<UInt16>(base: base + radiusOffset, stride: sampleStride))
                try decodeChannel(n, scratch, F.pressure, &bits, start: start, into: FieldPointer<UInt16>(base: base + pressureOffset, stride: sampleStride))
                try decodeChannel(n, scratch, F.time, &bits, start: start, into: FieldPointer<UInt32>(base: base + timeOffset, stride: sampleStride))
                initialized = n
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }

        var optional: [[UInt16]] = []
        for _ in 0..<channels.rawValue.nonzeroBitCount {
            let values = [UInt16](unsafeUninitializedCapacity: n) { storage, initialized in
                do throws(PageFormatError) {
                    try decodeChannel(n, scratch, F.optional, &bits, start: start,
                                      into: FieldPointer<UInt16>(base: UnsafeMutableRawPointer(storage.baseAddress!), stride: 2))
                    initialized = n
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            optional.append(values)
        }
        return (samples, optional)
    }

    /// Decodes one channel of `n` values into `out`.
    static func decodeChannel<W>(_ n: Int, _ scratch: UnsafeMutablePointer<UInt32>, _ spec: F.Channel,
                                 _ bits: inout BitReader, start: Int,
                                 into out: FieldPointer<W>) throws(PageFormatError) {
        guard let firstCode = bits.readExpGolomb(order: spec.firstOrder) else {
            throw .invalidField(offset: start + bits.position / 8, "a channel's first value does not fit 32 bits")
        }
        let v = spec.signed ? UInt32(bitPattern: F.unzigzag(firstCode)) : firstCode
        var seen = v
        if n == 1 {
            out.store(v, at: 0)
        } else if bits.read(bits: 1) == 0 {
            for i in 0..<n { out.store(v, at: i) }
        } else {
            let predictor = Int(bits.read(bits: 2))
            let runs = bits.read(bits: 1) == 1
            let meanIndex = Int(bits.read(bits: 2))
            var scale: UInt32 = 1
            if bits.read(bits: 1) == 1 {
                guard let s = bits.readExpGolomb(order: 0), s <= UInt32.max - 2 else {
                    throw .invalidField(offset: start + bits.position / 8, "a channel's scale does not fit 32 bits")
                }
                scale = s + 2
            }
            var slope: Int64 = 0, phase: Int64 = 0
            if predictor == F.linePredictor {
                guard let code = bits.readExpGolomb(order: F.slopeOrder) else {
                    throw .invalidField(offset: start + bits.position / 8, "a channel's slope does not fit 32 bits")
                }
                slope = Int64(F.unzigzag(code))
                phase = Int64(bits.read(bits: F.phaseBits))
            }
            out.store(v, at: 0)
            var state = ChannelState(value: v, scale: Int32(truncatingIfNeeded: scale), predictor: predictor,
                                     slope: slope, phase: phase)
            if runs {
                guard decodeRuns(n, scratch, &state, F.initialMean(meanIndex), &bits, out) else {
                    throw .invalidField(offset: start + bits.position / 8, "a run of equal residuals is longer than the samples left")
                }
            } else {
                decodeRice(n, &state, F.initialMean(meanIndex), &bits, out)
            }
            seen = state.seen
        }
        if bits.isOverrun {
            throw .truncated(offset: start + bits.byteCount, needed: (bits.position - bits.bitCapacity + 7) / 8, available: 0)
        }
        if spec.is16Bit && seen > 0xFFFF {
            throw .invalidField(offset: start, "a 16-bit channel decodes to a value above 65535")
        }
    }

    /// The reconstruction state of a channel: its last value and its predictor.
    struct ChannelState {
        var value: UInt32
        var scale: Int32
        var predictor: Int
        /// Whether the running mean of deltas predicts the next delta (predictors 1 and 2).
        var predicts: Bool
        /// Whether values are predicted on the line from the first value (predictor 3).
        var line: Bool
        var origin: UInt32
        var slope: Int64
        var phase: Int64
        /// The running mean of past deltas in 1/16 (the predictor's guess), once `index` >= 2.
        var mean: Int64 = 0
        var index = 1
        /// Every value ORed together, to check a 16-bit channel's range once at the end.
        var seen: UInt32 = 0

        init(value: UInt32, scale: Int32, predictor: Int, slope: Int64, phase: Int64) {
            self.value = value
            self.scale = scale
            self.predictor = predictor
            self.predicts = predictor == 1 || predictor == 2
            self.line = predictor == F.linePredictor
            self.origin = value
            self.slope = slope
            self.phase = phase
            self.seen = value
        }

        /// The line's value at sample `i`.
        @inline(__always) func onLine(_ i: Int) -> UInt32 {
            origin &+ UInt32(truncatingIfNeeded: (Int64(i) &* slope &+ phase) &>> F.slopeShift)
        }

        /// Applies the residual (zigzagged) `u` and stores the next value.
        @inline(__always) mutating func apply<W>(_ u: UInt32, _ out: FieldPointer<W>) {
            if line {
                value = onLine(index) &+ UInt32(bitPattern: F.unzigzag(u) &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: index)
                index &+= 1
                return
            }
            var d = F.unzigzag(u)
            if predicts {
                if index >= 2 {
                    d = d &+ F.predictedDelta(mean)
                    mean = F.nextDeltaMean(mean, d, predictor: predictor)
                } else {
                    mean = Int64(d) &<< 4
                }
            }
            value = value &+ UInt32(bitPattern: d &* scale)
            if W.bitWidth == 16 { seen |= value }
            out.store(value, at: index)
            index &+= 1
        }
    }

    /// Reads one Rice-coded value with parameter `k`.
    @inline(__always) static func readRice(_ k: Int, _ bits: inout BitReader) -> UInt32 {
        bits.refill()
        let word = bits.bits
        let q = word.trailingZeroBitCount
        if _fastPath(q < F.escapeLength) {
            let low = (word &>> UInt64(q &+ 1)) & ((1 &<< UInt64(k)) &- 1)
            bits.consume(q &+ 1 &+ k)
            return UInt32(truncatingIfNeeded: (UInt64(q) &<< UInt64(k)) | low)
        }
        bits.consume(F.escapeLength)
        return bits.read(bits: 32)
    }

    static func decodeRice<W>(_ n: Int, _ state: inout ChannelState, _ initialMean: Int64,
                              _ reader: inout BitReader, _ out: FieldPointer<W>) {
        // Locals, not struct fields, so the loop state stays in registers.
        var bits = reader
        var mean = F.RiceMean(initialMean)
        // The first residual seeds the predictor; the loops after it run without that test.
        let first = readRice(mean.k, &bits)
        mean.update(first)
        state.apply(first, out)
        var value = state.value, seen = state.seen, deltaMean = state.mean
        let scale = state.scale
        var i = state.index
        if state.line {
            while i < n {
                let u = readRice(mean.k, &bits)
                mean.update(u)
                value = state.onLine(i) &+ UInt32(bitPattern: F.unzigzag(u) &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
                i &+= 1
            }
        } else if state.predictor == 1 {
            // Delta of delta: the state is the previous delta.
            var previous = F.predictedDelta(deltaMean)
            while i < n {
                let u = readRice(mean.k, &bits)
                mean.update(u)
                previous = F.unzigzag(u) &+ previous
                value = value &+ UInt32(bitPattern: previous &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
                i &+= 1
            }
            deltaMean = Int64(previous) &<< 4
        } else if state.predicts {
            while i < n {
                let u = readRice(mean.k, &bits)
                mean.update(u)
                let d = F.unzigzag(u) &+ F.predictedDelta(deltaMean)
                deltaMean = F.nextDeltaMean(deltaMean, d, predictor: 2)
                value = value &+ UInt32(bitPattern: d &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
                i &+= 1
            }
        } else {
            while i < n {
                let u = readRice(mean.k, &bits)
                mean.update(u)
                value = value &+ UInt32(bitPattern: F.unzigzag(u) &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
                i &+= 1
            }
        }
        state.value = value
        state.seen = seen
        state.mean = deltaMean
        state.index = i
        reader = bits
    }

    /// Coder 1 in two passes: the runs and values become residuals in `e` (n + 8 slots), then one
    /// tight loop per predictor rebuilds the values. Returns false when a run is longer than the
    /// samples left.
    static func decodeRuns<W>(_ n: Int, _ e: UnsafeMutablePointer<UInt32>, _ state: inout ChannelState,
                              _ initialMean: Int64, _ reader: inout BitReader, _ out: FieldPointer<W>) -> Bool {
        guard expandRuns(n, initialMean, &reader, e) else { return false }
        rebuild(n, &state, e, out)
        return true
    }

    /// Reads coder 1's runs and values into residuals e[1..<n].
    static func expandRuns(_ n: Int, _ initialMean: Int64, _ reader: inout BitReader,
                           _ e: UnsafeMutablePointer<UInt32>) -> Bool {
        var bits = reader
        defer { reader = bits }
        var mean = F.RiceMean(initialMean)
        var runMean = F.RiceMean(F.initialRunMean)
        var i = 1
        while i < n {
            let run = readRice(runMean.k, &bits)
            runMean.update(run)
            guard Int(run) <= n &- i else { return false }
            if run <= 8 {
                // A fixed-size store instead of a loop whose exit would mispredict.
                UnsafeMutableRawPointer(e + i).storeBytes(of: SIMD8<UInt32>(repeating: 0), as: SIMD8<UInt32>.self)
                i &+= Int(run)
            } else {
                let end = i &+ Int(run)
                while i < end { e[i] = 0; i &+= 1 }
            }
            if i == n { break }
            let coded = readRice(mean.k, &bits)
            mean.update(coded)
            e[i] = coded &+ 1
            i &+= 1
        }
        return true
    }

    /// Rebuilds values 1..<n from residuals e[1..<n].
    static func rebuild<W>(_ n: Int, _ state: inout ChannelState, _ e: UnsafeMutablePointer<UInt32>,
                           _ out: FieldPointer<W>) {
        let scale = state.scale
        var value = state.value, seen = state.seen
        if state.line {
            for i in 1..<n {
                value = state.onLine(i) &+ UInt32(bitPattern: F.unzigzag(e[i]) &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
            }
        } else if state.predictor == 0 {
            for i in 1..<n {
                value = value &+ UInt32(bitPattern: F.unzigzag(e[i]) &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
            }
        } else if state.predictor == 1 {
            var d: Int32 = 0
            for i in 1..<n {
                d = d &+ F.unzigzag(e[i])
                value = value &+ UInt32(bitPattern: d &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
            }
        } else {
            var d = F.unzigzag(e[1])
            var mean = Int64(d) &<< 4
            value = value &+ UInt32(bitPattern: d &* scale)
            if W.bitWidth == 16 { seen |= value }
            out.store(value, at: 1)
            for i in 2..<max(2, n) {
                d = F.unzigzag(e[i]) &+ F.predictedDelta(mean)
                mean = F.nextDeltaMean(mean, d, predictor: 2)
                value = value &+ UInt32(bitPattern: d &* scale)
                if W.bitWidth == 16 { seen |= value }
                out.store(value, at: i)
            }
        }
        state.value = value
        state.seen = seen
        state.index = n
    }
}
