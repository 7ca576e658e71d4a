// CRC32C (Castagnoli): the checksum of every page file and journal frame. Portable slicing-by-8
// in Swift, and the processor's CRC instructions where it has them (same results, tested).

import CCRC32C

/// CRC-32C (polynomial 0x1EDC6F41, reflected 0x82F63B78), as in iSCSI (RFC 3720) and ext4.
package enum CRC32C {
    static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()
    /// The eight tables flattened, so the hot loop indexes one array.
    static let flat: [UInt32] = tables.flatMap { $0 }

    /// Whether the processor's CRC32C instructions are used.
    package static let usesHardware: Bool = lulucat_crc32c_hw_available() != 0

    /// The CRC32C of `bytes`, continuing from `crc` (the CRC of the bytes before them; 0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard usesHardware, let base = bytes.baseAddress else { return software(bytes, continuing: crc) }
        return lulucat_crc32c_hw(crc, base, bytes.count)
    }

    /// The portable slicing-by-8 CRC32C, the reference for the hardware path.
    package static func software(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        let n = bytes.count
        guard n > 0, let base = bytes.baseAddress else { return crc }
        var i = 0
        flat.withUnsafeBufferPointer { t in
            while i + 8 <= n {
                let lo = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ c
                let hi = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        return ~c
    }

    package static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    // MARK: Combining

    /// The CRC32C of `a ‖ b` from the CRC32C of `a`, the CRC32C of `b` and the length of `b`, in
    /// O(log length) steps, without reading either (as zlib's `crc32_combine`). A page file saved
    /// with strokes appended checksums the new bytes only, not the ones it copies.
    package static func combine(_ crcA: UInt32, _ crcB: UInt32, lengthB: Int) -> UInt32 {
        shift(crcA, by: lengthB) ^ crcB
    }

    /// The CRC32C of `b` alone from the CRC32C of `a ‖ b`, the CRC32C of `a` and the length of
    /// `b` (the inverse of `combine` in its second argument).
    package static func suffix(of crcAB: UInt32, prefix crcA: UInt32, lengthB: Int) -> UInt32 {
        crcAB ^ shift(crcA, by: lengthB)
    }

    /// `crc` times x^(8 × bytes) modulo the polynomial: what the CRC register of a message
    /// becomes when `bytes` zero bytes follow it, less what those zeros add by themselves.
    static func shift(_ crc: UInt32, by bytes: Int) -> UInt32 {
        precondition(bytes >= 0, "negative length")
        var n = UInt64(bytes), k = 3  // x^(8n) = x^(n × 2^3)
        var p: UInt32 = 1 << 31  // x^0 (reflected)
        while n != 0 {
            if n & 1 != 0 { p = multiply(powers[k & 63], p) }
            n >>= 1
            k += 1
        }
        return multiply(p, crc)
    }

    /// a × b modulo the polynomial, both reflected (bit 31 is x^0).
    static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var m: UInt32 = 1 << 31, p: UInt32 = 0, b = b
        while m != 0 {
            if a & m != 0 { p ^= b }
            m >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ 0x82F6_3B78 : b >> 1
        }
        return p
    }

    /// x^(2^k) modulo the polynomial for k = 0 ..< 64 (reflected).
    static let powers: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 64)
        var p: UInt32 = 1 << 30  // x^1
        for k in 0..<64 {
            table[k] = p
            p = multiply(p, p)
        }
        return table
    }()
}
