// The zip constants we read and write (APPNOTE.TXT 6.3), in one place, and little-endian field access.

import Foundation

enum ZipFormat {
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let centralHeaderSignature: UInt32 = 0x0201_4B50
    static let endOfCentralDirectorySignature: UInt32 = 0x0605_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50

    static let localHeaderSize = 30
    static let centralHeaderSize = 46
    static let endRecordSize = 22
    /// The end record may be followed by a comment of at most 65,535 bytes.
    static let maxCommentSize = 0xFFFF

    static let methodStored: UInt16 = 0
    static let methodDeflate: UInt16 = 8

    /// General purpose flag bits.
    static let flagEncrypted: UInt16 = 1 << 0
    static let flagDataDescriptor: UInt16 = 1 << 3
    static let flagStrongEncryption: UInt16 = 1 << 6
    static let flagUTF8: UInt16 = 1 << 11
    static let flagMaskedHeaders: UInt16 = 1 << 13

    /// "Version made by": host 3 (Unix) in the high byte, spec 2.0 in the low byte, so readers
    /// interpret the external attributes as a Unix mode.
    static let versionMadeBy: UInt16 = (3 << 8) | 20
    static let versionNeededStored: UInt16 = 10
    static let versionNeededDeflate: UInt16 = 20

    /// Unix file type bits in the high 16 bits of the external attributes.
    static let unixTypeMask: UInt32 = 0o170000
    static let unixRegular: UInt32 = 0o100000
    static let unixDirectory: UInt32 = 0o040000
    static let unixSymlink: UInt32 = 0o120000
    static let regularFileAttributes: UInt32 = (0o100644 << 16)
    static let directoryAttributes: UInt32 = (0o040755 << 16) | 0x10

    /// Sizes and offsets at or above this are zip64 markers (or need zip64).
    static let zip32Limit: UInt64 = 0xFFFF_FFFF
    static let maxEntries = 0xFFFF
}

/// A timestamp in MS-DOS form, as the zip headers store it (local time, 2-second resolution).
package struct ZipTimestamp: Hashable, Sendable {
    package var time: UInt16
    package var date: UInt16

    package init(time: UInt16, date: UInt16) { self.time = time; self.date = date }

    /// 1980-01-01 00:00:00, the earliest DOS date: what deterministic archives carry.
    package static let fixed = ZipTimestamp(time: 0, date: (0 << 9) | (1 << 5) | 1)

    /// The timestamp for a calendar date and time (years 1980...2107; others are clamped).
    package init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        let y = UInt16(min(max(year, 1980), 2107) - 1980)
        let mo = UInt16(min(max(month, 1), 12)), d = UInt16(min(max(day, 1), 31))
        let h = UInt16(min(max(hour, 0), 23)), mi = UInt16(min(max(minute, 0), 59))
        let s = UInt16(min(max(second, 0), 59))
        self.init(time: (h << 11) | (mi << 5) | (s / 2), date: (y << 9) | (mo << 5) | d)
    }
}

extension UnsafeRawBufferPointer {
    /// Little-endian field reads; the caller has checked `offset + size <= count`.
    @inline(__always) func le16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func le32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

/// `withUnsafeBytes` variants that keep a typed error (Foundation's only rethrow `any Error`).
extension Data {
    func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try result.get()
    }
    mutating func withMutableRawBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try result.get()
    }
}

extension Array where Element == UInt8 {
    func withRawBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try result.get()
    }
}
