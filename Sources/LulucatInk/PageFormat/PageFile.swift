// The page content file: header, ink table, framed elements and a CRC32C trailer.
// Specified byte by byte in docs/page-format.md.

import Foundation

/// Encodes and decodes `pages/<page-id>.content` files.
public enum PageFile {
    /// "LNPG".
    public static let magic: [UInt8] = [0x4C, 0x4E, 0x50, 0x47]
    /// The format version this build writes and the newest it reads.
    public static let version: UInt16 = 1
    public static let headerSize = 16
    public static let trailerSize = 4

    /// Element kind bytes.
    public enum Kind {
        public static let stroke: UInt8 = 1
        public static let image: UInt8 = 2
    }

    /// Most samples one stroke may hold (about 73 minutes at 240 Hz).
    public static let maxSamplesPerStroke = 1 << 20
    /// Most distinct inks a page may hold.
    public static let maxInks = 1 << 16

    // MARK: Encoding

    /// The bytes of a page content file holding `content`, its samples coded with `codec`.
    ///
    /// - Throws: `PageFormatError.unencodable` when a stroke's optional channel lengths differ from
    ///   its sample count, a stroke holds more than `maxSamplesPerStroke` samples, or an unknown
    ///   element claims a known kind.
    public static func encode(_ content: PageContent, codec: SampleCodecID = .compact) throws(PageFormatError) -> [UInt8] {
        try encode(content, codec: codec, reusing: nil).bytes
    }

    /// Encodes a page, copying the coded samples of strokes `reusing` already holds instead of
    /// coding them again, and returns the coded strokes of the new file for the next save.
    public static func encode(_ content: PageContent, codec: SampleCodecID, reusing cache: EncodedStrokes?)
        throws(PageFormatError) -> (bytes: [UInt8], strokes: EncodedStrokes) {
        let reuse = cache?.codec == codec ? cache : nil
        var inks: [Ink] = []
        var inkIndex: [Ink: Int] = [:]
        var estimate = headerSize + trailerSize + 16
        for element in content.elements {
            guard case .stroke(let s) = element else { continue }
            guard s.channelsAreConsistent else {
                throw .unencodable("stroke \(s.id) has an optional channel whose length differs from its \(s.samples.count) samples")
            }
            guard s.samples.count <= maxSamplesPerStroke else {
                throw .unencodable("stroke \(s.id) has \(s.samples.count) samples, more than \(maxSamplesPerStroke)")
            }
            if inkIndex[s.ink] == nil {
                inkIndex[s.ink] = inks.count
                inks.append(s.ink)
            }
            estimate += 32 + s.samples.count * (codec == .fixed16 ? 16 + 2 * s.channels.rawValue.nonzeroBitCount : 4)
        }
        guard inks.count <= maxInks else { throw .unencodable("page has \(inks.count) distinct inks, more than \(maxInks)") }

        var w = ByteWriter(capacity: estimate)
        w.writeBytes(magic)
        w.writeUInt16(version)
        w.writeUInt8(codec.rawValue)
        w.writeUInt8(0)  // flags, reserved
        w.writeInt32(content.canvasSize.width)
        w.writeInt32(content.canvasSize.height)

        w.writeVarint(inks.count)
        for ink in inks {
            w.writeUInt8(ink.tool.rawValue)
            w.writeUInt8(ink.color.r); w.writeUInt8(ink.color.g); w.writeUInt8(ink.color.b); w.writeUInt8(ink.color.a)
            w.writeUInt16(ink.width)
        }

        w.writeVarint(content.elements.count)
        var payload = ByteWriter(capacity: 1024)
        var parts: [UUID: Range<Int>] = [:]
        parts.reserveCapacity(content.elements.count)
        for element in content.elements {
            let kind: UInt8
            switch element {
            case .stroke(let s):
                let ink = inkIndex[s.ink]!
                if let reuse, let part = reuse.parts[s.id] {
                    // An unchanged stroke: copy its coded samples from the last file.
                    w.writeUInt8(Kind.stroke)
                    w.writeVarint(16 + varintSize(UInt64(ink)) + part.count)
                    w.writeUUID(s.id)
                    w.writeVarint(ink)
                    let start = w.count
                    reuse.bytes.withUnsafeBytes { w.writeBytes(UnsafeRawBufferPointer(rebasing: $0[part])) }
                    parts[s.id] = start..<w.count
                    continue
                }
                kind = Kind.stroke
                payload = ByteWriter(capacity: max(payload.bytes.capacity, 64))
                encodeStroke(s, inkIndex: ink, codec: codec, into: &payload)
                w.writeUInt8(kind)
                w.writeVarint(payload.count)
                let partStart = w.count + 16 + varintSize(UInt64(ink))
                w.writeBytes(payload.bytes)
                parts[s.id] = partStart..<w.count
                continue
            case .image(let image):
                kind = Kind.image
                payload = ByteWriter(capacity: 64)
                encodeImage(image, into: &payload)
            case .unknown(let u):
                // Read back as a stroke or image, such a payload would change meaning or fail.
                guard u.kind != Kind.stroke && u.kind != Kind.image else {
                    throw .unencodable("unknown element \(u.id) claims kind \(u.kind), which is a known kind")
                }
                kind = u.kind
                payload = ByteWriter(capacity: u.payload.count)
                payload.writeBytes(u.payload)
            }
            w.writeUInt8(kind)
            w.writeVarint(payload.count)
            w.writeBytes(payload.bytes)
        }
        let crc = CRC32C.checksum(w.bytes)
        w.writeUInt32(crc)
        return (w.bytes, EncodedStrokes(codec: codec, bytes: w.bytes, parts: parts))
    }

    static func varintSize(_ v: UInt64) -> Int {
        var n = 1, x = v
        while x >= 0x80 { x >>= 7; n += 1 }
        return n
    }

    static func encodeStroke(_ s: Stroke, inkIndex: Int, codec: SampleCodecID, into w: inout ByteWriter) {
        w.writeUUID(s.id)
        w.writeVarint(inkIndex)
        w.writeUInt8(s.channels.rawValue)
        w.writeVarint(s.samples.count)
        codec.codec.encode(s, into: &w)
    }

    static func encodeImage(_ i: ImageElement, into w: inout ByteWriter) {
        w.writeUUID(i.id)
        w.writeUUID(i.assetID)
        w.writeInt32(i.frame.x); w.writeInt32(i.frame.y)
        w.writeInt32(i.frame.width); w.writeInt32(i.frame.height)
        w.writeInt32(i.rotation)
    }

    // MARK: Decoding

    /// The header of a page file, readable without decoding its elements.
    public struct Header: Equatable, Sendable {
        public var version: UInt16
        public var codec: SampleCodecID
        public var canvasSize: QuantizedSize
    }

    /// Decodes a page content file, checking its magic, version, codec and CRC32C first.
    ///
    /// - Throws: `PageFormatError` saying what is wrong and at which byte.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> PageContent {
        var parts: [UUID: Range<Int>]? = nil
        return try decode(bytes, recording: &parts)
    }

    /// Decodes a page and keeps where each stroke's coded samples are, so that saving the page
    /// again copies the strokes that did not change.
    public static func decodeKeepingStrokes(_ bytes: [UInt8]) throws(PageFormatError) -> (content: PageContent, strokes: EncodedStrokes) {
        var parts: [UUID: Range<Int>]? = [:]
        let content = try bytes.withUnsafeBytes { raw in
            Result { () throws(PageFormatError) in try decode(raw, recording: &parts) }
        }.get()
        let header = try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try readHeader(raw) } }.get()
        return (content, EncodedStrokes(codec: header.codec, bytes: bytes, parts: parts ?? [:]))
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, recording parts: inout [UUID: Range<Int>]?) throws(PageFormatError) -> PageContent {
        var elements: [Element] = []
        let header = try walk(bytes, recording: &parts, reserve: { elements.reserveCapacity($0) }) { elements.append($0) }
        return PageContent(canvasSize: header.canvasSize, elements: elements)
    }

    /// What a page file holds, checked exactly as `decode` checks it (magic, version, codec, CRC,
    /// every element and sample), without keeping its elements: each is decoded, counted and
    /// dropped, so the memory it takes is one element's, not the page's. Import and verify use
    /// it on pages they only check (export-format.md §6).
    public static func check(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> PageSummary {
        var parts: [UUID: Range<Int>]? = nil
        var summary = PageSummary(canvasSize: QuantizedSize(width: 0, height: 0), elementCount: 0, sampleCount: 0, assetIDs: [])
        let header = try walk(bytes, recording: &parts, reserve: { _ in }) { element in
            summary.elementCount += 1
            switch element {
            case .stroke(let s): summary.sampleCount += s.samples.count
            case .image(let i): summary.assetIDs.insert(i.assetID)
            case .unknown: break
            }
        }
        summary.canvasSize = header.canvasSize
        return summary
    }

    public static func check(_ bytes: [UInt8]) throws(PageFormatError) -> PageSummary {
        try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try check(raw) } }.get()
    }

    /// Checks the header and CRC, then decodes the elements in order, handing each to `visit`.
    private static func walk(_ bytes: UnsafeRawBufferPointer, recording parts: inout [UUID: Range<Int>]?,
                             reserve: (Int) -> Void, visit: (Element) -> Void) throws(PageFormatError) -> Header {
        let header = try readHeader(bytes)
        try verifyChecksum(bytes)
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[headerSize..<bytes.count - trailerSize]), base: headerSize)
        let codec = header.codec.codec

        // Each ink takes 7 bytes and each element at least 2, so these counts are bounded by the bytes.
        let inkCount = try r.readCount(limit: min(maxInks, r.remaining / 7), "ink count")
        var inks: [Ink] = []
        inks.reserveCapacity(inkCount)
        for _ in 0..<inkCount {
            let tool = Tool(rawValue: try r.readUInt8())
            let color = RGBA8(r: try r.readUInt8(), g: try r.readUInt8(), b: try r.readUInt8(), a: try r.readUInt8())
            inks.append(Ink(tool: tool, color: color, width: try r.readUInt16()))
        }

        let elementCount = try r.readCount(limit: r.remaining / 2, "element count")
        reserve(elementCount)
        for _ in 0..<elementCount {
            let kindOffset = r.fileOffset
            let kind = try r.readUInt8()
            let length = try r.readCount(limit: r.remaining, "element length")
            var p = try r.readSlice(length)
            switch kind {
            case Kind.stroke:
                let id = try p.readUUID()
                let inkOffset = p.fileOffset
                let ink = try p.readCount(limit: Int.max, "ink index")
                guard ink < inks.count else {
                    throw .invalidField(offset: inkOffset, "ink index \(ink) but the page has \(inks.count) inks")
                }
                let channelOffset = p.fileOffset
                let channels = OptionalChannels(rawValue: try p.readUInt8())
                guard OptionalChannels.all.isSuperset(of: channels) else {
                    throw .invalidField(offset: channelOffset, "unknown optional channel bits 0x\(String(channels.rawValue, radix: 16))")
                }
                let partStart = channelOffset
                let count = try p.readCount(limit: maxSamplesPerStroke, "sample count")
                let (samples, values) = try codec.decode(count: count, channels: channels, from: &p)
                guard p.isAtEnd else {
                    throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after the samples of stroke \(id)")
                }
                var it = values.makeIterator()
                var stroke = Stroke(id: id, ink: inks[ink], samples: samples)
                if channels.contains(.azimuth) { stroke.azimuth = it.next() }
                if channels.contains(.altitude) { stroke.altitude = it.next() }
                if channels.contains(.opacity) { stroke.opacity = it.next() }
                parts?[id] = partStart..<p.fileOffset
                visit(.stroke(stroke))
            case Kind.image:
                let image = ImageElement(
                    id: try p.readUUID(), assetID: try p.readUUID(),
                    frame: QuantizedRect(x: try p.readInt32(), y: try p.readInt32(),
                                         width: try p.readInt32(), height: try p.readInt32()),
                    rotation: try p.readInt32())
                guard p.isAtEnd else {
                    throw .invalidField(offset: p.fileOffset, "\(p.remaining) bytes left over after image \(image.id)")
                }
                visit(.image(image))
            default:
                guard length >= 16 else {
                    throw .invalidField(offset: kindOffset, "element of unknown kind \(kind) is shorter than its 16-byte id")
                }
                visit(.unknown(try! UnknownElement(kind: kind, payload: Data(p.buffer))))
            }
        }
        guard r.isAtEnd else {
            throw .invalidField(offset: r.fileOffset, "\(r.remaining) bytes left over after the last element")
        }
        return header
    }

    public static func decode(_ bytes: [UInt8]) throws(PageFormatError) -> PageContent {
        try bytes.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try decode(raw) } }.get()
    }

    public static func decode(_ data: Data) throws(PageFormatError) -> PageContent {
        try data.withUnsafeBytes { raw in Result { () throws(PageFormatError) in try decode(raw) } }.get()
    }

    /// Reads and checks the 16-byte header (magic, version, codec, flags).
    public static func readHeader(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) -> Header {
        var r = ByteReader(bytes)
        guard bytes.count >= 4 else {
            throw .truncated(offset: 0, needed: headerSize + trailerSize, available: bytes.count)
        }
        guard bytes.prefix(4).elementsEqual(magic) else { throw .badMagic }
        try r.skip(4)
        try r.need(headerSize - 4)
        let version = try r.readUInt16()
        guard version >= 1 else { throw .invalidField(offset: 4, "format version 0") }
        guard version <= self.version else { throw .unsupportedVersion(version) }
        let codecByte = try r.readUInt8()
        guard let codec = SampleCodecID(rawValue: codecByte) else { throw .unknownCodec(codecByte) }
        let flags = try r.readUInt8()
        guard flags == 0 else { throw .invalidField(offset: 7, "reserved flags 0x\(String(flags, radix: 16)) are not zero") }
        let size = QuantizedSize(width: try r.readInt32(), height: try r.readInt32())
        guard size.width >= 0, size.height >= 0 else {
            throw .invalidField(offset: 8, "negative canvas size \(size.width) x \(size.height)")
        }
        guard bytes.count >= headerSize + trailerSize else {
            throw .truncated(offset: bytes.count, needed: headerSize + trailerSize - bytes.count, available: 0)
        }
        return Header(version: version, codec: codec, canvasSize: size)
    }

    /// Checks the CRC32C trailer over everything before it.
    public static func verifyChecksum(_ bytes: UnsafeRawBufferPointer) throws(PageFormatError) {
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - trailerSize])
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - trailerSize, as: UInt32.self))
        let computed = CRC32C.checksum(body)
        guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    }
}

/// What `PageFile.check` reports of a valid page: what document.json records of it, and its size.
public struct PageSummary: Hashable, Sendable {
    public var canvasSize: QuantizedSize
    public var elementCount: Int
    public var sampleCount: Int
    /// Asset ids the page's images show.
    public var assetIDs: Set<UUID>

    public init(canvasSize: QuantizedSize, elementCount: Int, sampleCount: Int, assetIDs: Set<UUID>) {
        self.canvasSize = canvasSize
        self.elementCount = elementCount
        self.sampleCount = sampleCount
        self.assetIDs = assetIDs
    }

    /// The summary of decoded content.
    public init(_ content: PageContent) {
        self.init(canvasSize: content.canvasSize, elementCount: content.elements.count,
                  sampleCount: content.sampleCount, assetIDs: content.assetIDs)
    }
}

/// The coded bytes of each stroke of one page file (from its channel byte to the end of its coded
/// samples), kept so that the next save of the page copies unchanged strokes instead of coding
/// them again. A stroke whose samples change under the same id must be forgotten first.
public struct EncodedStrokes: Sendable {
    public let codec: SampleCodecID
    let bytes: [UInt8]
    var parts: [UUID: Range<Int>]

    /// How many strokes it holds.
    public var count: Int { parts.count }

    /// Drops strokes whose samples changed (or that left the page) so they are coded afresh.
    public mutating func forget<S: Sequence>(_ ids: S) where S.Element == UUID {
        for id in ids { parts[id] = nil }
    }
}
