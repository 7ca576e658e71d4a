// manifest.json as the store writes it, parsed by hand: the library listing reads one per
// document, and JSONDecoder (with the ids checked as written) cost most of a listing. The fast
// path takes only what it is sure of and gives up (nil) on anything else, which then goes through
// `PackageJSON.decodeManifest`'s JSONDecoder path: so whatever it returns is what that path
// returns, and every error is still that path's (ManifestParserTests checks both on random and
// mutated files).

import Foundation

enum ManifestParser {
    /// The manifest in `bytes`, or nil when this parser cannot vouch for it: anything but one JSON
    /// object holding exactly the manifest's keys (each once, `coverPageID` optional or null) with
    /// values of the expected form (format `lulucat.manifest`, a supported version, canonical ids,
    /// ISO 8601 times `ISO8601.date` takes, a page count of plain digits that is not negative),
    /// strictly valid JSON (whitespace, escapes, UTF-8).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Manifest? {
        var p = Cursor(bytes: bytes)
        var isManifest: Bool?, version: Int?, id: UUID?, title: String?, created: Date?, modified: Date?
        var pageCount: Int?, cover: UUID??
        p.skipSpace()
        guard p.take(0x7B) else { return nil }  // {
        p.skipSpace()
        if p.peek == 0x7D { return nil }  // {}: the required keys are missing
        while true {
            p.skipSpace()
            guard let key = p.plainBytes() else { return nil }
            p.skipSpace()
            guard p.take(0x3A) else { return nil }  // :
            p.skipSpace()
            switch Key(key) {
            case .format:
                // As the store writes it, compared in place; else read (escapes and all) and compared.
                guard isManifest == nil else { return nil }
                if p.takeString(Key.manifestFormat) {
                    isManifest = true
                } else {
                    guard let s = p.string() else { return nil }
                    isManifest = s == Key.manifestFormat.description
                }
            case .formatVersion:
                guard version == nil, let n = p.natural() else { return nil }
                version = n
            case .id:
                guard id == nil, let u = p.canonicalID() else { return nil }
                id = u
            case .title:
                guard title == nil, let s = p.string() else { return nil }
                title = s
            case .created:
                guard created == nil, let s = p.plainBytes(), let d = ISO8601.date(utf8: s) else { return nil }
                created = d
            case .modified:
                guard modified == nil, let s = p.plainBytes(), let d = ISO8601.date(utf8: s) else { return nil }
                modified = d
            case .pageCount:
                guard pageCount == nil, let n = p.natural() else { return nil }
                pageCount = n
            case .coverPageID:
                guard cover == nil else { return nil }
                if p.takeNull() { cover = .some(nil) } else {
                    guard let u = p.canonicalID() else { return nil }
                    cover = .some(u)
                }
            case nil:
                return nil  // a key the manifest does not have: JSONDecoder's path decides
            }
            p.skipSpace()
            if p.take(0x2C) { continue }  // ,
            guard p.take(0x7D) else { return nil }  // }
            break
        }
        p.skipSpace()
        guard p.atEnd, isManifest == true, let version, version >= 1, version <= Manifest.currentFormatVersion,
              let id, let title, let created, let modified, let pageCount else { return nil }
        var m = Manifest(id: id, title: title, created: created, modified: modified, pageCount: pageCount,
                         coverPageID: cover ?? nil)
        m.formatVersion = version
        return m
    }

    /// The manifest's keys, told apart by their bytes without making a string of each.
    private enum Key {
        case format, formatVersion, id, title, created, modified, pageCount, coverPageID

        static let manifestFormat: StaticString = "lulucat.manifest"

        init?(_ b: UnsafeRawBufferPointer) {
            func isKey(_ k: StaticString) -> Bool {
                b.count == k.utf8CodeUnitCount && memcmp(b.baseAddress!, k.utf8Start, b.count) == 0
            }
            switch b.count {
            case 2 where isKey("id"): self = .id
            case 5 where isKey("title"): self = .title
            case 6 where isKey("format"): self = .format
            case 7 where isKey("created"): self = .created
            case 8 where isKey("modified"): self = .modified
            case 9 where isKey("pageCount"): self = .pageCount
            case 11 where isKey("coverPageID"): self = .coverPageID
            case 13 where isKey("formatVersion"): self = .formatVersion
            default: return nil
            }
        }
    }

    /// A read position in the file's bytes.
    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var i = 0

        var atEnd: Bool { i == bytes.count }
        var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while i < bytes.count {
                switch bytes[i] {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1
                default: return
                }
            }
        }

        mutating func take(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }

        mutating func takeNull() -> Bool {
            guard i + 4 <= bytes.count, bytes[i] == 0x6E, bytes[i + 1] == 0x75, bytes[i + 2] == 0x6C, bytes[i + 3] == 0x6C else { return false }
            i += 4
            return true
        }

        /// A number of plain digits (no sign, fraction, exponent or leading zero) that fits an Int.
        mutating func natural() -> Int? {
            let start = i
            var v = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                guard i - start < 18 else { return nil }
                v = v * 10 + Int(bytes[i] - 0x30)
                i += 1
            }
            guard i > start, !(bytes[start] == 0x30 && i - start > 1) else { return nil }
            if let c = peek, c == 0x2E || c == 0x65 || c == 0x45 { return nil }  // . e E
            return v
        }

        /// The bytes of a string without escapes, of printable ASCII (keys, times), in place.
        mutating func plainBytes() -> UnsafeRawBufferPointer? {
            guard take(0x22) else { return nil }
            let start = i
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x22 {
                    i += 1
                    return UnsafeRawBufferPointer(rebasing: bytes[start..<i - 1])
                }
                guard c >= 0x20, c < 0x7F, c != 0x5C else { return nil }
                i += 1
            }
            return nil
        }

        /// Takes the string `text` (plain ASCII, written without escapes) when it is next.
        mutating func takeString(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard i + n + 2 <= bytes.count, bytes[i] == 0x22, bytes[i + n + 1] == 0x22,
                  memcmp(bytes.baseAddress! + i + 1, text.utf8Start, n) == 0 else { return false }
            i += n + 2
            return true
        }

        /// An id in the canonical form (36 bytes, upper-case hexadecimal 8-4-4-4-12), as a string
        /// without escapes.
        mutating func canonicalID() -> UUID? {
            guard i + 38 <= bytes.count, bytes[i] == 0x22, bytes[i + 37] == 0x22,
                  let id = UUID.canonical(utf8: UnsafeRawBufferPointer(rebasing: bytes[(i + 1)..<(i + 37)])) else { return nil }
            i += 38
            return id
        }

        /// A JSON string: escapes decoded, valid UTF-8, no raw control character (as JSON requires).
        mutating func string() -> String? {
            guard take(0x22) else { return nil }
            let start = i
            // The usual title: no escape, so the bytes are the string.
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x22 {
                    let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
                    i += 1
                    return validUTF8(raw) ? String(decoding: raw, as: UTF8.self) : nil
                }
                if c == 0x5C { break }
                guard c >= 0x20 else { return nil }
                i += 1
            }
            guard i < bytes.count else { return nil }
            var out = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            while i < bytes.count {
                let c = bytes[i]
                i += 1
                if c == 0x22 { return validUTF8(out) ? String(decoding: out, as: UTF8.self) : nil }
                guard c >= 0x20 else { return nil }
                guard c == 0x5C else { out.append(c); continue }
                guard let e = peek else { return nil }
                i += 1
                switch e {
                case 0x22, 0x5C, 0x2F: out.append(e)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75:
                    guard var scalar = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard take(0x5C), take(0x75), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        return nil  // a low surrogate alone
                    }
                    guard let s = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: String(Character(s)).utf8)
                default:
                    return nil
                }
            }
            return nil
        }

        /// Whether `text` is well-formed UTF-8 (no overlong form, surrogate or scalar past U+10FFFF).
        private func validUTF8<C: Collection<UInt8>>(_ text: C) -> Bool {
            guard text.contains(where: { $0 >= 0x80 }) else { return true }
            var it = text.makeIterator()
            var decoder = Unicode.UTF8()
            while true {
                switch decoder.decode(&it) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }

        private mutating func hex4() -> UInt32? {
            guard i + 4 <= bytes.count else { return nil }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                i += 1
                switch c {
                case 0x30...0x39: v = v << 4 | UInt32(c - 0x30)
                case 0x41...0x46: v = v << 4 | UInt32(c - 0x41 + 10)
                case 0x61...0x66: v = v << 4 | UInt32(c - 0x61 + 10)
                default: return nil
                }
            }
            return v
        }
    }
}

extension Manifest {
    /// A manifest of the given fields (the parser's; a document's goes through `init(_:)`).
    init(id: UUID, title: String, created: Date, modified: Date, pageCount: Int, coverPageID: UUID?) {
        self.id = id
        self.title = title
        self.created = created
        self.modified = modified
        self.pageCount = pageCount
        self.coverPageID = coverPageID
    }
}
