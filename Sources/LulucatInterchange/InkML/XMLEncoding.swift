// Decides the encoding of untrusted XML before any parser sees it, and hands the parser UTF-8 only.

import Foundation

/// The bytes the XML parser gets are always UTF-8 that we have checked, declared as UTF-8 (or with
/// no declaration). libxml2 picks its decoder from the first four bytes (XML 1.0 Appendix F) and
/// from the `encoding` of the XML declaration; if either could make it read the bytes differently
/// from how we checked them, markup refused in one encoding slips through in another (`<?a?>` in
/// UTF-16LE without a byte order mark is valid UTF-8 with zero bytes between its characters, and
/// crashed swift-corelibs-foundation's XMLParser). So:
///
/// - UTF-8 (with or without its byte order mark) is read as is;
/// - UTF-16 with a byte order mark is transcoded to UTF-8;
/// - a declaration of ISO-8859-1 (latin1) or US-ASCII is honoured by transcoding to UTF-8; a
///   declaration of UTF-16 on bytes without a byte order mark that are valid UTF-8 is taken as
///   the mistake it is (the bytes are read as UTF-8);
/// - the first bytes of UTF-16 or UTF-32 without a byte order mark, UTF-32 with one, EBCDIC, any
///   other declared encoding, bytes that are not valid UTF-8 and any zero byte (U+0000 is not an
///   XML character) are refused;
/// - a declaration is replaced by `<?xml version="1.0" encoding="UTF-8"?>` (and as many line
///   breaks as it had, so that line numbers stay true).
enum XMLEncoding {
    /// What the first bytes say (XML 1.0 Appendix F).
    enum Detected: Equatable {
        case utf8, utf8BOM, utf16LEBOM, utf16BEBOM
        /// Refused: the name of what it looks like.
        case refused(String)
    }

    static func detect(_ b: [UInt8]) -> Detected {
        func starts(_ p: [UInt8]) -> Bool { b.count >= p.count && Array(b.prefix(p.count)) == p }
        if starts([0x00, 0x00, 0xFE, 0xFF]) || starts([0xFF, 0xFE, 0x00, 0x00])
            || starts([0x00, 0x00, 0xFF, 0xFE]) || starts([0xFE, 0xFF, 0x00, 0x00]) {
            return .refused("UTF-32 (UCS-4)")
        }
        if starts([0xEF, 0xBB, 0xBF]) { return .utf8BOM }
        if starts([0xFE, 0xFF]) { return .utf16BEBOM }
        if starts([0xFF, 0xFE]) { return .utf16LEBOM }
        if starts([0x00, 0x00, 0x00, 0x3C]) || starts([0x3C, 0x00, 0x00, 0x00])
            || starts([0x00, 0x00, 0x3C, 0x00]) || starts([0x00, 0x3C, 0x00, 0x00]) {
            return .refused("UTF-32 (UCS-4) without a byte order mark")
        }
        if starts([0x00, 0x3C, 0x00, 0x3F]) || starts([0x3C, 0x00, 0x3F, 0x00])
            || (b.count >= 2 && (b[0] == 0 || b[1] == 0)) {
            return .refused("UTF-16 without a byte order mark")
        }
        if starts([0x4C, 0x6F, 0xA7, 0x94]) { return .refused("EBCDIC") }
        return .utf8
    }

    /// The bytes as checked UTF-8 with a UTF-8 declaration (or none).
    static func utf8(_ data: Data) throws(InkMLError) -> Data {
        let head = [UInt8](data.prefix(4))
        var text: Data
        var transcoded = false
        switch detect(head) {
        case .refused(let what):
            throw InkMLError(.unsupported, "the file is in \(what); only UTF-8, and UTF-16 with a byte order mark, are read")
        case .utf16LEBOM, .utf16BEBOM:
            guard let s = String(data: data, encoding: .utf16) else {
                throw InkMLError(.malformedXML, "the file starts as UTF-16 but is not valid UTF-16")
            }
            text = Data(s.utf8)
            if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
            transcoded = true
        case .utf8BOM:
            text = data.dropFirst(3)
        case .utf8:
            text = data
        }
        let valid = text.withUnsafeBytes { String(validating: $0, as: UTF8.self) != nil }
        var declaration = try self.declaration(in: text)
        if !valid {
            // Only a Latin-1 declaration explains bytes that are not UTF-8.
            guard let d = declaration, let enc = d.encoding, latin1Names.contains(enc.lowercased()), !transcoded else {
                throw InkMLError(.malformedXML, declaration?.encoding.map { "the file declares the encoding \"\($0)\" but is not valid in it; only UTF-8, and UTF-16 with a byte order mark, are read" }
                                 ?? "the file is not valid UTF-8")
            }
            text = latin1ToUTF8(text)
            declaration = try self.declaration(in: text)
        } else if let d = declaration, let enc = d.encoding?.lowercased(), !transcoded {
            guard utf8Names.contains(enc) || latin1Names.contains(enc) || asciiNames.contains(enc) || enc == "utf-16" else {
                throw InkMLError(.unsupported, "the file declares the encoding \"\(d.encoding!)\"; only UTF-8, and UTF-16 with a byte order mark, are read")
            }
            if asciiNames.contains(enc), text.contains(where: { $0 >= 0x80 }) {
                throw InkMLError(.malformedXML, "the file declares US-ASCII but holds bytes above 127")
            }
            if latin1Names.contains(enc), text.contains(where: { $0 >= 0x80 }) {
                // Valid UTF-8 that says Latin-1: read it as the Latin-1 it says it is.
                text = latin1ToUTF8(text)
                declaration = try self.declaration(in: text)
            }
        }
        if let zero = text.firstIndex(of: 0) {
            throw InkMLError(.malformedXML, "the file holds a zero byte (at offset \(zero - text.startIndex)), which XML does not allow")
        }
        if let d = declaration {
            let newlines = text[d.range].filter { $0 == 0x0A }.count
            var out = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>".utf8)
            out.append(contentsOf: [UInt8](repeating: 0x0A, count: newlines))
            out.append(text[d.range.upperBound...])
            return out
        }
        return Data(text)
    }

    /// Each byte is the code point of the same value.
    static func latin1ToUTF8(_ bytes: Data) -> Data {
        var out = Data()
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for b in bytes {
            if b < 0x80 { out.append(b) } else { out.append(0xC0 | b >> 6); out.append(0x80 | b & 0x3F) }
        }
        return out
    }

    static let utf8Names: Set<String> = ["utf-8", "utf8"]
    static let asciiNames: Set<String> = ["us-ascii", "ascii"]
    static let latin1Names: Set<String> = ["iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1"]

    struct Declaration {
        var range: Range<Data.Index>
        var encoding: String?
    }

    /// The XML declaration at the very start of `text`, if there is one, and its `encoding`.
    /// A declaration that does not end within 1,024 bytes is refused (libxml2 could switch its
    /// decoder on an encoding we have not read).
    static func declaration(in text: Data) throws(InkMLError) -> Declaration? {
        let b = [UInt8](text.prefix(1024))
        let start: [UInt8] = Array("<?xml".utf8)
        guard b.count > 5, Array(b.prefix(5)) == start, [0x20, 0x09, 0x0A, 0x0D].contains(b[5]) else { return nil }
        var end: Int?
        var i = 5
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "?") && b[i + 1] == UInt8(ascii: ">") { end = i + 2; break }
            i += 1
        }
        guard let end else {
            throw InkMLError(.malformedXML, line: 1, column: 1, "the XML declaration does not end within 1,024 bytes")
        }
        let body = String(decoding: b[5..<(end - 2)], as: UTF8.self)
        var encoding: String?
        if let r = body.range(of: "encoding") {
            var rest = body[r.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard rest.first == "=" else {
                throw InkMLError(.malformedXML, line: 1, column: 1, "the XML declaration's encoding has no value")
            }
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard let q = rest.first, q == "\"" || q == "'", let close = rest.dropFirst().firstIndex(of: q) else {
                throw InkMLError(.malformedXML, line: 1, column: 1, "the XML declaration's encoding is not quoted")
            }
            encoding = String(rest[rest.index(after: rest.startIndex)..<close])
        }
        return Declaration(range: text.startIndex..<(text.startIndex + end), encoding: encoding)
    }
}
