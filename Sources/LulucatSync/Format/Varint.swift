// LEB128 varints and fixed fields for the sync formats, read with bounds checked everywhere:
// blobs come from other devices through a server.

import Foundation

struct SyncWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }
    mutating func varint(_ v: Int) { varint(UInt64(v)) }
    mutating func uuid(_ id: UUID) { withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) } }
    mutating func uint16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    mutating func uint64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
    mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }
}

struct SyncReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    /// A logical clock: a varint no greater than `Stamp.maxClock` (a larger one is refused where it
    /// is decoded, so no clock arithmetic can overflow).
    mutating func clock() throws(SyncFormatError) -> UInt64 {
        let c = try varint()
        guard c <= Stamp.maxClock else { throw .invalid(offset, "clock \(c) beyond \(Stamp.maxClock)") }
        return c
    }

    mutating func varint() throws(SyncFormatError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw .truncated(offset) }
            let b = bytes[offset]
            offset += 1
            guard shift < 64, !(shift == 63 && b > 1) else { throw .invalid(offset, "varint too long") }
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// A count, refused when larger than `limit` or than what is left at `minBytes` each.
    mutating func count(limit: Int, minBytes: Int = 1) throws(SyncFormatError) -> Int {
        let v = try varint()
        guard v <= UInt64(limit), Int(v) * minBytes <= remaining else { throw .invalid(offset, "count \(v) too large") }
        return Int(v)
    }

    mutating func uuid() throws(SyncFormatError) -> UUID {
        guard remaining >= 16 else { throw .truncated(offset) }
        let b = bytes
        let o = offset
        offset += 16
        return UUID(uuid: (b[o], b[o+1], b[o+2], b[o+3], b[o+4], b[o+5], b[o+6], b[o+7],
                           b[o+8], b[o+9], b[o+10], b[o+11], b[o+12], b[o+13], b[o+14], b[o+15]))
    }

    mutating func uint16() throws(SyncFormatError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated(offset) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func uint64() throws(SyncFormatError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated(offset) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    mutating func raw(_ n: Int) throws(SyncFormatError) -> ArraySlice<UInt8> {
        guard n >= 0, remaining >= n else { throw .truncated(offset) }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }
}

/// A sync file (page blob, page state, head) that cannot be read.
package enum SyncFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(Int)
    case invalid(Int, String)
    case newerVersion(Int)
    case badMagic

    package var description: String {
        switch self {
        case .truncated(let o): return "ends early at byte \(o)"
        case .invalid(let o, let m): return "invalid at byte \(o): \(m)"
        case .newerVersion(let v): return "format version \(v) is newer than this version reads"
        case .badMagic: return "not a sync file (wrong magic)"
        }
    }
}

/// A stable 64-bit digest (FNV-1a) of bytes: the same on every device and run.
func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
    return h
}
