// Reads little-endian integers, varints and slices from bytes, every read checked against the end.

import Foundation

/// A bounds-checked cursor over bytes. `read*` advances; every read past the end throws
/// `PageFormatError.truncated` with the offset where more bytes were needed.
///
/// It borrows its bytes, so it is lent only inside a closure: `ByteReader.reading(bytes) { r in … }`
/// gives a reader that cannot outlive the bytes' `withUnsafeBytes` (the closure does not escape).
/// The store's own modules also build readers over buffers they hold with the initializer. Package
/// access only: apps never read page bytes field by field.
package struct ByteReader {
    package let buffer: UnsafeRawBufferPointer
    package private(set) var offset: Int
    /// The offset of the first byte in the whole file, so errors name file offsets.
    package let base: Int

    package init(_ buffer: UnsafeRawBufferPointer, base: Int = 0) {
        self.buffer = buffer
        self.offset = 0
        self.base = base
    }

    /// Runs `body` with a reader over `bytes` (`[UInt8]`, `Data`, a slice); the reader is valid
    /// only inside `body`.
    package static func reading<T, E: Error>(_ bytes: some ContiguousBytes, base: Int = 0,
                                           _ body: (inout ByteReader) throws(E) -> T) throws(E) -> T {
        // `ContiguousBytes.withUnsafeBytes` rethrows untyped; the typed error is carried out of it.
        var result: Result<T, E>!
        bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw, base: base)
            do throws(E) { result = .success(try body(&reader)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    package var remaining: Int { buffer.count - offset }
    package var isAtEnd: Bool { offset == buffer.count }
    package var fileOffset: Int { base + offset }

    package mutating func need(_ n: Int) throws(PageFormatError) {
        if n < 0 || n > buffer.count - offset {
            throw PageFormatError.truncated(offset: base + offset, needed: n, available: buffer.count - offset)
        }
    }

    package mutating func readUInt8() throws(PageFormatError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return buffer[offset]
    }
    package mutating func readUInt16() throws(PageFormatError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    package mutating func readUInt32() throws(PageFormatError) -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    package mutating func readInt32() throws(PageFormatError) -> Int32 { Int32(bitPattern: try readUInt32()) }
    package mutating func readUInt64() throws(PageFormatError) -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Unsigned LEB128 of at most 10 bytes; an overlong or overflowing varint is an error.
    package mutating func readVarint() throws(PageFormatError) -> UInt64 {
        let start = base + offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readUInt8()
            if shift == 63 && byte > 1 {
                throw PageFormatError.invalidField(offset: start, "varint overflows 64 bits")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw PageFormatError.invalidField(offset: start, "varint longer than 10 bytes") }
        }
    }

    /// A varint that must be at most `limit`, as an Int (for counts and lengths).
    package mutating func readCount(limit: Int, _ what: @autoclosure () -> String) throws(PageFormatError) -> Int {
        let start = base + offset
        let v = try readVarint()
        guard v <= UInt64(limit) else {
            throw PageFormatError.invalidField(offset: start, "\(what()) \(v) exceeds the limit \(limit)")
        }
        return Int(v)
    }

    package mutating func readUUID() throws(PageFormatError) -> UUID {
        try need(16)
        defer { offset += 16 }
        return UUID.read(from: buffer, at: offset)
    }

    /// The next `count` bytes as a sub-reader (whose offsets still name file offsets).
    package mutating func readSlice(_ count: Int) throws(PageFormatError) -> ByteReader {
        try need(count)
        defer { offset += count }
        return ByteReader(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]), base: base + offset)
    }

    package mutating func readData(_ count: Int) throws(PageFormatError) -> Data {
        try need(count)
        defer { offset += count }
        return Data(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]))
    }

    package mutating func skip(_ count: Int) throws(PageFormatError) {
        try need(count)
        offset += count
    }
}
