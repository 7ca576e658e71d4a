// Builds zip bytes field by field, without any of the writer's checks, to make hostile archives.

import Foundation
@testable import LulucatInterchange
import LulucatInk

/// One entry exactly as it will be written; every field can be set to a lie.
struct RawEntry {
    var name: String
    /// The bytes stored after the local header (already compressed for method 8).
    var payload: [UInt8]
    var method: UInt16 = 0
    var crc: UInt32
    var uncompressedSize: UInt32
    var flags: UInt16 = 0x0800
    var madeBy: UInt16 = (3 << 8) | 20
    var externalAttributes: UInt32 = 0o100644 << 16
    /// A different name in the local header (a mismatch test).
    var localName: String? = nil
    /// Overrides the local header offset in the central directory.
    var offsetOverride: UInt32? = nil
    /// Flag bit 3: zero CRC and sizes in the local header, a data descriptor after the data
    /// (what Finder and streaming writers produce).
    var dataDescriptor = false

    /// A stored entry with honest fields.
    static func stored(_ name: String, _ contents: [UInt8]) -> RawEntry {
        RawEntry(name: name, payload: contents, crc: contents.withUnsafeBytes { Deflate.crc32($0) },
                 uncompressedSize: UInt32(contents.count))
    }

    /// A deflated entry with honest fields.
    static func deflated(_ name: String, _ contents: [UInt8]) -> RawEntry {
        let payload = try! contents.withUnsafeBytes { try Deflate.compress($0, level: 6) }
        return RawEntry(name: name, payload: payload, method: 8, crc: contents.withUnsafeBytes { Deflate.crc32($0) },
                        uncompressedSize: UInt32(contents.count))
    }
}

enum RawZip {
    static func build(_ entries: [RawEntry], endOverride: ((inout ByteWriter) -> Void)? = nil) -> Data {
        var w = ByteWriter()
        var offsets: [UInt32] = []
        for e in entries {
            offsets.append(UInt32(w.count))
            let name = Array((e.localName ?? e.name).utf8)
            w.writeUInt32(0x0403_4B50)
            w.writeUInt16(20)
            w.writeUInt16(e.flags | (e.dataDescriptor ? 8 : 0))
            w.writeUInt16(e.method)
            w.writeUInt16(0); w.writeUInt16(0x21)
            w.writeUInt32(e.dataDescriptor ? 0 : e.crc)
            w.writeUInt32(e.dataDescriptor ? 0 : UInt32(e.payload.count))
            w.writeUInt32(e.dataDescriptor ? 0 : e.uncompressedSize)
            w.writeUInt16(UInt16(name.count))
            w.writeUInt16(0)
            w.writeBytes(name)
            w.writeBytes(e.payload)
            if e.dataDescriptor {
                w.writeUInt32(0x0807_4B50)
                w.writeUInt32(e.crc)
                w.writeUInt32(UInt32(e.payload.count))
                w.writeUInt32(e.uncompressedSize)
            }
        }
        let directoryStart = w.count
        for (e, offset) in zip(entries, offsets) {
            let name = Array(e.name.utf8)
            w.writeUInt32(0x0201_4B50)
            w.writeUInt16(e.madeBy)
            w.writeUInt16(20)
            w.writeUInt16(e.flags | (e.dataDescriptor ? 8 : 0))
            w.writeUInt16(e.method)
            w.writeUInt16(0); w.writeUInt16(0x21)
            w.writeUInt32(e.crc)
            w.writeUInt32(UInt32(e.payload.count))
            w.writeUInt32(e.uncompressedSize)
            w.writeUInt16(UInt16(name.count))
            w.writeUInt16(0); w.writeUInt16(0); w.writeUInt16(0); w.writeUInt16(0)
            w.writeUInt32(e.externalAttributes)
            w.writeUInt32(e.offsetOverride ?? offset)
            w.writeBytes(name)
        }
        let directorySize = w.count - directoryStart
        w.writeUInt32(0x0605_4B50)
        w.writeUInt16(0); w.writeUInt16(0)
        w.writeUInt16(UInt16(entries.count)); w.writeUInt16(UInt16(entries.count))
        w.writeUInt32(UInt32(directorySize))
        w.writeUInt32(UInt32(directoryStart))
        w.writeUInt16(0)
        endOverride?(&w)
        return w.data
    }
}

/// Runs `body` and returns the `ArchiveError` it threw, or nil if it threw nothing.
func archiveError(_ body: () throws -> Void) -> ArchiveError? {
    do { try body() } catch let e as ArchiveError { return e } catch { return nil }
    return nil
}
