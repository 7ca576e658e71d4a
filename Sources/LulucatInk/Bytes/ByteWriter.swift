// Appends little-endian integers, varints and raw bytes to a growing buffer.

import Foundation

/// A growing byte buffer with append-only verbs (`write*`), in the spirit of NIO's `ByteBuffer`.
package struct ByteWriter: Sendable {
    package var bytes: [UInt8]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }
    package mutating func reserve(_ extra: Int) { bytes.reserveCapacity(bytes.count + extra) }

    @inlinable package mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }

    @inlinable package mutating func writeUInt16(_ v: UInt16) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }
    @inlinable package mutating func writeUInt32(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }
    @inlinable package mutating func writeInt32(_ v: Int32) { writeUInt32(UInt32(bitPattern: v)) }
    @inlinable package mutating func writeUInt64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Unsigned LEB128: seven bits a byte, low bits first, high bit set on every byte but the last.
    @inlinable package mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }
    @inlinable package mutating func writeVarint(_ value: Int) { writeVarint(UInt64(value)) }

    package mutating func writeBytes(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    package mutating func writeBytes(_ data: Data) { data.withUnsafeBytes { bytes.append(contentsOf: $0) } }
    package mutating func writeBytes(_ array: [UInt8]) { bytes.append(contentsOf: array) }

    package mutating func writeUUID(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites four bytes at `offset` (a placeholder written earlier) with `v`, little-endian.
    package mutating func setUInt32(_ v: UInt32, at offset: Int) {
        withUnsafeBytes(of: v.littleEndian) { src in
            for i in 0..<4 { bytes[offset + i] = src[i] }
        }
    }

    /// Gives the bytes' storage to `body` to fill `count` new bytes at the end directly.
    package mutating func append(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { all in
            body(UnsafeMutableRawBufferPointer(rebasing: all[start..<start + count]))
        }
    }

    package var data: Data { Data(bytes) }
}
