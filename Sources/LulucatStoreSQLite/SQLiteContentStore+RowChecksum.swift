// The CRC32C every content row carries (schema version 2): SQLite checks none of its own pages, so
// without it a damaged byte of a stroke would read back as a different, valid-looking stroke.
// Byte by byte in docs/sqlite-engine.md §3.2; change both together.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

/// The `crc` column of `pages`, `strokes`, `images` and `unknown_elements`.
///
/// A row's `crc` is `CRC32C(fields) XOR CRC32C(z)`: the fields are every column but `z` (and
/// `crc`), in a fixed little-endian layout headed by a table tag; `z` is folded in separately so a
/// move or a renumbering updates the checksum from the old `z` alone, without reading the row's
/// samples again. Any change to one of the row's bytes (its values, its record header, its
/// overflow pages) changes the value read back or fails to read at all; a CRC32C misses such a
/// change with probability 2⁻³² at most.
enum RowChecksum {
    static let pageTag: UInt8 = 0x50      // "P"
    static let strokeTag: UInt8 = 0x53    // "S"
    static let imageTag: UInt8 = 0x49     // "I"
    static let unknownTag: UInt8 = 0x55   // "U"

    /// The part of a row's checksum that comes from its z.
    static func ofZ(_ z: Int64) -> UInt32 {
        withUnsafeBytes(of: UInt64(bitPattern: z).littleEndian) { CRC32C.checksum($0) }
    }

    /// The stored value for a row whose fields (without z) check to `fields`.
    static func stored(fields: UInt32, z: Int64) -> Int64 { Int64(fields ^ ofZ(z)) }

    /// The stored value after the row's z changes from `old` to `new`.
    static func movingZ(_ stored: UInt32, from old: Int64, to new: Int64) -> Int64 {
        Int64(stored ^ ofZ(old) ^ ofZ(new))
    }

    static func page(id: UUID, width: Int32, height: Int32) -> UInt32 {
        var w = ByteWriter(capacity: 25)
        w.writeUInt8(pageTag)
        w.writeUUID(id)
        w.writeInt32(width)
        w.writeInt32(height)
        return CRC32C.checksum(w.bytes)
    }

    /// A stroke row: the fixed fields, then the `samples` BLOB exactly as stored.
    static func stroke(page: UUID, id: UUID, tool: UInt8, rgba: UInt32, width: UInt16, channels: UInt8,
                       codec: UInt8, sampleCount: UInt32, samples: UnsafeRawBufferPointer) -> UInt32 {
        var w = ByteWriter(capacity: 46)
        w.writeUInt8(strokeTag)
        w.writeUUID(page)
        w.writeUUID(id)
        w.writeUInt8(tool)
        w.writeUInt32(rgba)
        w.writeUInt16(width)
        w.writeUInt8(channels)
        w.writeUInt8(codec)
        w.writeUInt32(sampleCount)
        return CRC32C.checksum(samples, continuing: CRC32C.checksum(w.bytes))
    }

    static func image(page: UUID, id: UUID, asset: UUID, frame: QuantizedRect, rotation: Int32) -> UInt32 {
        var w = ByteWriter(capacity: 69)
        w.writeUInt8(imageTag)
        w.writeUUID(page)
        w.writeUUID(id)
        w.writeUUID(asset)
        w.writeInt32(frame.x)
        w.writeInt32(frame.y)
        w.writeInt32(frame.width)
        w.writeInt32(frame.height)
        w.writeInt32(rotation)
        return CRC32C.checksum(w.bytes)
    }

    /// An unknown element row: its payload already begins with its element id.
    static func unknown(page: UUID, kind: UInt8, payload: UnsafeRawBufferPointer) -> UInt32 {
        var w = ByteWriter(capacity: 18)
        w.writeUInt8(unknownTag)
        w.writeUUID(page)
        w.writeUInt8(kind)
        return CRC32C.checksum(payload, continuing: CRC32C.checksum(w.bytes))
    }

    static func stroke(_ stroke: Stroke, page: UUID, codec: UInt8, samples: UnsafeRawBufferPointer) -> UInt32 {
        let c = stroke.ink.color
        return Self.stroke(page: page, id: stroke.id, tool: stroke.ink.tool.rawValue,
                           rgba: UInt32(c.r) << 24 | UInt32(c.g) << 16 | UInt32(c.b) << 8 | UInt32(c.a),
                           width: stroke.ink.width, channels: stroke.channels.rawValue, codec: codec,
                           sampleCount: UInt32(stroke.samples.count), samples: samples)
    }
}

extension SQLiteContentStore {
    /// Migration 1 -> 2, after the columns are added: every existing row gets its checksum, computed
    /// from the row as it is now (a version-1 file had none to check it against). Runs inside the
    /// migration's transaction. The values are read raw, exactly as the checks at read time will see
    /// them; a value of the wrong type is checksummed as its integer or byte form, and the read-time
    /// checks still refuse the row.
    func fillRowChecksums() throws {
        func each(_ select: String, _ update: String, _ checksum: (Statement) -> Int64) throws {
            let s = try connection.prepare(select)
            let u = try connection.prepare(update)
            while try s.step() {
                try u.bind(checksum(s), at: 1)
                try u.bind(s.int64(at: 0), at: 2)
                try u.run()
            }
        }
        func uuid(_ s: Statement, _ i: Int) -> UUID {
            s.withBlob(at: i) { raw in
                var bytes = [UInt8](raw.prefix(16)); bytes += [UInt8](repeating: 0, count: 16 - bytes.count)
                return bytes.withUnsafeBytes { UUID.read16($0) }
            }
        }
        try each("SELECT rowid, id, canvas_width, canvas_height FROM pages", "UPDATE pages SET crc = ?1 WHERE rowid = ?2") { s in
            // Pages have no z: their checksum is the fields' alone.
            Int64(RowChecksum.page(id: uuid(s, 1), width: Int32(truncatingIfNeeded: s.int64(at: 2)),
                                   height: Int32(truncatingIfNeeded: s.int64(at: 3))))
        }
        try each("SELECT rowid, z, page_id, stroke_id, tool, rgba, width, channels, sample_count, samples FROM strokes",
                 "UPDATE strokes SET crc = ?1 WHERE rowid = ?2") { s in
            let fields = s.withBlob(at: 9) { raw in
                RowChecksum.stroke(page: uuid(s, 2), id: uuid(s, 3), tool: UInt8(truncatingIfNeeded: s.int64(at: 4)),
                                   rgba: UInt32(truncatingIfNeeded: s.int64(at: 5)), width: UInt16(truncatingIfNeeded: s.int64(at: 6)),
                                   channels: UInt8(truncatingIfNeeded: s.int64(at: 7)), codec: SampleCodecID.fixed16.rawValue,
                                   sampleCount: UInt32(truncatingIfNeeded: s.int64(at: 8)), samples: raw)
            }
            return RowChecksum.stored(fields: fields, z: s.int64(at: 1))
        }
        try each("SELECT rowid, z, page_id, image_id, asset_id, x, y, width, height, rotation FROM images",
                 "UPDATE images SET crc = ?1 WHERE rowid = ?2") { s in
            let frame = QuantizedRect(x: Int32(truncatingIfNeeded: s.int64(at: 5)), y: Int32(truncatingIfNeeded: s.int64(at: 6)),
                                      width: Int32(truncatingIfNeeded: s.int64(at: 7)), height: Int32(truncatingIfNeeded: s.int64(at: 8)))
            return RowChecksum.stored(fields: RowChecksum.image(page: uuid(s, 2), id: uuid(s, 3), asset: uuid(s, 4), frame: frame,
                                                                rotation: Int32(truncatingIfNeeded: s.int64(at: 9))), z: s.int64(at: 1))
        }
        try each("SELECT rowid, z, page_id, kind, payload FROM unknown_elements",
                 "UPDATE unknown_elements SET crc = ?1 WHERE rowid = ?2") { s in
            let fields = s.withBlob(at: 4) { RowChecksum.unknown(page: uuid(s, 2), kind: UInt8(truncatingIfNeeded: s.int64(at: 3)), payload: $0) }
            return RowChecksum.stored(fields: fields, z: s.int64(at: 1))
        }
    }
}
