// The payloads of journal frames: each `PageChange` as bytes and back. Elements are coded as in
// the page format (kind, length, payload) with the stroke's ink written inline instead of an index.

import Foundation
import LulucatInk

/// Codes page changes as journal frame payloads. Decoding treats its input as untrusted.
struct JournalChangeCodec {
    let codec: SampleCodecID

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
        w.writeVarint(elements.count)
        for element in elements {
            var p = ByteWriter(capacity: 64)
            let kind: UInt8
            switch element {
            case .stroke(let s):
                guard s.channelsAreConsistent else {
                    throw .unencodable("stroke \(s.id) has an optional channel whose length differs from its \(s.samples.count) samples")
                }
                guard s.samples.count <= PageFile.maxSamplesPerStroke else {
                    throw .unencodable("stroke \(s.id) has \(s.samples.count) samples, more than \(PageFile.maxSamplesPerStroke)")
                }
                kind = PageFile.Kind.stroke
                p.reserve(40 + s.samples.count * 16)
                p.writeUUID(s.id)
                p.writeUInt8(s.ink.tool.rawValue)
                p.writeUInt8(s.ink.color.r); p.writeUInt8(s.ink.color.g); p.writeUInt8(s.ink.color.b); p.writeUInt8(s.ink.color.a)
                p.writeUInt16(s.ink.width)
                p.writeUInt8(s.channels.rawValue)
                p.writeVarint(s.samples.count)
                codec.encodeSamples(s, into: &p)
            case .image(let i):
                kind = PageFile.Kind.image
                p.writeUUID(i.id)
                p.writeUUID(i.assetID)
                p.writeInt32(i.frame.x); p.writeInt32(i.frame.y)
                p.writeInt32(i.frame.width); p.writeInt32(i.frame.height)
                p.writeInt32(i.rotation)
            case .unknown(let u):
                kind = u.kind
                p.writeBytes(u.payload)
            }
            w.writeUInt8(kind)
            w.writeVarint(p.count)
            w.writeBytes(p.bytes)
        }
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
        // Each element takes at least 2 bytes (kind and length).
        let count = try r.readCount(limit: r.remaining / 2, "element count")
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count {
            let kindOffset = r.fileOffset
            let kind = try r.readUInt8()
            let length = try r.readCount(limit: r.remaining, "element length")
            var p = try r.readSlice(length)
            switch kind {
            case PageFile.Kind.stroke:
                let id = try p.readUUID()
                let tool = Tool(rawValue: try p.readUInt8())
                let color = RGBA8(r: try p.readUInt8(), g: try p.readUInt8(), b: try p.readUInt8(), a: try p.readUInt8())
                let ink = Ink(tool: tool, color: color, width: try p.readUInt16())
                let channelOffset = p.fileOffset
                let channels = OptionalChannels(rawValue: try p.readUInt8())
                guard OptionalChannels.all.isSuperset(of: channels) else {
                    throw .invalidField(offset: channelOffset, "unknown optional channel bits 0x\(String(channels.rawValue, radix: 16))")
                }
                let count = try p.readCount(limit: PageFile.maxSamplesPerStroke, "sample count")
                let (samples, values) = try codec.decodeSamples(count: count, channels: channels, from: &p)
                guard p.isAtEnd else {
                    throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after the samples of stroke \(id)")
                }
                var it = values.makeIterator()
                var stroke = Stroke(id: id, ink: ink, samples: samples)
                if channels.contains(.azimuth) { stroke.azimuth = it.next() }
                if channels.contains(.altitude) { stroke.altitude = it.next() }
                if channels.contains(.opacity) { stroke.opacity = it.next() }
                elements.append(.stroke(stroke))
            case PageFile.Kind.image:
                let image = ImageElement(
                    id: try p.readUUID(), assetID: try p.readUUID(),
                    frame: QuantizedRect(x: try p.readInt32(), y: try p.readInt32(),
                                         width: try p.readInt32(), height: try p.readInt32()),
                    rotation: try p.readInt32())
                guard p.isAtEnd else { throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after image \(image.id)") }
                elements.append(.image(image))
            default:
                guard length >= 16 else {
                    throw .invalidField(offset: kindOffset, "element of unknown kind \(kind) is shorter than its 16-byte id")
                }
                elements.append(.unknown(try! UnknownElement(kind: kind, payload: Data(p.buffer))))
            }
        }
        return elements
    }
}
