// CRC32C (Castagnoli): the checksum of every page file and journal frame. Portable slicing-by-8
// in Swift, and the processor's CRC instructions where it has them (same results, tested).

import CCRC32C

/// CRC-32C (polynomial 0x1EDC6F41, reflected 0x82F63B78), as in iSCSI (RFC 3720) and ext4.
public enum CRC32C {
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
    public static let usesHardware: Bool = lulucat_crc32c_hw_available() != 0

    /// The CRC32C of `bytes`, continuing from `crc` (the CRC of the bytes before them; 0 to start).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard usesHardware, let base = bytes.baseAddress else { return software(bytes, continuing: crc) }
        return lulucat_crc32c_hw(crc, base, bytes.count)
    }

    /// The portable slicing-by-8 CRC32C, the reference for the hardware path.
    public static func software(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
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

    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }
}
