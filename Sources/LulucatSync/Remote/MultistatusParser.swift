// Reads a WebDAV 207 multistatus (RFC 4918 §14.16) into names, ETags and sizes.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

final class MultistatusParser: NSObject, XMLParserDelegate {
    private var entries: [(path: String, entry: RemoteEntry, lastModified: String?)] = []
    private var text = ""
    private var href: String?
    private var etag: String?
    private var size: Int?
    private var lastModified: String?
    private var isFolder = false
    private var inResponse = false
    private var sawMultistatus = false

    /// The entries, named by the last segment of their href (percent-decoded); nil when the
    /// bytes are not a DAV multistatus.
    static func parse(_ data: Data) -> [RemoteEntry]? { parseWithPaths(data)?.map(\.entry) }

    /// The entries with their href's path (scheme and host removed, still percent-encoded) and
    /// their `getlastmodified` as the server wrote it.
    static func parseWithPaths(_ data: Data) -> [(path: String, entry: RemoteEntry, lastModified: String?)]? {
        guard isPlainMarkup(data) else { return nil }
        let p = MultistatusParser()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = p
        guard parser.parse(), p.sawMultistatus else { return nil }
        return p.entries
    }

    /// Whether a reply holds only what a multistatus needs, before FoundationXML sees a byte:
    /// UTF-8 (a declaration naming another encoding, a UTF-16/32 byte order mark or a NUL byte is
    /// refused, so nothing hides in another encoding), no document type, entity or notation
    /// declaration, no processing instruction but the leading XML declaration (a processing
    /// instruction, a `<!NOTATION>` or an unparsed entity made FoundationXML crash with SIGSEGV;
    /// issue 30), and no CDATA section. Comments are allowed.
    static func isPlainMarkup(_ data: Data) -> Bool {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard !bytes.contains(0) else { return false }
        var i = 0
        let declaration = Array("<?xml".utf8)
        if bytes.starts(with: declaration), bytes.count > 5, bytes[5] == 0x20 || bytes[5] == 0x09 || bytes[5] == 0x0A || bytes[5] == 0x0D {
            guard let end = firstIndex(of: [0x3F, 0x3E], in: bytes, from: 5) else { return false }  // "?>"
            let text = String(decoding: bytes[5..<end], as: UTF8.self).lowercased()
            if let r = text.range(of: "encoding") {
                let value = text[r.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }.prefix { $0 != "\"" && $0 != "'" }
                guard value == "utf-8" || value == "utf8" else { return false }
            }
            i = end + 2
        }
        while i + 1 < bytes.count {
            if bytes[i] == 0x3C {  // "<"
                if bytes[i + 1] == 0x3F { return false }  // "<?": a processing instruction
                if bytes[i + 1] == 0x21 {  // "<!": only a comment
                    guard i + 3 < bytes.count, bytes[i + 2] == 0x2D, bytes[i + 3] == 0x2D else { return false }
                    guard let end = firstIndex(of: [0x2D, 0x2D, 0x3E], in: bytes, from: i + 4) else { return false }  // "-->"
                    i = end + 3
                    continue
                }
            }
            i += 1
        }
        return true
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for k in start...(bytes.count - needle.count) where bytes[k] == needle[0] {
            if bytes[k..<(k + needle.count)].elementsEqual(needle) { return k }
        }
        return nil
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        text = ""
        guard namespaceURI == "DAV:" else { return }
        switch name {
        case "multistatus": sawMultistatus = true
        case "response": inResponse = true; href = nil; etag = nil; size = nil; lastModified = nil; isFolder = false
        case "collection": if inResponse { isFolder = true }
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if text.utf8.count < 4096 { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        guard namespaceURI == "DAV:", inResponse else { return }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch name {
        case "href": href = value
        case "getetag": etag = value.isEmpty ? nil : value
        case "getcontentlength": size = Int(value)
        case "getlastmodified": lastModified = value.isEmpty ? nil : value
        case "response":
            inResponse = false
            if let h = href {
                // Split the raw href before decoding it, so an encoded "/" stays inside the name
                // (and the name is then refused) instead of making another name.
                var path = Substring(h)
                if let scheme = path.range(of: "://") {
                    path = path[scheme.upperBound...]
                    path = path.firstIndex(of: "/").map { path[$0...] } ?? ""
                }
                while path.hasSuffix("/") { path.removeLast() }
                let last = path.split(separator: "/").last.map(String.init) ?? ""
                let name = last.removingPercentEncoding ?? last
                entries.append((String(path), RemoteEntry(name: name, etag: etag, size: size, isFolder: isFolder), lastModified))
            }
        default: break
        }
        text = ""
    }

    /// Whether two percent-encoded URL paths name the same resource: compared decoded, trailing
    /// slashes ignored.
    static func samePath(_ a: String, _ b: String) -> Bool {
        func normal(_ p: String) -> String {
            var s = Substring(p)
            while s.hasSuffix("/") { s.removeLast() }
            return s.removingPercentEncoding ?? String(s)
        }
        return normal(a) == normal(b)
    }
}

/// HTTP dates (RFC 9110 §5.6.7), as `Date` headers and `getlastmodified` carry them.
enum HTTPDate {
    /// Seconds since 1970 of an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the one form
    /// servers send today; nil for anything else (the obsolete forms are not accepted).
    static func seconds(_ text: String) -> Int64? {
        let u = Array(text.utf8)
        guard u.count == 29, u[3] == 44, u[4] == 32, u[7] == 32, u[11] == 32, u[16] == 32, u[19] == 58, u[22] == 58, u[25] == 32,
              u[26...] == [71, 77, 84][...] else { return nil }  // ", " " " ":" "GMT"
        func number(_ r: Range<Int>) -> Int64? {
            var n: Int64 = 0
            for i in r { guard u[i] >= 48, u[i] <= 57 else { return nil }; n = n * 10 + Int64(u[i] - 48) }
            return n
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
              let second = number(23..<25), let m = months.firstIndex(of: String(decoding: u[8..<11], as: UTF8.self)),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        // Days from 1970-01-01 to the date (the civil-from-days inverse, proleptic Gregorian).
        let month = Int64(m + 1)
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }
}
