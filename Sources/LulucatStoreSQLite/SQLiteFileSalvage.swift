// Salvage from the bytes of a damaged content.sqlite, page by page, without SQLite: when the file's
// header (its first 100 bytes) or its b-tree pages are too damaged for SQLite to walk, every row
// whose bytes still parse AND check against its own CRC32C is kept. docs/sqlite-engine.md §5.5.
//
// Every 4 KiB (or 16 KiB) page of the file is searched at every offset for a table-leaf or
// index-leaf cell of one of schema 3's row shapes (the header and cell pointers of a page are not
// trusted: damage there must not cost the cells); a candidate becomes content only when its
// checksum, which covers the page's 16-byte id, the element's id and every value, matches. So one
// damaged sector costs the rows whose own bytes it held.

import Foundation
import LulucatInk
import LulucatStore

/// What a raw pass over a database file found: per page id, its canvas (when its row checked) and
/// the elements whose rows checked, with their z.
package struct SQLiteFileSalvage: Sendable {
    package struct Page: Sendable {
        package var canvas: QuantizedSize?
        package var elements: [(z: Int64, element: Element)] = []
    }
    package var pages: [UUID: Page] = [:]
    /// The page size the pass read the file with.
    package var pageSize: Int = 0
    /// Cells that had a row's shape but failed its checksum (damaged rows; or, rarely, bytes that
    /// only looked like a row).
    package var refusedCandidates = 0

    /// The content of one page, in z-order (strokes, images, unknown elements at equal z).
    package func content(of page: UUID) -> PageContent? {
        guard let p = pages[page] else { return nil }
        return PageContent(canvasSize: p.canvas ?? PageContent().canvasSize,
                           elements: p.elements.sorted { $0.z < $1.z }.map(\.element))
    }

    /// Reads every row of schema 3 that parses and checks from `bytes` (a whole database file).
    /// `knownPages` are page ids to try for rows whose page row is lost (document.json's pages).
    package init(bytes: [UInt8], knownPages: [UUID]) {
        let size = Self.pageSize(bytes)
        pageSize = size
        guard size > 0 else { return }
        // A file cut short: its last, partial page is searched too (zero-filled to a whole page;
        // a cell the cut went through fails its checksum or its bounds).
        var bytes = bytes
        if bytes.count % size != 0 { bytes += [UInt8](repeating: 0, count: size - bytes.count % size) }
        var reader = RawReader(bytes: bytes, pageSize: size)
        reader.skipped = Self.freePages(bytes, pageSize: size)
        // Pass 1: page rows (table leaf, 5 columns: key as NULL, id, width, height, crc).
        var keyToPage: [Int64: UUID] = [:]
        var candidates: [RawReader.Row] = []
        reader.scan { row in
            if row.shape == .page {
                if let id = row.blob16(1), let w = row.int32(2), let h = row.int32(3), let crc = row.uint32(4),
                   RowChecksum.page(id: id, width: w, height: h) == crc, w >= 0, h >= 0 {
                    keyToPage[row.rowid] = id
                    pages[id, default: Page()].canvas = QuantizedSize(width: w, height: h)
                }
            } else {
                candidates.append(row)
            }
        }
        let tryAll = Array(Set(knownPages).union(keyToPage.values))
        var seen: [UUID: Set<UUID>] = [:]
        for row in candidates {
            guard let key = row.int64(0), let z = row.int64(1) else { continue }
            let tries = keyToPage[key].map { [$0] + tryAll.filter { id in id != keyToPage[key] } } ?? tryAll
            var accepted = false
            for page in tries {
                guard let element = Self.element(row, page: page, z: z) else { continue }
                accepted = true
                // One copy of an element: a second with the same id (a stale page) is ignored.
                if seen[page, default: []].insert(element.id).inserted {
                    pages[page, default: Page()].elements.append((z, element))
                }
                break
            }
            if !accepted { refusedCandidates += 1 }
        }
    }

    /// The element of a row when its checksum matches for `page`.
    private static func element(_ row: RawReader.Row, page: UUID, z: Int64) -> Element? {
        switch row.shape {
        case .stroke:
            guard let id = row.blob16(2), let tool = row.uint8(3), let rgba = row.uint32(4), let width = row.uint16(5),
                  let channelBits = row.uint8(6), let count = row.int64(7), let codecValue = row.uint8(8),
                  let crc = row.uint32(9), let samples = row.blob(10) else { return nil }
            guard (0...Int64(PageFile.maxSamplesPerStroke)).contains(count) else { return nil }
            let fields = samples.withUnsafeBytes {
                RowChecksum.stroke(page: page, id: id, tool: tool, rgba: rgba, width: width, channels: channelBits,
                                   codec: codecValue, sampleCount: UInt32(count), samples: $0)
            }
            guard UInt32(RowChecksum.stored(fields: fields, z: z)) == crc else { return nil }
            return samples.withUnsafeBytes {
                SQLiteContentStore.stroke(id: id, tool: tool, rgba: rgba, width: width, channels: channelBits,
                                          count: Int(count), codec: codecValue, samples: $0)
            }.map { .stroke($0) }
        case .image:
            guard let id = row.blob16(2), let asset = row.blob16(3), let x = row.int32(4), let y = row.int32(5),
                  let w = row.int32(6), let h = row.int32(7), let rotation = row.int32(8), let crc = row.uint32(9) else { return nil }
            let frame = QuantizedRect(x: x, y: y, width: w, height: h)
            let fields = RowChecksum.image(page: page, id: id, asset: asset, frame: frame, rotation: rotation)
            guard UInt32(RowChecksum.stored(fields: fields, z: z)) == crc else { return nil }
            return .image(ImageElement(id: id, assetID: asset, frame: frame, rotation: rotation))
        case .unknown:
            guard let kind = row.uint8(3), let crc = row.uint32(4), let payload = row.blob(5), payload.count >= 16,
                  kind != PageFile.Kind.stroke, kind != PageFile.Kind.image else { return nil }
            let fields = payload.withUnsafeBytes { RowChecksum.unknown(page: page, kind: kind, payload: $0) }
            guard UInt32(RowChecksum.stored(fields: fields, z: z)) == crc,
                  let element = try? UnknownElement(kind: kind, payload: Data(payload)), element.id == row.blob16(2) else { return nil }
            return .unknown(element)
        case .page:
            return nil
        }
    }

    /// The pages on the freelist, when the header is readable: they can hold old versions of rows
    /// with valid checksums (a deleted stroke), so they are not searched.
    static func freePages(_ bytes: [UInt8], pageSize: Int) -> Set<Int> {
        guard bytes.count >= 100, Array(bytes[0..<16]) == Array("SQLite format 3\0".utf8) else { return [] }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        let pageCount = bytes.count / pageSize
        var free = Set<Int>()
        var trunk = u32(32)
        while trunk >= 1, trunk <= pageCount, free.insert(trunk - 1).inserted {
            let base = (trunk - 1) * pageSize
            let count = u32(base + 4)
            guard count <= (pageSize - 8) / 4 else { break }
            for k in 0..<count {
                let leaf = u32(base + 8 + 4 * k)
                if leaf >= 1, leaf <= pageCount { free.insert(leaf - 1) }
            }
            trunk = u32(base)
        }
        return free
    }

    /// The page size: the header's when it is a power of two the file is made of, else the size
    /// at which the pages start like b-tree pages.
    static func pageSize(_ bytes: [UInt8]) -> Int {
        if bytes.count >= 100 {
            let raw = Int(bytes[16]) << 8 | Int(bytes[17])
            let size = raw == 1 ? 65_536 : raw
            if size >= 512, size & (size - 1) == 0, Array(bytes[0..<16]) == Array("SQLite format 3\0".utf8),
               bytes.count % size == 0 || bytes.count > size { return size }  // a cut file keeps its header's size
        }
        // Of the sizes the file is a whole number of pages of, the share of page starts (page 1
        // aside) that hold a b-tree page type. A multiple of the true size scores about as well
        // (its page starts are some of the true ones) and a fraction of it far worse (its extra
        // starts fall inside pages): the smallest size within 10 % of the best share is the one.
        var shares: [(size: Int, share: Double)] = []
        // A file that is no whole number of pages of any size (cut short) is tried at every size.
        let sizes = [512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768, 65_536].filter { bytes.count >= 2 * $0 }
        let whole = sizes.filter { bytes.count % $0 == 0 }
        for size in whole.isEmpty ? sizes : whole {
            var hits = 0, starts = 0
            for start in stride(from: size, to: bytes.count, by: size) {
                starts += 1
                if [2, 5, 10, 13].contains(bytes[start]) { hits += 1 }
            }
            shares.append((size, Double(hits) / Double(max(starts, 1))))
        }
        guard let best = shares.map(\.share).max(), best > 0 else { return bytes.count >= 4_096 ? 4_096 : 0 }
        return shares.first { $0.share >= 0.9 * best }!.size
    }
}

extension SQLiteContentStore {
    /// A stroke from a row's values, its checksum already checked; nil when they cannot be one
    /// (unknown channel bits or codec, samples that do not decode exactly).
    static func stroke(id: UUID, tool: UInt8, rgba: UInt32, width: UInt16, channels bits: UInt8, count: Int,
                       codec codecValue: UInt8, samples raw: UnsafeRawBufferPointer) -> Stroke? {
        let channels = OptionalChannels(rawValue: bits)
        guard OptionalChannels.all.isSuperset(of: channels), let codec = SampleCodecID(rawValue: codecValue) else { return nil }
        if codec == .fixed16, raw.count != StrokeBlob.byteCount(samples: count, channels: channels) { return nil }
        var reader = ByteReader(raw)
        guard let (samples, values) = try? codec.decodeSamples(count: count, channels: channels, from: &reader),
              codec == .fixed16 || reader.isAtEnd else { return nil }
        let ink = Ink(tool: Tool(rawValue: tool), color: RGBA8(r: UInt8(rgba >> 24), g: UInt8(truncatingIfNeeded: rgba >> 16),
                                                             b: UInt8(truncatingIfNeeded: rgba >> 8), a: UInt8(truncatingIfNeeded: rgba)),
                      width: width)
        var stroke = Stroke(id: id, ink: ink, samples: samples)
        var next = values.makeIterator()
        if channels.contains(.azimuth) { stroke.azimuth = next.next() }
        if channels.contains(.altitude) { stroke.altitude = next.next() }
        if channels.contains(.opacity) { stroke.opacity = next.next() }
        return stroke
    }
}

/// Cells of SQLite's b-tree leaf pages (https://sqlite.org/fileformat2.html §1.6), found by trying
/// every offset of every page.
struct RawReader {
    enum Shape { case page, stroke, image, unknown }

    /// A record's values as serial types and byte ranges of its payload.
    struct Row {
        var shape: Shape
        var rowid: Int64
        var payload: [UInt8]
        var columns: [(type: Int64, start: Int, length: Int)]

        func int64(_ i: Int) -> Int64? {
            let c = columns[i]
            switch c.type {
            case 8: return 0
            case 9: return 1
            case 1...6:
                var v = Int64(Int8(bitPattern: payload[c.start]))
                for k in 1..<c.length { v = v << 8 | Int64(payload[c.start + k]) }
                return v
            default: return nil
            }
        }
        func int32(_ i: Int) -> Int32? { int64(i).flatMap { Int32(exactly: $0) } }
        func uint32(_ i: Int) -> UInt32? { int64(i).flatMap { UInt32(exactly: $0) } }
        func uint16(_ i: Int) -> UInt16? { int64(i).flatMap { UInt16(exactly: $0) } }
        func uint8(_ i: Int) -> UInt8? { int64(i).flatMap { UInt8(exactly: $0) } }
        func blob(_ i: Int) -> [UInt8]? {
            let c = columns[i]
            guard c.type >= 12, c.type % 2 == 0 else { return nil }
            return Array(payload[c.start..<(c.start + c.length)])
        }
        func blob16(_ i: Int) -> UUID? {
            guard let b = blob(i), b.count == 16 else { return nil }
            return b.withUnsafeBytes { UUID.read16($0) }
        }
    }

    let bytes: [UInt8]
    let pageSize: Int
    /// Pages (0-based) not searched: the freelist's.
    var skipped: Set<Int> = []
    var pageCount: Int { bytes.count / pageSize }

    /// Calls `body` with every cell of a known shape found in the file.
    mutating func scan(_ body: (Row) -> Void) {
        for page in 0..<pageCount where !skipped.contains(page) {
            let base = page * pageSize
            let first = page == 0 ? 100 + 8 : 8  // past the file header and the smallest page header
            var offset = first
            while offset < pageSize - 4 {
                // Every offset, even inside a cell just found: a false find must not hide a row.
                if let (row, _) = cell(at: base + offset, pageBase: base) { body(row) }
                offset += 1
            }
        }
    }

    private func varint(_ at: Int, limit: Int) -> (Int64, Int)? {
        var v: Int64 = 0
        for k in 0..<9 {
            guard at + k < limit else { return nil }
            let b = bytes[at + k]
            if k == 8 { return (v << 8 | Int64(b), at + 9) }
            v = v << 7 | Int64(b & 0x7F)
            if b & 0x80 == 0 { return (v, at + k + 1) }
        }
        return nil
    }

    /// Bytes of a payload of `total` bytes kept on the leaf page (the rest overflows).
    private func localSize(_ total: Int, index: Bool) -> Int {
        let u = pageSize
        let maxLocal = index ? (u - 12) * 64 / 255 - 23 : u - 35
        guard total > maxLocal else { return total }
        let minLocal = (u - 12) * 32 / 255 - 23
        let k = minLocal + (total - minLocal) % (u - 4)
        return k <= maxLocal ? k : minLocal
    }

    /// A cell of a known row shape starting at `at`: as a table-leaf cell (payload size, rowid)
    /// for pages and strokes, or an index-leaf cell (payload size) for images and unknown elements.
    private func cell(at: Int, pageBase: Int) -> (Row, Int)? {
        let pageEnd = pageBase + pageSize
        guard let (size, afterSize) = varint(at, limit: pageEnd), size > 0, size < 1 << 30 else { return nil }
        // Table leaf: a rowid follows the payload size.
        if let (rowid, afterRowid) = varint(afterSize, limit: pageEnd),
           let row = record(Int(size), start: afterRowid, pageEnd: pageEnd, index: false, rowid: rowid) {
            return row
        }
        return record(Int(size), start: afterSize, pageEnd: pageEnd, index: true, rowid: 0)
    }

    private func record(_ size: Int, start: Int, pageEnd: Int, index: Bool, rowid: Int64) -> (Row, Int)? {
        // The record header lies in the local part: parse it before gathering any overflow.
        let local = localSize(size, index: index)
        guard start + local + (local < size ? 4 : 0) <= pageEnd else { return nil }
        guard let (headerSize, afterHeaderSize) = varint(start, limit: start + local), headerSize >= 2, headerSize <= 64,
              Int(headerSize) <= local else { return nil }
        var types: [Int64] = []
        var at = afterHeaderSize
        while at < start + Int(headerSize) {
            guard let (t, next) = varint(at, limit: start + Int(headerSize)) else { return nil }
            types.append(t)
            at = next
        }
        guard at == start + Int(headerSize) else { return nil }
        guard let shape = Self.shape(types, index: index) else { return nil }
        var columns: [(type: Int64, start: Int, length: Int)] = []
        var body = Int(headerSize)
        for t in types {
            let length: Int
            switch t {
            case 0, 8, 9: length = 0
            case 1, 2, 3, 4: length = Int(t)
            case 5: length = 6
            case 6, 7: length = 8
            default: length = Int((t - 12) / 2)
            }
            columns.append((t, body, length))
            body += length
        }
        guard body == size else { return nil }
        // The payload: local bytes, then the overflow chain (4-byte next page, then content).
        var payload = Array(bytes[start..<(start + local)])
        var end = start + local
        if local < size {
            var next = Int(bytes[end]) << 24 | Int(bytes[end + 1]) << 16 | Int(bytes[end + 2]) << 8 | Int(bytes[end + 3])
            end += 4
            var hops = 0
            while payload.count < size {
                guard next >= 1, next <= pageCount, hops < pageCount else { return nil }
                let base = (next - 1) * pageSize
                let take = min(size - payload.count, pageSize - 4)
                payload += bytes[(base + 4)..<(base + 4 + take)]
                next = Int(bytes[base]) << 24 | Int(bytes[base + 1]) << 16 | Int(bytes[base + 2]) << 8 | Int(bytes[base + 3])
                hops += 1
            }
        }
        return (Row(shape: shape, rowid: rowid, payload: payload, columns: columns), end)
    }

    /// Which of schema 3's rows a record's serial types can be.
    private static func shape(_ t: [Int64], index: Bool) -> Shape? {
        func isInt(_ v: Int64) -> Bool { (1...6).contains(v) || v == 8 || v == 9 }
        func isBlob(_ v: Int64, _ length: Int? = nil) -> Bool { v >= 12 && v % 2 == 0 && (length == nil || (v - 12) / 2 == Int64(length!)) }
        if !index {
            if t.count == 5, t[0] == 0, isBlob(t[1], 16), isInt(t[2]), isInt(t[3]), isInt(t[4]) { return .page }
            if t.count == 11, isInt(t[0]), isInt(t[1]), isBlob(t[2], 16), (3...9).allSatisfy({ isInt(t[$0]) }), isBlob(t[10]) { return .stroke }
            return nil
        }
        if t.count == 10, isInt(t[0]), isInt(t[1]), isBlob(t[2], 16), isBlob(t[3], 16), (4...9).allSatisfy({ isInt(t[$0]) }) { return .image }
        if t.count == 6, isInt(t[0]), isInt(t[1]), isBlob(t[2], 16), isInt(t[3]), isInt(t[4]), isBlob(t[5]) { return .unknown }
        return nil
    }
}
