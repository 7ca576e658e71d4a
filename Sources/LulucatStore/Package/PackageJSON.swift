// document.json and manifest.json: their Codable models, dates in ISO 8601, keys in a stable order.
// Specified in docs/package-format.md.

import Foundation
import LulucatInk

/// One page as document.json lists it: what a page list or sidebar shows without loading the
/// page (`DocumentSession.pageEntries()`, `ReadOnlySession.pageEntries()`).
public struct PageEntry: Codable, Sendable, Equatable, Identifiable {
    /// The page's id, the one every page call takes.
    public var id: UUID
    /// Canvas width in 0.1 pt (a US Letter page is 6120).
    public var width: Int32
    /// Canvas height in 0.1 pt (a US Letter page is 7920).
    public var height: Int32
    /// When the page was added (millisecond precision).
    public var created: Date
    /// When the page's content last changed, as of the last save (millisecond precision).
    public var modified: Date
    /// How many elements (strokes and images) the page holds, as of the last save or edit.
    public var elementCount: Int
    /// The assets the page's images show, sorted; lets orphans be found without reading pages.
    public var assets: [UUID]

    package init(id: UUID, canvas: QuantizedSize, created: Date, modified: Date, elementCount: Int, assets: [UUID] = []) {
        self.assets = assets
        self.id = id
        self.width = canvas.width
        self.height = canvas.height
        self.created = created
        self.modified = modified
        self.elementCount = elementCount
    }

    /// `width` and `height` as one size, in 0.1 pt.
    public var canvasSize: QuantizedSize { QuantizedSize(width: width, height: height) }

    /// Brings the element count, canvas size and asset list in line with the page's content (the
    /// truth). Returns whether anything changed.
    package mutating func reconcile(with content: PageContent) -> Bool {
        reconcile(with: PageSummary(canvasSize: content.canvasSize, elementCount: content.elements.count, sampleCount: 0, assetIDs: content.assetIDs))
    }

    package mutating func reconcile(with content: PageSummary) -> Bool {
        let assets = content.assetIDs.sortedByUUIDString()
        guard elementCount != content.elementCount || canvasSize != content.canvasSize || self.assets != assets else { return false }
        elementCount = content.elementCount
        width = content.canvasSize.width
        height = content.canvasSize.height
        self.assets = assets
        return true
    }
}

/// document.json: the source of truth for a document's metadata and page order
/// (`DocumentSession.document`, `ReadOnlySession.document`).
public struct DocumentMetadata: Codable, Sendable, Equatable {
    /// The version this build writes and the newest it reads.
    package static let currentFormatVersion = 1
    /// The file's format name, `lulucat.document`.
    package var format: String = "lulucat.document"
    /// The file's format version (docs/package-format.md).
    package var formatVersion: Int = DocumentMetadata.currentFormatVersion
    /// The document's id (`DocumentPackage.id`).
    public var id: UUID
    /// The title the user gave it; may be empty, at most 4,096 bytes of UTF-8.
    public var title: String
    /// When the document was made (millisecond precision).
    public var created: Date
    /// When the document last changed (content, pages or title), as of the last save.
    public var modified: Date
    /// The storage engine its pages are kept with (`EngineMigration` moves it to another).
    public var engine: EngineKind
    /// The sample codec new page snapshots are written with.
    public var codec: String
    /// Pages in reading order.
    public var pages: [PageEntry]
    /// The checksum of each asset file the store wrote, by asset id (canonical UUID string):
    /// `crc32c:` and 8 lower-case hexadecimal digits. Checked by `lnote verify` (and so by every
    /// import). Absent in packages written before it existed, and for assets they hold: nothing
    /// to check, read as before.
    public var assetChecksums: [String: String]?

    package init(id: UUID, title: String, created: Date, modified: Date, engine: EngineKind = .snapshot,
                codec: SampleCodecID = .compact, pages: [PageEntry] = []) {
        self.id = id
        self.title = title
        self.created = created
        self.modified = modified
        self.engine = engine
        self.codec = codec.description
        self.pages = pages
    }

    /// `codec` as a codec id (`compact` when the name is unknown).
    package var sampleCodec: SampleCodecID { SampleCodecID(name: codec) ?? .compact }
}

/// manifest.json: the cache the library view reads, one small file per document (an app sees it
/// as `LibraryEntry`).
package struct Manifest: Codable, Sendable, Equatable {
    /// The version this build writes and the newest it reads.
    package static let currentFormatVersion = 1
    package var format: String = "lulucat.manifest"
    package var formatVersion: Int = Manifest.currentFormatVersion
    package var id: UUID
    package var title: String
    package var created: Date
    package var modified: Date
    package var pageCount: Int
    /// The page whose thumbnail is the cover (the first page), or nil for an empty document.
    package var coverPageID: UUID?

    package init(_ document: DocumentMetadata) {
        id = document.id
        title = document.title
        created = document.created
        modified = document.modified
        pageCount = document.pages.count
        coverPageID = document.pages.first?.id
    }
}

/// Encoding and decoding of the package JSON files.
package enum PackageJSON {
    package static let maxFileSize = 16 << 20
    static let maxTitleLength = 4096

    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(ISO8601.string(date))
        }
        return e
    }

    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let s = try c.decode(String.self)
            guard let date = ISO8601.date(s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "'\(s)' is not an ISO 8601 time")
            }
            return date
        }
        return d
    }

    package static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Encoding our own plain values cannot fail.
        var bytes = [UInt8](try! encoder().encode(value))
        bytes.append(0x0A)
        return bytes
    }

    /// The ids of a package JSON file as written, before Foundation parses them: `UUID(uuidString:)`
    /// stops at a NUL and takes lower case, the store takes only the canonical form.
    private struct WrittenIDs: Decodable {
        struct Page: Decodable { var id: String?; var assets: [String]? }
        var id: String?
        var coverPageID: String?
        var pages: [Page]?
        var assetChecksums: [String: String]?
    }

    private static func checkWrittenIDs(_ bytes: [UInt8], path: String) throws(StoreError) {
        guard let ids = try? JSONDecoder().decode(WrittenIDs.self, from: Data(bytes)) else { return }  // reported by the full decode
        try checkWrittenIDs(ids, path: path)
    }

    private static func checkWrittenIDs(_ ids: WrittenIDs, path: String) throws(StoreError) {
        var all = [ids.id, ids.coverPageID].compactMap { $0 }
        for p in ids.pages ?? [] { all += [p.id].compactMap { $0 } + (p.assets ?? []) }
        all += (ids.assetChecksums ?? [:]).keys
        for s in all where !UUID.isCanonicalString(s) {
            throw .corruptFile(path: path, reason: "\(s.debugDescription) is not an id in the canonical form (36 characters, upper-case hexadecimal 8-4-4-4-12)")
        }
    }

    /// Decodes a package JSON file, checking its format name and version.
    static func decodeDocument(_ bytes: [UInt8], path: String) throws(StoreError) -> DocumentMetadata {
        let doc: DocumentMetadata = try decodeCheckingIDs(bytes, path: path, format: "lulucat.document",
                                                          supported: DocumentMetadata.currentFormatVersion)
        var seen = Set<UUID>()
        for p in doc.pages {
            guard seen.insert(p.id).inserted else { throw .corruptFile(path: path, reason: "page \(p.id) is listed twice") }
            guard p.width >= 0, p.height >= 0 else { throw .corruptFile(path: path, reason: "page \(p.id) has a negative canvas size") }
            guard p.elementCount >= 0 else { throw .corruptFile(path: path, reason: "page \(p.id) has a negative element count") }
        }
        guard doc.title.utf8.count <= maxTitleLength else { throw .corruptFile(path: path, reason: "the title is longer than \(maxTitleLength) bytes") }
        guard SampleCodecID(name: doc.codec) != nil else { throw .corruptFile(path: path, reason: "unknown codec '\(doc.codec)'") }
        return doc
    }

    static func decodeManifest(_ bytes: [UInt8], path: String) throws(StoreError) -> Manifest {
        // The manifest as the store writes it, parsed by hand; anything else takes JSONDecoder's path.
        if let m = bytes.withUnsafeBytes(ManifestParser.parse) { return m }
        return try decodeManifestWithDecoder(bytes, path: path)
    }

    /// `decodeManifest` through JSONDecoder alone: the authority the hand parser agrees with.
    static func decodeManifestWithDecoder(_ bytes: [UInt8], path: String) throws(StoreError) -> Manifest {
        let m: Manifest = try decodeCheckingIDs(bytes, path: path, format: "lulucat.manifest", supported: Manifest.currentFormatVersion)
        guard m.pageCount >= 0 else { throw .corruptFile(path: path, reason: "negative page count") }
        return m
    }

    private struct Header: Decodable { var format: String?; var formatVersion: Int? }

    /// The header, the value and the ids as written, from one parse of the file (the file's
    /// object decoded as each of the three). Any failure here is left to the step-by-step path,
    /// which says what is wrong.
    private struct Parsed<T: Decodable>: Decodable {
        var header: Header
        var value: T
        var ids: WrittenIDs?
        init(from decoder: any Decoder) throws {
            header = try Header(from: decoder)
            value = try T(from: decoder)
            ids = try? WrittenIDs(from: decoder)
        }
    }

    /// `decode` followed by the check of the ids as written, in one parse of the file when it is
    /// well formed, instead of three (header, value, ids). A file that fails anywhere is decoded
    /// again step by step, so every error is the one those steps give.
    private static func decodeCheckingIDs<T: Decodable>(_ bytes: [UInt8], path: String, format: String,
                                                        supported: Int) throws(StoreError) -> T {
        if let parsed = try? decoder().decode(Parsed<T>.self, from: Data(bytes)),
           parsed.header.format == format, let version = parsed.header.formatVersion, version >= 1, version <= supported {
            if let ids = parsed.ids { try checkWrittenIDs(ids, path: path) }
            return parsed.value
        }
        let value: T = try decode(bytes, path: path, format: format, supported: supported)
        try checkWrittenIDs(bytes, path: path)
        return value
    }

    private static func decode<T: Decodable>(_ bytes: [UInt8], path: String, format: String, supported: Int) throws(StoreError) -> T {
        let data = Data(bytes)
        let header: Header
        do { header = try decoder().decode(Header.self, from: data) } catch {
            throw .corruptFile(path: path, reason: "not valid JSON (\(describe(error)))")
        }
        guard header.format == format else {
            throw .corruptFile(path: path, reason: "\"format\" is \(header.format.map { "'\($0)'" } ?? "missing"), expected '\(format)'")
        }
        guard let version = header.formatVersion, version >= 1 else {
            throw .corruptFile(path: path, reason: "\"formatVersion\" is missing or invalid")
        }
        guard version <= supported else { throw .unsupportedVersion(path: path, found: version, supported: supported) }
        do { return try decoder().decode(T.self, from: data) } catch {
            throw .corruptFile(path: path, reason: describe(error))
        }
    }

    static func describe(_ error: Error) -> String {
        guard let e = error as? DecodingError else { return "\(error)" }
        func at(_ path: [CodingKey]) -> String {
            path.isEmpty ? "the top level" : path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch e {
        case .keyNotFound(let key, let c): return "key \"\(key.stringValue)\" is missing at \(at(c.codingPath))"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "wrong type at \(at(c.codingPath)): \(c.debugDescription)"
        case .dataCorrupted(let c): return "\(c.debugDescription) at \(at(c.codingPath))"
        @unknown default: return "\(e)"
        }
    }
}

/// ISO 8601 times in UTC with milliseconds: `2026-11-30T16:31:45.123Z`.
enum ISO8601 {
    static func string(_ date: Date) -> String {
        // A time on the millisecond grid (every time we parse or write) must not lose a
        // millisecond to binary rounding: `Date` keeps seconds since 2001 in a Double, so a grid
        // time comes back up to ~0.03 ms off (year 9999). Any other time is truncated.
        let x = date.timeIntervalSince1970 * 1000
        let ms = Int64(abs(x - x.rounded()) < 0.05 ? x.rounded() : x.rounded(.down))
        var secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000)
        let milli = ms - secs * 1000
        var days = secs / 86400
        secs -= days * 86400
        if secs < 0 { secs += 86400; days -= 1 }
        // Civil from days (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func p(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return "\(p(y, 4))-\(p(m, 2))-\(p(d, 2))T\(p(secs / 3600, 2)):\(p(secs / 60 % 60, 2)):\(p(secs % 60, 2)).\(p(milli, 3))Z"
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SS[.f]Z` (any fraction digits, milliseconds kept) or
    /// with a `+HH:MM` / `-HH:MM` offset of at most 14:00; a date that does not exist (February
    /// 30), a lower-case `t` or `z`, or an offset like `+99:99` is refused.
    static func date(_ s: String) -> Date? {
        var s = s
        return s.withUTF8 { date(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// `date(_:)` of the text's UTF-8 bytes, read in place (the manifest parser's times).
    static func date(utf8 u: UnsafeRawBufferPointer) -> Date? {
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= u.count else { return nil }
            var v: Int64 = 0
            for c in u[from..<from + count] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard u.count >= 20, u[4] == 45, u[7] == 45, u[10] == 84, u[13] == 58, u[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
              let se = num(17, 2), (1...12).contains(mo), d >= 1, d <= daysIn(month: mo, year: y), h < 24, mi < 60, se < 61
        else { return nil }
        var i = 19
        // Milliseconds are what the package keeps: further digits are dropped, so that a parsed
        // time writes back exactly as it reads back.
        var milli: Int64 = 0
        if i < u.count && u[i] == 46 {
            i += 1
            let start = i
            while i < u.count, u[i] >= 48 && u[i] <= 57 {
                if i - start < 3 { milli = milli * 10 + Int64(u[i] - 48) }
                i += 1
            }
            guard i > start else { return nil }
            for _ in min(i - start, 3)..<3 { milli *= 10 }
        }
        var offset: Int64 = 0
        guard i < u.count else { return nil }
        if u[i] == 90 {
            i += 1
        } else if u[i] == 43 || u[i] == 45, let oh = num(i + 1, 2), u.count > i + 3, u[i + 3] == 58, let om = num(i + 4, 2),
                  om < 60, oh * 60 + om <= 14 * 60 {  // real offsets run from -12:00 to +14:00
            offset = (oh * 3600 + om * 60) * (u[i] == 43 ? 1 : -1)
            i += 6
        } else { return nil }
        guard i == u.count else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let mp = (mo + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let secs = days * 86400 + h * 3600 + mi * 60 + se - offset
        return Date(timeIntervalSince1970: Double(secs * 1000 + milli) / 1000)
    }
}

/// The checksum of an asset file as document.json records it.
enum AssetChecksum {
    static let prefix = "crc32c:"

    static func of(_ bytes: UnsafeRawBufferPointer) -> String {
        let v = String(CRC32C.checksum(bytes), radix: 16, uppercase: false)
        return prefix + String(repeating: "0", count: 8 - v.count) + v
    }

    static func of(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { of($0) } }

    /// The checksum of a file, read in 1 MiB pieces (an asset is never held whole to check it).
    static func ofFile(_ path: String, fileSystem fs: any FileSystem) throws(FileError) -> String {
        let fd = try fs.open(path, .read)
        defer { try? fs.close(fd) }
        var crc: UInt32 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in Result { () throws(FileError) in try fs.read(fd, into: raw) } }.get()
            if n == 0 { break }
            crc = buffer.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<n]), continuing: crc) }
        }
        let v = String(crc, radix: 16, uppercase: false)
        return prefix + String(repeating: "0", count: 8 - v.count) + v
    }
    static func of(_ data: Data) -> String { data.withUnsafeBytes { of($0) } }

    /// Whether a recorded value has the one form this build writes.
    static func isWellFormed(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == prefix.utf8.count + 8, s.hasPrefix(prefix) else { return false }
        return u.suffix(8).allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
