// Element <-> row: the column values of strokes, images and unknown elements, and the checks that
// make a row read from an untrusted file safe to turn into a model value.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

extension UUID {
    /// The 16 raw bytes stored in id columns.
    var sqliteBytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}

/// Bytes of a stroke's `samples` BLOB: fixed16 records, then each present optional channel.
enum StrokeBlob {
    static func byteCount(samples: Int, channels: OptionalChannels) -> Int {
        samples * (Fixed16Codec.bytesPerSample + 2 * channels.rawValue.nonzeroBitCount)
    }

    /// Whether a `[Sample]` in memory already is the fixed16 records (little-endian host, the
    /// fields at their record offsets), so a stroke without channels binds its array directly.
    static let samplesAreRecords: Bool = {
        #if _endian(little)
        return MemoryLayout<Sample>.size == 16 && MemoryLayout<Sample>.stride == 16
            && MemoryLayout<Sample>.offset(of: \Sample.x) == 0 && MemoryLayout<Sample>.offset(of: \Sample.y) == 4
            && MemoryLayout<Sample>.offset(of: \Sample.radius) == 8 && MemoryLayout<Sample>.offset(of: \Sample.pressure) == 10
            && MemoryLayout<Sample>.offset(of: \Sample.time) == 12
        #else
        return false
        #endif
    }()

    /// Lends the stroke's BLOB bytes to `body`: the samples array itself when it already is the
    /// BLOB (no copy at all), else the encoded bytes.
    static func withBytes<R>(of stroke: Stroke, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if samplesAreRecords, stroke.channels.isEmpty {
            return try stroke.samples.withUnsafeBytes(body)
        }
        return try encode(stroke).withUnsafeBytes(body)
    }

    static func encode(_ stroke: Stroke) -> [UInt8] {
        var writer = ByteWriter(capacity: byteCount(samples: stroke.samples.count, channels: stroke.channels))
        SampleCodecID.fixed16.encodeSamples(stroke, into: &writer)
        return writer.bytes
    }

    /// The BLOB in the compact codec (docs/page-format.md's stroke coding, without the count).
    static func encodeCompact(_ stroke: Stroke) -> [UInt8] {
        var writer = ByteWriter(capacity: stroke.samples.count * 3 + 16)
        SampleCodecID.compact.encodeSamples(stroke, into: &writer)
        return writer.bytes
    }

    /// Lends the BLOB in `codec` to `body`.
    static func withBytes<R>(of stroke: Stroke, codec: SampleCodecID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        codec == .fixed16 ? try withBytes(of: stroke, body) : try encodeCompact(stroke).withUnsafeBytes(body)
    }

    /// Checks a stroke can be stored (the same limits as a page file).
    static func validate(_ stroke: Stroke) throws(SQLiteEngineError) {
        guard stroke.channelsAreConsistent else {
            throw .unencodable("stroke \(stroke.id) has an optional channel whose length differs from its \(stroke.samples.count) samples")
        }
        guard stroke.samples.count <= PageFile.maxSamplesPerStroke else {
            throw .unencodable("stroke \(stroke.id) has \(stroke.samples.count) samples, more than \(PageFile.maxSamplesPerStroke)")
        }
    }
}

/// Reads one row's columns with the checks an untrusted file needs.
struct RowReader {
    let statement: Statement
    let file: String
    let table: String

    func invalid(_ detail: String) -> SQLiteEngineError { .invalidRow(file: file, table: table, detail: detail) }

    func uuid(_ column: Int, _ name: String) throws(SQLiteEngineError) -> UUID {
        guard statement.columnType(at: column) == .blob, statement.byteCount(at: column) == 16 else {
            throw invalid("\(name) is not a 16-byte id")
        }
        return statement.withBlob(at: column) { UUID.read16($0) }
    }

    func int<T: FixedWidthInteger>(_ column: Int, _ name: String, as: T.Type) throws(SQLiteEngineError) -> T {
        guard statement.columnType(at: column) == .integer else { throw invalid("\(name) is not an integer") }
        let value = statement.int64(at: column)
        guard let exact = T(exactly: value) else { throw invalid("\(name) \(value) is out of range for \(T.self)") }
        return exact
    }
}

extension UUID {
    static func read16(_ raw: UnsafeRawBufferPointer) -> UUID {
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw.prefix(16))) }
        return UUID(uuid: u)
    }
}

extension SQLiteContentStore {
    static let strokeColumns = "z, stroke_id, tool, rgba, width, channels, sample_count, samples, codec, crc"
    static let imageColumns = "z, image_id, asset_id, x, y, width, height, rotation, crc"
    static let unknownColumns = "z, element_id, kind, payload, crc"

    /// The row's `crc` column (the last one selected), checked against what its fields give.
    private func checkRow(_ row: RowReader, at column: Int, fields: UInt32, z: Int64?, page: UUID, element: UUID?) throws(SQLiteEngineError) {
        let stored = try row.int(column, "crc", as: UInt32.self)
        let expected = z.map { UInt32(RowChecksum.stored(fields: fields, z: $0)) } ?? fields
        guard stored == expected else {
            throw .checksumMismatch(file: path, table: row.table, page: page, element: element)
        }
    }

    /// A stroke row of `page` selected with `strokeColumns`. The checksum is checked before the
    /// samples are decoded: a row that fails it is never turned into a stroke.
    func decodeStroke(_ s: Statement, page: UUID) throws(SQLiteEngineError) -> (Int64, Element) {
        let row = RowReader(statement: s, file: path, table: "strokes")
        let z = try row.int(0, "z", as: Int64.self)
        let id = try row.uuid(1, "stroke_id")
        let tool = Tool(rawValue: try row.int(2, "tool", as: UInt8.self))
        let rgba = try row.int(3, "rgba", as: UInt32.self)
        let width = try row.int(4, "width", as: UInt16.self)
        let channels = OptionalChannels(rawValue: try row.int(5, "channels", as: UInt8.self))
        guard OptionalChannels.all.isSuperset(of: channels) else {
            throw row.invalid("stroke \(id) has unknown channel bits 0x\(String(channels.rawValue, radix: 16))")
        }
        let count = try row.int(6, "sample_count", as: Int.self)
        guard (0...PageFile.maxSamplesPerStroke).contains(count) else {
            throw row.invalid("stroke \(id) claims \(count) samples, more than \(PageFile.maxSamplesPerStroke)")
        }
        let codecValue = try row.int(8, "codec", as: UInt8.self)
        guard let codec = SampleCodecID(rawValue: codecValue) else {
            throw row.invalid("stroke \(id) has samples in codec \(codecValue), which this build does not read")
        }
        guard s.columnType(at: 7) == .blob || s.byteCount(at: 7) == 0 else { throw row.invalid("stroke \(id): samples is not a BLOB") }
        // fixed16: the BLOB's size is checked against the count before anything is decoded or
        // allocated. compact: the decoder refuses a count above 8 samples a byte before it allocates.
        if codec == .fixed16 {
            let expected = StrokeBlob.byteCount(samples: count, channels: channels)
            guard s.byteCount(at: 7) == expected else {
                throw row.invalid("stroke \(id) has \(s.byteCount(at: 7)) sample bytes, but \(count) samples with channels 0x\(String(channels.rawValue, radix: 16)) take \(expected)")
            }
        }
        let fields = s.withBlob(at: 7) { raw in
            RowChecksum.stroke(page: page, id: id, tool: tool.rawValue, rgba: rgba, width: width, channels: channels.rawValue,
                               codec: codecValue, sampleCount: UInt32(count), samples: raw)
        }
        try checkRow(row, at: 9, fields: fields, z: z, page: page, element: id)
        let decoded = s.withBlob(at: 7) { raw in
            Result { () throws(PageFormatError) in
                var reader = ByteReader(raw)
                let result = try codec.decodeSamples(count: count, channels: channels, from: &reader)
                // A compact BLOB ends within its last byte's padding: nothing may follow the stroke.
                guard codec == .fixed16 || reader.isAtEnd else { throw PageFormatError.invalidField(offset: reader.fileOffset, "\(reader.remaining) bytes after the stroke") }
                return result
            }
        }
        guard case .success(let (samples, values)) = decoded else {
            throw row.invalid("stroke \(id): the \(codec) sample bytes cannot be decoded")
        }
        let ink = Ink(tool: tool, color: RGBA8(r: UInt8(rgba >> 24), g: UInt8(truncatingIfNeeded: rgba >> 16),
                                               b: UInt8(truncatingIfNeeded: rgba >> 8), a: UInt8(truncatingIfNeeded: rgba)),
                      width: width)
        var stroke = Stroke(id: id, ink: ink, samples: samples)
        var next = values.makeIterator()
        if channels.contains(.azimuth) { stroke.azimuth = next.next() }
        if channels.contains(.altitude) { stroke.altitude = next.next() }
        if channels.contains(.opacity) { stroke.opacity = next.next() }
        return (z, .stroke(stroke))
    }

    func decodeImage(_ s: Statement, page: UUID) throws(SQLiteEngineError) -> (Int64, Element) {
        let row = RowReader(statement: s, file: path, table: "images")
        let z = try row.int(0, "z", as: Int64.self)
        let image = ImageElement(
            id: try row.uuid(1, "image_id"), assetID: try row.uuid(2, "asset_id"),
            frame: QuantizedRect(x: try row.int(3, "x", as: Int32.self), y: try row.int(4, "y", as: Int32.self),
                                 width: try row.int(5, "width", as: Int32.self), height: try row.int(6, "height", as: Int32.self)),
            rotation: try row.int(7, "rotation", as: Int32.self))
        let fields = RowChecksum.image(page: page, id: image.id, asset: image.assetID, frame: image.frame, rotation: image.rotation)
        try checkRow(row, at: 8, fields: fields, z: z, page: page, element: image.id)
        return (z, .image(image))
    }

    func decodeUnknown(_ s: Statement, page: UUID) throws(SQLiteEngineError) -> (Int64, Element) {
        let row = RowReader(statement: s, file: path, table: "unknown_elements")
        let z = try row.int(0, "z", as: Int64.self)
        let id = try row.uuid(1, "element_id")
        let kind = try row.int(2, "kind", as: UInt8.self)
        guard kind != PageFile.Kind.stroke, kind != PageFile.Kind.image else {
            throw row.invalid("element \(id) of known kind \(kind) stored as unknown")
        }
        guard s.columnType(at: 3) == .blob, s.byteCount(at: 3) >= 16 else {
            throw row.invalid("element \(id) has a payload shorter than its 16-byte id")
        }
        let fields = s.withBlob(at: 3) { RowChecksum.unknown(page: page, kind: kind, payload: $0) }
        try checkRow(row, at: 4, fields: fields, z: z, page: page, element: id)
        let payload = s.withBlob(at: 3) { Data($0) }
        guard let element = try? UnknownElement(kind: kind, payload: payload), element.id == id else {
            throw row.invalid("element \(id): the payload does not begin with the element's id")
        }
        return (z, .unknown(element))
    }
}
