// The compact decoder: one tight loop per channel writing straight into the samples' fields.

/// Decodes one stroke's samples from the compact bitstream.
enum CompactStrokeDecoder {
    typealias F = CompactFormat

    /// Where decoded values of one channel go: a field of a strided record, 16 or 32 bits wide.
    struct FieldPointer {
        var base: UnsafeMutableRawPointer
        var stride: Int
        var is16Bit: Bool
        @inline(__always) func store(_ v: UInt32, at i: Int) {
            if is16Bit {
                base.storeBytes(of: UInt16(truncatingIfNeeded: v), toByteOffset: i &* stride, as: UInt16.self)
            } else {
                base.storeBytes(of: v, toByteOffset: i &* stride, as: UInt32.self)
            }
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
        var failure: PageFormatError?

        let samples = [Sample](unsafeUninitializedCapacity: n) { storage, initialized in
            let base = UnsafeMutableRawPointer(storage.baseAddress!)
            do throws(PageFormatError) {
                let fields: [(Int, F.Channel)] = [(xOffset, F.x), (yOffset, F.y), (radiusOffset, F.radius),
                                                  (pressureOffset, F.pressure), (timeOffset, F.time)]
                for (offset, spec) in fields {
                    try decodeChannel(n, spec, &bits, start: start,
                                      into: FieldPointer(base: base + offset, stride: sampleStride, is16Bit: spec.is16Bit))
                }
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
                    try decodeChannel(n, F.optional, &bits, start: start,
                                      into: FieldPointer(base: UnsafeMutableRawPointer(storage.baseAddress!), stride: 2, is16Bit: true))
                    initialized = n
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            optional.append(values)
        }

        let used = (bits.position + 7) / 8
        let padding = used * 8 - bits.position
        if padding > 0 {
            let last = buffer[used - 1]
            guard last >> UInt8(8 - padding) == 0 else {
                throw .invalidField(offset: start + used - 1, "padding bits after the samples are not zero")
            }
        }
        try reader.skip(used)
        return (samples, optional)
    }

    /// Decodes one channel of `n` values into `out`.
    @inline(__always)
    static func decodeChannel(_ n: Int, _ spec: F.Channel, _ bits: inout BitReader, start: Int,
                              into out: FieldPointer) throws(PageFormatError) {
        guard let firstCode = bits.readExpGolomb(order: spec.firstOrder) else {
            throw .invalidField(offset: start + bits.position / 8, "a channel's first value does not fit 32 bits")
        }
        var v = spec.signed ? UInt32(bitPattern: F.unzigzag(firstCode)) : firstCode
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
            out.store(v, at: 0)
            var state = ChannelState(value: v, scale: Int32(truncatingIfNeeded: scale),
                                     shift: Int64(F.meanShifts[predictor]), predicts: predictor != 0)
            if runs {
                guard decodeRuns(n, &state, F.initialMean(meanIndex), &bits, out) else {
                    throw .invalidField(offset: start + bits.position / 8, "a run of equal residuals is longer than the samples left")
                }
            } else {
                decodeRice(n, &state, F.initialMean(meanIndex), &bits, out)
            }
            v = state.value
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
        var shift: Int64
        var predicts: Bool
        var mean: Int64 = 0
        var index = 1
        /// Every value ORed together, to check a 16-bit channel's range once at the end.
        var seen: UInt32 = 0

        init(value: UInt32, scale: Int32, shift: Int64, predicts: Bool) {
            self.value = value
            self.scale = scale
            self.shift = shift
            self.predicts = predicts
            self.seen = value
        }

        /// Applies the residual (zigzagged) `u` and stores the next value.
        @inline(__always) mutating func apply(_ u: UInt32, _ out: FieldPointer) {
            var d = F.unzigzag(u)
            if predicts {
                if index >= 2 { d = d &+ Int32(truncatingIfNeeded: (mean &+ 8) >> 4) }
                mean = index == 1 ? Int64(d) << 4 : mean &+ (((Int64(d) << 4) &- mean) >> shift)
            }
            value = value &+ UInt32(bitPattern: d &* scale)
            seen |= value
            out.store(value, at: index)
            index &+= 1
        }
    }

    /// Reads one Rice-coded value with parameter `k`.
    @inline(__always) static func readRice(_ k: Int, _ bits: inout BitReader) -> UInt32 {
        let word = bits.peek()
        let q = word.trailingZeroBitCount
        if q < F.escapeLength {
            let low = (word &>> UInt64(q &+ 1)) & ((1 &<< UInt64(k)) &- 1)
            bits.skip(q &+ 1 &+ k)
            return UInt32(truncatingIfNeeded: (UInt64(q) &<< UInt64(k)) | low)
        }
        bits.skip(F.escapeLength)
        return bits.read(bits: 32)
    }

    static func decodeRice(_ n: Int, _ state: inout ChannelState, _ initialMean: Int64,
                           _ bits: inout BitReader, _ out: FieldPointer) {
        var mean = initialMean
        for _ in 1..<n {
            let u = readRice(F.riceParameter(mean), &bits)
            F.updateMean(&mean, u)
            state.apply(u, out)
        }
    }

    /// Returns false when a run is longer than the samples left.
    static func decodeRuns(_ n: Int, _ state: inout ChannelState, _ initialMean: Int64,
                           _ bits: inout BitReader, _ out: FieldPointer) -> Bool {
        var mean = initialMean
        var runMean = F.initialRunMean
        while state.index < n {
            let run = readRice(F.riceParameter(runMean), &bits)
            F.updateMean(&runMean, run)
            guard Int(run) <= n - state.index else { return false }
            for _ in 0..<Int(run) { state.apply(0, out) }
            if state.index == n { break }
            let u = readRice(F.riceParameter(mean), &bits)
            F.updateMean(&mean, u)
            state.apply(u &+ 1, out)
            if bits.isOverrun { return true }
        }
        return true
    }
}
