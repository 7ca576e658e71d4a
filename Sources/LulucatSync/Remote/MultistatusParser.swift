// Reads a WebDAV 207 multistatus (RFC 4918 §14.16) into names, ETags and sizes.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

final class MultistatusParser: NSObject, XMLParserDelegate {
    private var entries: [(path: String, entry: RemoteEntry)] = []
    private var text = ""
    private var href: String?
    private var etag: String?
    private var size: Int?
    private var isFolder = false
    private var inResponse = false
    private var sawMultistatus = false

    /// The entries, named by the last segment of their href (percent-decoded); nil when the
    /// bytes are not a DAV multistatus.
    static func parse(_ data: Data) -> [RemoteEntry]? { parseWithPaths(data)?.map(\.entry) }

    /// The entries with their href's path (scheme and host removed, still percent-encoded).
    static func parseWithPaths(_ data: Data) -> [(path: String, entry: RemoteEntry)]? {
        let p = MultistatusParser()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = p
        guard parser.parse(), p.sawMultistatus else { return nil }
        return p.entries
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        text = ""
        guard namespaceURI == "DAV:" else { return }
        switch name {
        case "multistatus": sawMultistatus = true
        case "response": inResponse = true; href = nil; etag = nil; size = nil; isFolder = false
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
                entries.append((String(path), RemoteEntry(name: name, etag: etag, size: size, isFolder: isFolder)))
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
