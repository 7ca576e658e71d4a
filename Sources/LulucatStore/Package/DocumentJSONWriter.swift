// document.json's bytes without encoding again what did not change: the page list is written by
// hand (the very bytes JSONEncoder writes, package-format.md), each page's object kept from the
// last write while its entry is unchanged; the few other keys go through JSONEncoder as before.

import Foundation

/// Writes document.json's bytes, exactly `PackageJSON.encode(_:)`'s, encoding only the page
/// entries that changed since its last call: a page added to a 2,000-page document encodes one
/// page object and copies the other 1,999 (issue 34). A session keeps one for its document.
package struct DocumentJSONWriter {
    /// Each page's object as last written (its lines, indented as in the file, no separator),
    /// with the entry it encodes.
    private var objects: [UUID: (entry: PageEntry, bytes: [UInt8])] = [:]

    package init() {}

    /// `"pages" : [` with no element, as JSONEncoder writes it at the top level.
    private static let emptyPages = Array("\"pages\" : [\n\n  ]".utf8)

    /// The bytes of `document` as document.json holds them (`PackageJSON.encode(document)`).
    package mutating func encode(_ document: DocumentMetadata) -> [UInt8] {
        var rest = document
        rest.pages = []
        let head = PackageJSON.encode(rest)
        // A string value's quotes and newlines are escaped, so the key is found only as the key.
        guard !document.pages.isEmpty, let at = head.firstRange(of: Self.emptyPages) else { return head }
        var out: [UInt8] = []
        out.reserveCapacity(head.count + document.pages.count * 330)
        out.append(contentsOf: head[..<at.lowerBound])
        out.append(contentsOf: "\"pages\" : [\n".utf8)
        for (i, page) in document.pages.enumerated() {
            if i > 0 { out.append(contentsOf: ",\n".utf8) }
            if let kept = objects[page.id], kept.entry == page {
                out.append(contentsOf: kept.bytes)
            } else {
                let bytes = Self.object(page)
                objects[page.id] = (page, bytes)
                out.append(contentsOf: bytes)
            }
        }
        out.append(contentsOf: "\n  ]".utf8)
        out.append(contentsOf: head[at.upperBound...])
        // Objects of pages no longer listed go once they outnumber the listed ones (amortized:
        // that takes as many changes as there are pages).
        if objects.count > 2 * document.pages.count + 64 {
            let listed = Set(document.pages.map(\.id))
            objects = objects.filter { listed.contains($0.key) }
        }
        return out
    }

    /// One page's object, indented as an element of the top-level `pages` array, keys sorted:
    /// what JSONEncoder (`.sortedKeys, .prettyPrinted`) writes for a `PageEntry` there.
    static func object(_ p: PageEntry) -> [UInt8] {
        var s = "    {\n      \"assets\" : ["
        if p.assets.isEmpty {
            s += "\n\n      ]"
        } else {
            s += "\n" + p.assets.map { "        \"\($0.uuidString)\"" }.joined(separator: ",\n") + "\n      ]"
        }
        s += ",\n      \"created\" : \"" + ISO8601.string(p.created) + "\""
        s += ",\n      \"elementCount\" : " + String(p.elementCount)
        s += ",\n      \"height\" : " + String(p.height)
        s += ",\n      \"id\" : \"" + p.id.uuidString + "\""
        s += ",\n      \"modified\" : \"" + ISO8601.string(p.modified) + "\""
        s += ",\n      \"width\" : " + String(p.width) + "\n    }"
        return Array(s.utf8)
    }
}
