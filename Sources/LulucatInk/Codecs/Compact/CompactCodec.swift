// `compact`: the default sample codec on disk. Each channel of a stroke is predicted from its past,
// the residuals are zigzagged and written with an adaptive Rice code. Byte by byte in docs/page-format.md.

/// `compact`: lossless coding of a stroke's quantized samples, channel by channel.
///
/// Every channel (x, y, radius, pressure, time, then each present optional channel) is coded on
/// its own: the first value, then either a "constant" flag or a small header choosing a predictor
/// (delta, delta of delta, delta minus a running mean of deltas, or a line for evenly clocked
/// time), an optional common scale of the deltas, and a coder (adaptive Rice on every residual, or
/// adaptive Rice on runs of zero residuals and on the others). The Rice parameter follows a
/// running mean of recent residuals, so it needs no per-stroke table and adapts within a stroke
/// as the pen speeds up and slows down. The encoder picks the cheapest choice per channel by
/// counting bits. Byte by byte in docs/page-format.md.
///
/// Untrusted input: a stroke of N samples always codes to at least N bits, so the decoder rejects a
/// count above 8 times the bytes it has left before it allocates anything.
package enum CompactCodec: SampleCodec {
    package static func encode(_ stroke: Stroke, into writer: inout ByteWriter) {
        writer.writeBytes(CompactStrokeEncoder.encode(stroke))
    }

    package static func decode(count: Int, channels: OptionalChannels, from reader: inout ByteReader)
        throws(PageFormatError) -> (samples: [Sample], channels: [[UInt16]]) {
        try CompactStrokeDecoder.decode(count: count, channels: channels, from: &reader)
    }
}

/// The fixed parameters of the compact bitstream, shared by its encoder and decoder.
enum CompactFormat {
    /// A channel of samples as the codec sees it: 32-bit patterns, and how its first value is coded.
    struct Channel {
        /// Whether the first value is zigzagged (x and y are signed) before its Exp-Golomb code.
        var signed: Bool
        /// The order of the Exp-Golomb code of the first value.
        var firstOrder: Int
        /// Whether values must fit 16 bits (radius, pressure, optional channels).
        var is16Bit: Bool
    }

    static let x = Channel(signed: true, firstOrder: 10, is16Bit: false)
    static let y = Channel(signed: true, firstOrder: 10, is16Bit: false)
    static let radius = Channel(signed: false, firstOrder: 4, is16Bit: true)
    static let pressure = Channel(signed: false, firstOrder: 6, is16Bit: true)
    static let time = Channel(signed: false, firstOrder: 0, is16Bit: false)
    static let optional = Channel(signed: false, firstOrder: 8, is16Bit: true)

    /// Predictor codes: 0 predicts a delta of zero; 1 predicts the previous delta (delta of
    /// delta); 2 predicts a running mean of past deltas; 3 predicts the value on a line from the
    /// first value with a slope and phase in the header (an even clock, for time).
    static let linePredictor = 3
    /// The line's slope is in 1/2^slopeShift units per sample, rounded to nearest.
    static let slopeShift: Int64 = 12
    static let slopeHalf: Int64 = 1 << 11
    /// The line's phase: a 12-bit field added to i × slope before the shift.
    static let phaseBits = 12
    /// The order of the Exp-Golomb code of the zigzagged slope.
    static let slopeOrder = 12
    /// A unary quotient this long is an escape: the residual follows as 32 raw bits.
    static let escapeLength = 24
    /// The running mean of residuals (in 1/16) keeps 1 − 1/2^meanRate of itself at each value.
    static let meanRate: Int64 = 2
    /// The Rice parameter is the bit length of the running mean (in 1/16) shifted right by this.
    static let meanToParameterShift: Int64 = 5
    /// Initial running means (in 1/16) the 2-bit header field selects: 1, 4, 16, 64.
    static func initialMean(_ index: Int) -> Int64 { 16 << (2 * Int64(index)) }
    /// Initial running mean of zero-run lengths (in 1/16): 1.
    static let initialRunMean: Int64 = 16

    /// The adaptive state of a Rice code: a running mean (in 1/16) of the values coded so far,
    /// which sets the parameter of the next value.
    struct RiceMean {
        var mean: Int64
        @inline(__always) init(_ initial: Int64) { mean = initial }
        /// The Rice parameter of the next value.
        @inline(__always) var k: Int { CompactFormat.riceParameter(mean) }
        @inline(__always) mutating func update(_ u: UInt32) { CompactFormat.updateMean(&mean, u) }
    }

    @inline(__always) static func riceParameter(_ mean: Int64) -> Int {
        let m = UInt64(truncatingIfNeeded: mean &>> meanToParameterShift)
        return 64 &- m.leadingZeroBitCount
    }
    @inline(__always) static func updateMean(_ mean: inout Int64, _ u: UInt32) {
        // 3/4 of the old mean plus 1/4 of u (in 1/16: u × 4), floors taken separately: the
        // new value enters with one shift and one add, which keeps the decoder's chain short.
        mean = mean &- (mean &>> meanRate) &+ (Int64(u) &<< (4 &- meanRate))
    }
    /// The predictor's state (in 1/16) after delta `d`, for predictors 1 and 2: the delta itself,
    /// or 3/4 of the old mean plus 1/4 of the delta (floors taken separately, which keeps the
    /// decoder's dependency chain short).
    @inline(__always) static func nextDeltaMean(_ m: Int64, _ d: Int32, predictor: Int) -> Int64 {
        predictor == 1 ? Int64(d) &<< 4 : m &- (m &>> 2) &+ (Int64(d) &<< 2)
    }
    /// The delta predictors 1 and 2 guess from their state: the state rounded to a whole number.
    @inline(__always) static func predictedDelta(_ m: Int64) -> Int32 {
        Int32(truncatingIfNeeded: (m &+ 8) &>> 4)
    }

    @inline(__always) static func zigzag(_ r: Int32) -> UInt32 {
        UInt32(bitPattern: (r << 1) ^ (r >> 31))
    }
    @inline(__always) static func unzigzag(_ u: UInt32) -> Int32 {
        Int32(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }
    /// Bits of the Rice code of `u` with parameter `k`.
    @inline(__always) static func riceCost(_ u: UInt32, _ k: Int) -> Int {
        let q = Int(u &>> UInt32(truncatingIfNeeded: k))
        return q < escapeLength ? q &+ 1 &+ k : escapeLength + 32
    }
}
