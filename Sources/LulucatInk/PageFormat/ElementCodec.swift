// The one coding of an element (stroke, image, unknown kind) shared by the page file and the
// journal: the payload of each kind, the checked record that frames it (kind, length, header
// check, payload, CRC32C) and the older unchecked framing. Specified in docs/page-format.md
// ("Elements") and docs/journal-format.md.

import Foundation

/// Encodes and decodes single elements. Every element of a version-2 page file and of a
/// version-2 journal is a *record* that checks on its own, so a damaged file keeps every element
/// whose own bytes are intact (`PageFile.salvage`).
package enum ElementCodec {
    /// Element kind bytes.
    package enum Kind {
        package static let stroke: UInt8 = 1
        package static let image: UInt8 = 2
        package static func isKnown(_ kind: UInt8) -> Bool { kind == stroke || kind == image }
    }

    /// Bytes a record adds around its payload, besides the length varint: kind, header check, CRC.
    package static let recordOverhead = 1 + 2 + 4
    /// The smallest record: a 16-byte payload (every payload begins with an id).
    static let minimumRecord = recordOverhead + 1 + 16

    // MARK: What any engine may store

    /// Refuses an element that no engine may store: a stroke whose optional channels do not have one
    /// value per sample, more than `PageFile.maxSamplesPerStroke` samples, or an unknown element that
    /// claims a known kind (read back as a stroke or image it would change meaning or fail). Every
    /// engine refuses the same elements: the session checks each edit with this before it applies it.
    package static func check(_ element: Element) throws(PageFormatError) {
        switch element {
        case .stroke(let s):
            guard s.channelsAreConsistent else {
                throw .unencodable("stroke \(s.id) has an optional channel whose length differs from its \(s.samples.count) samples")
            }
            guard s.samples.count <= PageFile.maxSamplesPerStroke else {
                throw .unencodable("stroke \(s.id) has \(s.samples.count) samples, more than \(PageFile.maxSamplesPerStroke)")
            }
        case .image:
            break
        case .unknown(let u):
            guard !Kind.isKnown(u.kind) else {
                throw .unencodable("unknown element \(u.id) claims kind \(u.kind), which is a known kind")
            }
        }
    }

    // MARK: Payloads

    /// The kind byte of an element.
    package static func kind(of element: Element) -> UInt8 {
        switch element {
        case .stroke: return Kind.stroke
        case .image: return Kind.image
        case .unknown(let u): return u.kind
        }
    }

    static func writeInk(_ ink: Ink, into w: inout ByteWriter) {
        w.writeUInt8(ink.tool.rawValue)
        w.writeUInt8(ink.color.r); w.writeUInt8(ink.color.g); w.writeUInt8(ink.color.b); w.writeUInt8(ink.color.a)
        w.writeUInt16(ink.width)
    }

    static func readInk(_ r: inout ByteReader) throws(PageFormatError) -> Ink {
        let tool = Tool(rawValue: try r.readUInt8())
        let color = RGBA8(r: try r.readUInt8(), g: try r.readUInt8(), b: try r.readUInt8(), a: try r.readUInt8())
        return Ink(tool: tool, color: color, width: try r.readUInt16())
    }

    /// The stroke's part after its id and ink: channel bits, sample count, coded samples.
    static func writeStrokeSamples(_ s: Stroke, codec: SampleCodecID, into w: inout ByteWriter) {
        w.writeUInt8(s.channels.rawValue)
        w.writeVarint(s.samples.count)
        codec.codec.encode(s, into: &w)
    }

    /// Appends an element's payload (checked first). A stroke names its ink by `inkIndex` (the page
    /// format version 1's ink table) or, when nil, inline (7 bytes).
    /// - Returns: for a stroke, where its channel bits and coded samples are in `w`.
    @discardableResult
    static func writePayload(_ element: Element, inkIndex: Int?, codec: SampleCodecID,
                             into w: inout ByteWriter) throws(PageFormatError) -> Range<Int>? {
        try check(element)
        switch element {
        case .stroke(let s):
            w.writeUUID(s.id)
            if let inkIndex { w.writeVarint(inkIndex) } else { writeInk(s.ink, into: &w) }
            let start = w.count
            writeStrokeSamples(s, codec: codec, into: &w)
            return start..<w.count
        case .image(let i):
            w.writeUUID(i.id)
            w.writeUUID(i.assetID)
            w.writeInt32(i.frame.x); w.writeInt32(i.frame.y)
            w.writeInt32(i.frame.width); w.writeInt32(i.frame.height)
            w.writeInt32(i.rotation)
            return nil
        case .unknown(let u):
            w.writeBytes(u.payload)
            return nil
        }
    }

    /// Decodes one payload, which must be consumed exactly. `inks` is the ink table of a version-1
    /// page (nil: the ink is inline). `part` receives where a stroke's channel bits and coded
    /// samples are (file offsets).
    static func readPayload(kind: UInt8, _ p: inout ByteReader, inks: [Ink]?, codec: SampleCodecID,
                            part: inout Range<Int>?) throws(PageFormatError) -> Element {
        switch kind {
        case Kind.stroke:
            let id = try p.readUUID()
            let ink: Ink
            if let inks {
                let inkOffset = p.fileOffset
                let index = try p.readCount(limit: Int.max, "ink index")
                guard index < inks.count else {
                    throw .invalidField(offset: inkOffset, "ink index \(index) but the page has \(inks.count) inks")
                }
                ink = inks[index]
            } else {
                ink = try readInk(&p)
            }
            let channelOffset = p.fileOffset
            let channels = OptionalChannels(rawValue: try p.readUInt8())
            guard OptionalChannels.all.isSuperset(of: channels) else {
                throw .invalidField(offset: channelOffset, "unknown optional channel bits 0x\(String(channels.rawValue, radix: 16))")
            }
            let count = try p.readCount(limit: PageFile.maxSamplesPerStroke, "sample count")
            let (samples, values) = try codec.codec.decode(count: count, channels: channels, from: &p)
            guard p.isAtEnd else {
                throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after the samples of stroke \(id)")
            }
            var it = values.makeIterator()
            var stroke = Stroke(id: id, ink: ink, samples: samples)
            if channels.contains(.azimuth) { stroke.azimuth = it.next() }
            if channels.contains(.altitude) { stroke.altitude = it.next() }
            if channels.contains(.opacity) { stroke.opacity = it.next() }
            part = channelOffset..<p.fileOffset
            return .stroke(stroke)
        case Kind.image:
            let image = ImageElement(
                id: try p.readUUID(), assetID: try p.readUUID(),
                frame: QuantizedRect(x: try p.readInt32(), y: try p.readInt32(),
                                     width: try p.readInt32(), height: try p.readInt32()),
                rotation: try p.readInt32())
            guard p.isAtEnd else {
                throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after image \(image.id)")
            }
            return .image(image)
        default:
            guard p.remaining >= 16 else {
                throw .invalidField(offset: p.fileOffset, "element of unknown kind \(kind) is shorter than its 16-byte id")
            }
            let payload = Data(UnsafeRawBufferPointer(rebasing: p.buffer[p.offset...]))
            try p.skip(p.remaining)
            return .unknown(try! UnknownElement(kind: kind, payload: payload))
        }
    }

    // MARK: Unchecked framing (page format 1, journal format 1)

    /// kind u8, length varint, payload: the framing of page format version 1 and journal format 1.
    static func writeFramed(_ element: Element, inkIndex: Int?, codec: SampleCodecID, into w: inout ByteWriter) throws(PageFormatError) {
        var p = ByteWriter(capacity: 64)
        try writePayload(element, inkIndex: inkIndex, codec: codec, into: &p)
        w.writeUInt8(kind(of: element))
        w.writeVarint(p.count)
        w.writeBytes(p.bytes)
    }

    static func readFramed(_ r: inout ByteReader, inks: [Ink]?, codec: SampleCodecID,
                           part: inout Range<Int>?) throws(PageFormatError) -> Element {
        let kind = try r.readUInt8()
        let length = try r.readCount(limit: r.remaining, "element length")
        var p = try r.readSlice(length)
        return try readPayload(kind: kind, &p, inks: inks, codec: codec, part: &part)
    }

    // MARK: Checked records (page format 2, journal format 2)

    /// The 16-bit check of a record's kind and length bytes: the low half of their CRC32C.
    static func headerCheck(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        UInt16(truncatingIfNeeded: CRC32C.checksum(bytes))
    }

    /// Appends one record around a payload already coded: kind, length, header check, payload, CRC.
    /// `payload` writes the payload; `length` must be its exact size.
    static func writeRecord(kind: UInt8, length: Int, into w: inout ByteWriter, payload: (inout ByteWriter) -> Void) {
        let start = w.count
        w.writeUInt8(kind)
        w.writeVarint(length)
        let check = w.bytes.withUnsafeBytes { headerCheck(UnsafeRawBufferPointer(rebasing: $0[start..<w.count])) }
        w.writeUInt16(check)
        let payloadStart = w.count
        payload(&w)
        precondition(w.count - payloadStart == length, "record payload length")
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<w.count])) }
        w.writeUInt32(crc)
    }

    /// Appends an element as a checked record with its ink inline.
    /// - Returns: for a stroke, where its channel bits and coded samples are in `w`.
    @discardableResult
    package static func writeRecord(_ element: Element, codec: SampleCodecID, into w: inout ByteWriter) throws(PageFormatError) -> Range<Int>? {
        var p = ByteWriter(capacity: 64)
        let part = try writePayload(element, inkIndex: nil, codec: codec, into: &p)
        var shift = 0
        writeRecord(kind: kind(of: element), length: p.count, into: &w) { w in
            shift = w.count
            w.writeBytes(p.bytes)
        }
        return part.map { ($0.lowerBound + shift)..<($0.upperBound + shift) }
    }

    /// Appends a stroke as a record whose channel bits and coded samples are copied from `coded`
    /// (a stroke unchanged since they were coded with the same codec).
    static func writeStrokeRecord(id: UUID, ink: Ink, coded: UnsafeRawBufferPointer, into w: inout ByteWriter) -> Range<Int> {
        var start = 0
        writeRecord(kind: Kind.stroke, length: 16 + 7 + coded.count, into: &w) { w in
            w.writeUUID(id)
            writeInk(ink, into: &w)
            start = w.count
            w.writeBytes(coded)
        }
        return start..<(start + coded.count)
    }

    /// Where a record that checks begins at `offset` of `bytes`: its kind, payload and end. Nil
    /// when the bytes there are not a whole record whose header check and CRC32C match.
    /// `budget` is decreased by the payload bytes checksummed (a search's work limit).
    static func record(in bytes: UnsafeRawBufferPointer, at offset: Int, verify: Bool,
                       budget: inout Int) -> (kind: UInt8, payload: Range<Int>, end: Int)? {
        var i = offset
        guard i < bytes.count else { return nil }
        let kind = bytes[i]
        i += 1
        var length: UInt64 = 0, shift: UInt64 = 0
        while true {
            guard i < bytes.count, shift < 63 else { return nil }
            let b = bytes[i]
            i += 1
            length |= UInt64(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        guard i + 2 <= bytes.count else { return nil }
        let check = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
        if verify {
            guard headerCheck(UnsafeRawBufferPointer(rebasing: bytes[offset..<i])) == check else { return nil }
        }
        i += 2
        guard length >= 16, length <= UInt64(bytes.count - i), bytes.count - i - Int(length) >= 4 else { return nil }
        let payload = i..<(i + Int(length))
        let end = payload.upperBound + 4
        if verify {
            budget -= Int(length)
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: payload.upperBound, as: UInt32.self))
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<payload.upperBound])) == stored else { return nil }
        }
        return (kind, payload, end)
    }

    /// Reads one record at the reader's position. With `verify` its header check and CRC32C must
    /// match (a file whose whole checksum matched need not check again).
    static func readRecord(_ r: inout ByteReader, codec: SampleCodecID, verify: Bool,
                           part: inout Range<Int>?) throws(PageFormatError) -> Element {
        let start = r.offset
        let kind = try r.readUInt8()
        let length = try r.readCount(limit: r.remaining, "element length")
        let checkOffset = r.fileOffset
        let check = try r.readUInt16()
        var p = try r.readSlice(length)
        let crcOffset = r.fileOffset
        let stored = try r.readUInt32()
        if verify {
            let header = UnsafeRawBufferPointer(rebasing: r.buffer[start..<(checkOffset - r.base)])
            guard headerCheck(header) == check else {
                throw .invalidField(offset: checkOffset, "the header check of an element does not match its kind and length")
            }
            let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: r.buffer[start..<(crcOffset - r.base)]))
            guard computed == stored else {
                throw .invalidField(offset: crcOffset, "the element's CRC32C is 0x\(String(computed, radix: 16)) but it says 0x\(String(stored, radix: 16))")
            }
        }
        guard length >= 16 else { throw .invalidField(offset: p.fileOffset, "element payload of \(length) bytes is shorter than its 16-byte id") }
        return try readPayload(kind: kind, &p, inks: nil, codec: codec, part: &part)
    }

    /// Reads one record at the reader's position when it is a stroke, without decoding its
    /// samples: its id, its ink and where its coded part (channel byte to the end of its coded
    /// samples) is in the file. Nil (the reader's position then undefined) for another kind.
    static func readStrokeRecordHead(_ r: inout ByteReader) throws(PageFormatError) -> (id: UUID, ink: Ink, part: Range<Int>)? {
        let kind = try r.readUInt8()
        guard kind == Kind.stroke else { return nil }
        let length = try r.readCount(limit: r.remaining, "element length")
        _ = try r.readUInt16()
        var p = try r.readSlice(length)
        _ = try r.readUInt32()
        guard length >= 16 + 7 + 2 else { return nil }
        let id = try p.readUUID()
        let ink = try readInk(&p)
        let start = p.fileOffset
        return (id, ink, start..<(start + p.remaining))
    }

    // MARK: Lists (journal payloads)

    /// A count varint, then each element: checked records (`checked`, journal format 2) or the
    /// unchecked framing (journal format 1), the ink inline either way.
    package static func writeList(_ elements: [Element], codec: SampleCodecID, checked: Bool, into w: inout ByteWriter) throws(PageFormatError) {
        w.writeVarint(elements.count)
        for element in elements {
            if checked { try writeRecord(element, codec: codec, into: &w) } else {
                try writeFramed(element, inkIndex: nil, codec: codec, into: &w)
            }
        }
    }

    /// Reads what `writeList` wrote. Treats its input as untrusted. `verify` checks each record's
    /// header check and CRC32C too (a journal frame's own CRC already covers them: replay does not).
    package static func readList(_ r: inout ByteReader, codec: SampleCodecID, checked: Bool, verify: Bool = false) throws(PageFormatError) -> [Element] {
        // Each element takes at least 2 bytes (a checked one at least `minimumRecord`).
        let count = try r.readCount(limit: r.remaining / (checked ? minimumRecord : 2), "element count")
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var part: Range<Int>?
        for _ in 0..<count {
            elements.append(checked ? try readRecord(&r, codec: codec, verify: verify, part: &part)
                                    : try readFramed(&r, inks: nil, codec: codec, part: &part))
        }
        return elements
    }
}
