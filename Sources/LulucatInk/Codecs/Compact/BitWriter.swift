// Writes the compact codec's bitstream: fields packed least-significant bit first into bytes.

/// An append-only bit buffer. A field of `n` bits goes in low bit first, so a reader that loads
/// eight bytes little-endian and shifts finds it in the low bits of the word.
struct BitWriter {
    private(set) var bytes: [UInt8]
    /// Bits not yet moved to `bytes`, the oldest in the low bits.
    private var pending: UInt64 = 0
    private var pendingCount = 0

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Bits written so far.
    var bitCount: Int { bytes.count * 8 + pendingCount }

    /// Appends the low `n` bits of `value` (`n` at most 32; higher bits of `value` must be zero).
    @inline(__always) mutating func write(_ value: UInt64, bits n: Int) {
        pending |= value << UInt64(pendingCount)
        pendingCount += n
        if pendingCount >= 32 {
            let word = UInt32(truncatingIfNeeded: pending)
            withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
            pending >>= 32
            pendingCount -= 32
        }
    }

    /// Appends `n` zero bits (any count).
    mutating func writeZeros(_ n: Int) {
        var left = n
        while left > 0 {
            let step = min(left, 32)
            write(0, bits: step)
            left -= step
        }
    }

    /// Appends an Exp-Golomb code of order `k`: with w = (value >> k) + 1 of z + 1 significant
    /// bits, z zero bits, a one, the low z bits of w, then the low k bits of value.
    mutating func writeExpGolomb(_ value: UInt32, order k: Int) {
        let w = (UInt64(value) >> UInt64(k)) + 1
        let z = 63 - w.leadingZeroBitCount
        writeZeros(z)
        write(1, bits: 1)
        if z > 0 { write(w & ((1 << UInt64(z)) - 1), bits: z) }
        if k > 0 { write(UInt64(value) & ((1 << UInt64(k)) - 1), bits: k) }
    }

    /// Pads with zero bits to a byte boundary and returns the bytes.
    mutating func finish() -> [UInt8] {
        while pendingCount > 0 {
            bytes.append(UInt8(truncatingIfNeeded: pending))
            pending >>= 8
            pendingCount = max(0, pendingCount - 8)
        }
        pending = 0
        return bytes
    }
}
