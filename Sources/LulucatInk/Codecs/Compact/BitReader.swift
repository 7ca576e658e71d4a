// Reads the compact codec's bitstream (least-significant bit first) through a 64-bit bit buffer.

/// A cursor over a bitstream in borrowed bytes, with the next bits held in a 64-bit register.
/// After `refill()` at least 56 bits are buffered; bits past the end of the bytes read as zero and
/// `isOverrun` tells afterwards whether any were consumed, so decoder loops need no bounds check
/// per value, only one per channel.
struct BitReader {
    private let base: UnsafeRawPointer
    let byteCount: Int
    /// Buffered bits, the next one in bit 0.
    private var buffer: UInt64 = 0
    /// How many bits of `buffer` are valid.
    private var buffered = 0
    /// The next byte to move into the buffer (may pass `byteCount`: those bytes read as zero).
    private var next = 0
    /// The last (up to) eight bytes as a little-endian word, zero-padded, and where they start:
    /// near the end, refills shift this word instead of reading past the bytes.
    private let tail: UInt64
    private let tailStart: Int

    init(_ bytes: UnsafeRawBufferPointer) {
        // Empty bytes have no address; this one is never dereferenced, since byteCount is 0.
        base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!
        byteCount = bytes.count
        let start = max(0, bytes.count - 8)
        var word: UInt64 = 0
        if bytes.count > 0 {
            withUnsafeMutableBytes(of: &word) { w in
                w.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start...]))
            }
        }
        tailStart = start
        tail = UInt64(littleEndian: word)
    }

    /// Bits consumed so far.
    var position: Int { next * 8 - buffered }
    var bitCapacity: Int { byteCount * 8 }
    /// Whether bits beyond the end of the bytes were consumed.
    var isOverrun: Bool { position > byteCount * 8 }

    /// Tops the buffer up to at least 56 bits, branch-free apart from "near the end or not": a
    /// full buffer just takes no new bytes (after a refill `buffered` is 56...63, so the shift is
    /// never 64), where a test for "is it full" would be taken at random and mispredict.
    @inline(__always) mutating func refill() {
        let word: UInt64
        // Compared unsigned, so even a corrupted negative cursor could not pass as in bounds.
        if UInt(bitPattern: next &+ 8) <= UInt(bitPattern: byteCount) {
            word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: next, as: UInt64.self))
        } else {
            // Within the last eight bytes (next >= tailStart) or past them: zeros shift in.
            let skipped = next &- tailStart
            word = skipped >= 0 && skipped < 8 ? tail &>> UInt64(8 &* skipped) : 0
        }
        buffer |= word &<< UInt64(buffered)
        next &+= (63 &- buffered) &>> 3
        buffered |= 56
    }

    /// The buffered bits (call `refill` first).
    @inline(__always) var bits: UInt64 { buffer }

    /// Drops `n` buffered bits (`n` at most the bits buffered).
    @inline(__always) mutating func consume(_ n: Int) {
        buffer &>>= UInt64(n)
        buffered &-= n
    }

    /// Reads an `n`-bit field, `n` at most 32.
    @inline(__always) mutating func read(bits n: Int) -> UInt32 {
        refill()
        let v = UInt32(truncatingIfNeeded: buffer & ((1 &<< UInt64(n)) &- 1))
        consume(n)
        return v
    }

    /// Reads an Exp-Golomb code of order `k` (see `BitWriter.writeExpGolomb`); nil when its value
    /// does not fit 32 bits.
    mutating func readExpGolomb(order k: Int) -> UInt32? {
        refill()
        let z = buffer.trailingZeroBitCount
        guard z <= 32 else { return nil }
        consume(z + 1)
        let w = (UInt64(1) << UInt64(z)) | (z > 0 ? UInt64(read(bits: z)) : 0)
        let value = ((w - 1) << UInt64(k)) | (k > 0 ? UInt64(read(bits: k)) : 0)
        guard value <= UInt64(UInt32.max) else { return nil }
        return UInt32(value)
    }
}
