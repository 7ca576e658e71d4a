// Reads the compact codec's bitstream (least-significant bit first) with 64-bit unaligned loads.

/// A cursor over a bitstream in borrowed bytes. `peek()` yields at least 57 valid bits at the
/// cursor; bits past the end of the bytes read as zero, and `isOverrun` tells afterwards whether
/// any of them were consumed. So a decoder loop never needs a bounds check per bit, only one check
/// per channel.
struct BitReader {
    let base: UnsafeRawPointer?
    let byteCount: Int
    /// Bits consumed so far.
    var position = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        base = buffer.baseAddress
        byteCount = buffer.count
    }

    var bitCapacity: Int { byteCount * 8 }
    /// Whether bits beyond the end of the bytes were consumed.
    var isOverrun: Bool { position > byteCount * 8 }

    /// The next 57 or more bits, the next one in bit 0.
    @inline(__always) func peek() -> UInt64 {
        let byte = position >> 3
        if byte + 8 <= byteCount, let base {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt64.self))
            return word >> UInt64(position & 7)
        }
        return slowPeek(byte)
    }

    /// `peek` near the end of the bytes: assembles what is left, zero-filled.
    @inline(never) func slowPeek(_ byte: Int) -> UInt64 {
        guard let base, byte < byteCount else { return 0 }
        var word: UInt64 = 0
        for i in 0..<min(8, byteCount - byte) {
            word |= UInt64(base.load(fromByteOffset: byte + i, as: UInt8.self)) << UInt64(8 * i)
        }
        return word >> UInt64(position & 7)
    }

    @inline(__always) mutating func skip(_ n: Int) { position += n }

    /// Reads an `n`-bit field, `n` at most 32.
    @inline(__always) mutating func read(bits n: Int) -> UInt32 {
        let v = UInt32(truncatingIfNeeded: peek() & ((1 << UInt64(n)) - 1))
        position += n
        return v
    }

    /// Reads an Exp-Golomb code of order `k` (see `BitWriter.writeExpGolomb`); nil when its value
    /// does not fit 32 bits.
    mutating func readExpGolomb(order k: Int) -> UInt32? {
        let z = min(peek().trailingZeroBitCount, 64)
        guard z <= 32 else { return nil }
        position += z + 1
        let w = (UInt64(1) << UInt64(z)) | (z > 0 ? UInt64(read(bits: z)) : 0)
        let value = ((w - 1) << UInt64(k)) | (k > 0 ? UInt64(read(bits: k)) : 0)
        guard value <= UInt64(UInt32.max) else { return nil }
        return UInt32(value)
    }
}
