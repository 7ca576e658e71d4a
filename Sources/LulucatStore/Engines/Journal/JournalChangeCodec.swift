// The payloads of journal frames: each `PageChange` as bytes and back. Elements are coded by the
// page format's `ElementCodec`: checked records in journal format 2, the older unchecked framing
// (kind, length, payload) in format 1; the stroke's ink inline either way.

import Foundation
import LulucatInk

/// Codes page changes as journal frame payloads. Decoding treats its input as untrusted.
struct JournalChangeCodec {
    let codec: SampleCodecID
    /// The journal's format version: 2 codes elements as checked records, 1 as the older framing.
    var version: UInt16 = JournalFormat.version

    // MARK: Encoding

    /// The frame type and payload of one save's changes: the change's own type for one change, a
    /// group of records for several.
    func encodeSave(_ changes: [PageChange]) throws(PageFormatError) -> (type: UInt8, payload: [UInt8]) {
        if changes.count == 1 { return try encode(changes[0]) }
        var w = ByteWriter(capacity: 256)
        w.writeVarint(changes.count)
        for change in changes {
            let (type, payload) = try encode(change)
            w.writeUInt8(type)
            w.writeVarint(payload.count)
            w.writeBytes(payload)
        }
        return (JournalFormat.FrameType.group, w.bytes)
    }

    func encode(_ change: PageChange) throws(PageFormatError) -> (type: UInt8, payload: [UInt8]) {
        var w = ByteWriter(capacity: 256)
        let type: UInt8
        switch change {
        case .append(let elements):
            type = JournalFormat.FrameType.append
            try writeElements(elements, into: &w)
        case .delete(let ids):
            type = JournalFormat.FrameType.delete
            writeIDs(ids, into: &w)
        case .replace(let id, let pieces):
            type = JournalFormat.FrameType.replace
            w.writeUUID(id)
            try writeElements(pieces, into: &w)
        case .update(let elements):
            type = JournalFormat.FrameType.update
            try writeElements(elements, into: &w)
        case .move(let ids, let position):
            type = JournalFormat.FrameType.move
            writeIDs(ids, into: &w)
            switch position {
            case .front: w.writeUInt8(0)
            case .back: w.writeUInt8(1)
            case .index(let i):
                guard i >= 0 else { throw .unencodable("move to a negative index \(i)") }
                w.writeUInt8(2)
                w.writeVarint(i)
            }
        case .resize(let size):
            type = JournalFormat.FrameType.resize
            w.writeInt32(size.width)
            w.writeInt32(size.height)
        }
        return (type, w.bytes)
    }

    func writeIDs(_ ids: [UUID], into w: inout ByteWriter) {
        w.writeVarint(ids.count)
        for id in ids { w.writeUUID(id) }
    }

    func writeElements(_ elements: [Element], into w: inout ByteWriter) throws(PageFormatError) {
        try ElementCodec.writeList(elements, codec: codec, checked: version >= 2, into: &w)
    }

    // MARK: Decoding

    /// The changes of one frame.
    func decodeFrame(type: UInt8, _ payload: UnsafeRawBufferPointer, fileOffset: Int) throws(PageFormatError) -> [PageChange] {
        var r = ByteReader(payload, base: fileOffset)
        if type == JournalFormat.FrameType.group {
            // Each record takes at least 2 bytes.
            let count = try r.readCount(limit: r.remaining / 2, "change count")
            var changes: [PageChange] = []
            changes.reserveCapacity(count)
            for _ in 0..<count {
                let recordType = try r.readUInt8()
                guard recordType != JournalFormat.FrameType.group else {
                    throw .invalidField(offset: r.fileOffset - 1, "a group inside a group")
                }
                let length = try r.readCount(limit: r.remaining, "change length")
                var p = try r.readSlice(length)
                changes.append(try decode(type: recordType, &p))
            }
            guard r.isAtEnd else { throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes left over after the changes") }
            return changes
        }
        return [try decode(type: type, &r)]
    }

    func decode(type: UInt8, _ r: inout ByteReader) throws(PageFormatError) -> PageChange {
        let start = r.fileOffset
        let change: PageChange
        switch type {
        case JournalFormat.FrameType.append: change = .append(try readElements(&r))
        case JournalFormat.FrameType.delete: change = .delete(try readIDs(&r))
        case JournalFormat.FrameType.replace:
            let id = try r.readUUID()
            change = .replace(id, with: try readElements(&r))
        case JournalFormat.FrameType.update: change = .update(try readElements(&r))
        case JournalFormat.FrameType.move:
            let ids = try readIDs(&r)
            let at = r.fileOffset
            switch try r.readUInt8() {
            case 0: change = .move(ids, to: .front)
            case 1: change = .move(ids, to: .back)
            case 2: change = .move(ids, to: .index(try r.readCount(limit: Int(Int32.max), "move index")))
            case let k: throw .invalidField(offset: at, "unknown z-position kind \(k)")
            }
        case JournalFormat.FrameType.resize:
            change = .resize(QuantizedSize(width: try r.readInt32(), height: try r.readInt32()))
        default:
            throw .invalidField(offset: start, "unknown change type \(type) (written by a newer version?)")
        }
        guard r.isAtEnd else { throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes left over after the change") }
        return change
    }

    func readIDs(_ r: inout ByteReader) throws(PageFormatError) -> [UUID] {
        let count = try r.readCount(limit: r.remaining / 16, "id count")
        var ids: [UUID] = []
        ids.reserveCapacity(count)
        for _ in 0..<count { ids.append(try r.readUUID()) }
        return ids
    }

    func readElements(_ r: inout ByteReader) throws(PageFormatError) -> [Element] {
        try ElementCodec.readList(&r, codec: codec, checked: version >= 2)
    }
}
