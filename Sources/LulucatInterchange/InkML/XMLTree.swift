// Turns InkML bytes into a small element tree with positions, through Foundation's XMLParser.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One XML element as the InkML reader needs it: local name, attributes, children, and (for
/// `<trace>` only) its text, with the line and column of its start tag.
final class XMLElementNode {
    let name: String
    let attributes: [String: String]
    let line: Int
    let column: Int
    var children: [XMLElementNode] = []
    var text = ""
    /// The namespace of an element outside InkML's (kept only around the <ink> element).
    var namespace: String?

    init(name: String, attributes: [String: String], line: Int, column: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
        self.column = column
    }

    /// An attribute by local name, whatever prefix the file gave it (`xml:id`, `id`).
    func attribute(_ local: String) -> String? {
        if let v = attributes[local] { return v }
        for (k, v) in attributes where k.hasSuffix(":" + local) { return v }
        return nil
    }

    /// The element's `xml:id` (or the `id` older drafts used).
    var id: String? { attribute("id") }

    func children(named name: String) -> [XMLElementNode] { children.filter { $0.name == name } }
    func child(named name: String) -> XMLElementNode? { children.first { $0.name == name } }
}

/// Parses bytes into a tree of InkML elements. Elements in another namespace (vendor extensions
/// such as Microsoft's `msink:`) are skipped with their subtrees; text is kept only inside
/// `<trace>`, where the points are.
enum XMLTree {
    static let inkMLNamespace = "http://www.w3.org/2003/InkML"
    static let maxDepth = 200
    /// The elements whose text the reader uses; the text of any other is dropped while parsing.
    static let textElements: Set<String> = ["trace", "annotation", "affine", "matrix"]

    /// The `<ink>` element and the namespace prefixes the file used without declaring them.
    struct Parsed {
        var ink: XMLElementNode
        /// Prefixes declared for the file because it used them undeclared (`inkml:` as the
        /// InkML namespace, any other as a foreign one); empty for a well-formed file.
        var undeclaredPrefixes: [String] = []
    }

    /// libxml2's "namespace prefix is not defined" (XML_NS_ERR_UNDEFINED_NAMESPACE).
    static let undefinedPrefixError = 201

    static func parse(_ data: Data, maxElements: Int) throws(InkMLError) -> Parsed {
        // Checked on the bytes the parser gets, which are UTF-8 declared as UTF-8, so no other
        // encoding can slip markup past the check.
        let text = try utf8(data)
        try refuseUnsafeMarkup(text)
        var code: Int?
        do {
            return Parsed(ink: try parseOnce(text, maxElements: maxElements, code: &code))
        } catch {
            // Some producers write `inkml:` elements (or `emma:` attributes) without declaring
            // the prefix, which XML's namespaces make an error: declare what is missing on the
            // root element and read again (docs/inkml.md, "Elements").
            guard code == undefinedPrefixError else { throw error }
            let prefixes = undeclaredPrefixes(text)
            guard !prefixes.isEmpty, let patched = declaring(prefixes, in: text) else { throw error }
            var again: Int?
            guard let ink = try? parseOnce(patched, maxElements: maxElements, code: &again) else { throw error }
            return Parsed(ink: ink, undeclaredPrefixes: prefixes)
        }
    }

    /// Prefixes of element and attribute names (`<p:name`, `</p:name`, ` p:name=`) that no
    /// `xmlns:p` declares, in order of first use (`xml` and `xmlns` are predefined).
    static func undeclaredPrefixes(_ text: Data) -> [String] {
        let s = String(decoding: text, as: UTF8.self)
        guard let use = try? NSRegularExpression(pattern: "(?:</?|\\s)([A-Za-z_][A-Za-z0-9_.-]*):[A-Za-z_][A-Za-z0-9_.-]*(?=[\\s/>=])"),
              let declaration = try? NSRegularExpression(pattern: "xmlns:([A-Za-z_][A-Za-z0-9_.-]*)\\s*=") else { return [] }
        let ns = s as NSString
        let range = NSRange(location: 0, length: ns.length)
        let declared = Set(declaration.matches(in: s, range: range).map { ns.substring(with: $0.range(at: 1)) })
        var out: [String] = []
        for m in use.matches(in: s, range: range) {
            let p = ns.substring(with: m.range(at: 1))
            if p != "xml", p != "xmlns", !declared.contains(p), !out.contains(p) { out.append(p) }
            if out.count >= 32 { break }
        }
        return out
    }

    /// `text` with `xmlns:p` declarations added to its root start tag: the InkML namespace for
    /// `inkml`, a placeholder (foreign, so skipped inside `<ink>`) for any other prefix.
    static func declaring(_ prefixes: [String], in text: Data) -> Data? {
        let b = [UInt8](text)
        var i = 0
        // The root start tag: the first `<` that opens an element (not `<?`, `<!`, `</`).
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "<") {
                let c = b[i + 1]
                if c == UInt8(ascii: "?") || c == UInt8(ascii: "!") {
                    // Skip to the end of the declaration, comment or doctype.
                    let close: [UInt8] = c == UInt8(ascii: "?") ? Array("?>".utf8) : (b[i...].starts(with: Array("<!--".utf8)) ? Array("-->".utf8) : Array(">".utf8))
                    var j = i + 2
                    while j + close.count <= b.count, !b[j..<(j + close.count)].elementsEqual(close) { j += 1 }
                    i = j + close.count
                    continue
                }
                break
            }
            i += 1
        }
        guard i + 1 < b.count else { return nil }
        var j = i + 1
        while j < b.count, b[j] != 0x20, b[j] != 0x09, b[j] != 0x0A, b[j] != 0x0D, b[j] != UInt8(ascii: ">"), b[j] != UInt8(ascii: "/") { j += 1 }
        let declarations = prefixes.map { p in
            " xmlns:\(p)=\"\(p == "inkml" ? inkMLNamespace : "urn:lulucat:undeclared:\(p)")\""
        }.joined()
        return Data(b[..<j]) + Data(declarations.utf8) + Data(b[j...])
    }

    private static func parseOnce(_ text: Data, maxElements: Int, code: inout Int?) throws(InkMLError) -> XMLElementNode {
        // Pushed to libxml2 in chunks (a stream): given the whole file at once, libxml2 refuses
        // anything over 10 MB ("huge input lookup"), far below our documented limit.
        let parser = XMLParser(stream: InputStream(data: text))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let builder = TreeBuilder(maxElements: maxElements)
        parser.delegate = builder
        let ok = parser.parse()
        if let error = builder.failure { throw error }
        // swift-corelibs-foundation may return true after a fatal error: trust the error first.
        if let error = builder.parseError ?? parser.parserError {
            let errorCode = (error as NSError).code
            code = errorCode
            throw InkMLError(.malformedXML, line: builder.errorLine ?? parser.lineNumber, column: builder.errorColumn ?? parser.columnNumber,
                             "the file is not well-formed XML (\(describe(errorCode)))")
        }
        guard ok, let root = builder.root else {
            throw InkMLError(.malformedXML, line: parser.lineNumber, column: parser.columnNumber, "the file is not well-formed XML")
        }
        // Some producers wrap <ink> in a root of their own (Wacom IoT Paper's <paper>): the
        // first <ink> element, breadth first, is the document.
        guard let ink = firstInk(root) else {
            throw InkMLError(.notInkML, line: root.line, column: root.column,
                             "the root element is <\(root.name)>, not <ink>, and holds no <ink>: this is not an InkML file")
        }
        return ink
    }

    static func firstInk(_ root: XMLElementNode) -> XMLElementNode? {
        if root.name == "ink" { return root }
        var queue = [root]
        var i = 0
        while i < queue.count {
            let node = queue[i]
            if node.name == "ink" && (node.namespace == nil || node.namespace == inkMLNamespace) { return node }
            queue += node.children
            i += 1
        }
        return nil
    }

    /// Refuses markup InkML has no use for and the parser cannot be trusted with:
    /// - entity declarations, which is how XML expands a few bytes into gigabytes;
    /// - attribute-list and notation declarations, and processing instructions without data
    ///   (`<?name?>`): libxml2 reports a missing default value, public or system id, or data as a
    ///   null pointer, which swift-corelibs-foundation's XMLParser reads as a string and crashes
    ///   on (found by `fuzz/run.sh inkml`; `<!ATTLIST x a CDATA #IMPLIED>`, `<!NOTATION n SYSTEM
    ///   "s">`, `<?a?>` each crash it).
    /// A byte search, so such text inside a comment or CDATA section is refused as well.
    static func refuseUnsafeMarkup(_ text: Data) throws(InkMLError) {
        for (keyword, what) in [("<!ENTITY", "XML entities"), ("<!ATTLIST", "XML attribute lists"), ("<!NOTATION", "XML notations")] {
            if let at = offset(of: Array(keyword.utf8), in: text) {
                let (line, column) = lineAndColumn(of: at, in: text)
                throw InkMLError(.unsupported, line: line, column: column,
                                 "the file declares \(what), which InkML does not use; refused for safety")
            }
        }
        if let at = dataLessProcessingInstruction(in: text) {
            let (line, column) = lineAndColumn(of: at, in: text)
            throw InkMLError(.unsupported, line: line, column: column,
                             "a processing instruction without data (<?name?>), which the XML parser cannot read; refused")
        }
    }

    /// The offset of the first `<?name?>` (a target directly followed by `?>`), if any. Each
    /// byte is looked at a bounded number of times: a target ends at the first `?`, `<` or space.
    static func dataLessProcessingInstruction(in text: Data) -> Int? {
        text.withUnsafeBytes { (b: UnsafeRawBufferPointer) -> Int? in
            var i = 0
            while i + 1 < b.count {
                guard b[i] == UInt8(ascii: "<"), b[i + 1] == UInt8(ascii: "?") else { i += 1; continue }
                var j = i + 2
                while j < b.count, b[j] != UInt8(ascii: "?"), b[j] != UInt8(ascii: "<"),
                      b[j] != 0x20, b[j] != 0x09, b[j] != 0x0A, b[j] != 0x0D { j += 1 }
                if j > i + 2, j + 1 < b.count, b[j] == UInt8(ascii: "?"), b[j + 1] == UInt8(ascii: ">") { return i }
                i = max(i + 2, j)
            }
            return nil
        }
    }

    /// The offset of the first occurrence of `needle` in `haystack` (Foundation's
    /// `Data.range(of:)` is many times slower, and this runs over every file).
    static func offset(of needle: [UInt8], in haystack: Data) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        return haystack.withUnsafeBytes { (h: UnsafeRawBufferPointer) -> Int? in
            let first = needle[0], last = h.count - needle.count
            var i = 0
            while i <= last {
                // memchr for the first byte, then compare the rest.
                guard let p = memchr(h.baseAddress! + i, Int32(first), last - i + 1) else { return nil }
                let at = h.baseAddress!.distance(to: UnsafeRawPointer(p))
                if memcmp(h.baseAddress! + at, needle, needle.count) == 0 { return at }
                i = at + 1
            }
            return nil
        }
    }

    /// 1-based line and column of a byte offset.
    static func lineAndColumn(of offset: Int, in text: Data) -> (Int, Int) {
        var line = 1, column = 1
        for byte in text.prefix(offset) {
            if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return (line, column)
    }

    /// The bytes as UTF-8, which is what we hand the parser (see `XMLEncoding`).
    static func utf8(_ data: Data) throws(InkMLError) -> Data { try XMLEncoding.utf8(data) }

    static func describe(_ code: Int) -> String {
        switch code {
        case 4: return "the document is empty"
        case 5: return "the file ends before the document does"
        case 9: return "an invalid character"
        case 23: return "an entity reference is not terminated"
        case 26: return "an undeclared entity"
        case 38, 39: return "an attribute is malformed"
        case 40, 41: return "an attribute value is not quoted"
        case 64: return "no document element"
        case 68: return "a name is malformed"
        case 73: return "\">\" expected"
        case 76: return "an end tag does not match its start tag"
        case 85: return "extra content after the document element"
        case 201: return "a namespace prefix is used without being declared"
        default: return "XML parser error \(code)"
        }
    }
}

private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: XMLElementNode?
    var failure: InkMLError?
    var parseError: Error?
    var errorLine: Int?
    var errorColumn: Int?
    private var stack: [XMLElementNode] = []
    /// Depth inside an element of a foreign namespace whose subtree we skip.
    private var skipping = 0
    /// Depth inside the first <ink> element (0 outside it).
    private var insideInk = 0
    private var count = 0
    private let maxElements: Int

    init(maxElements: Int) { self.maxElements = maxElements }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        if failure != nil { return }
        if skipping > 0 { skipping += 1; return }
        // Foreign elements are skipped with their content inside <ink>; around it (a wrapper
        // root) they are kept, as the path to the <ink>.
        let foreign = namespaceURI.map { !$0.isEmpty && $0 != XMLTree.inkMLNamespace } ?? false
        if foreign, insideInk > 0 {
            skipping = 1
            return
        }
        count += 1
        // The tree is walked recursively: bound its depth well below what a stack holds.
        if stack.count >= XMLTree.maxDepth {
            failure = InkMLError(.tooLarge, line: parser.lineNumber, column: parser.columnNumber,
                                 "elements nested more than \(XMLTree.maxDepth) deep")
            parser.abortParsing()
            return
        }
        if count > maxElements {
            failure = InkMLError(.tooLarge, line: parser.lineNumber, column: parser.columnNumber,
                                 "more than \(maxElements) elements")
            parser.abortParsing()
            return
        }
        let node = XMLElementNode(name: elementName, attributes: attributeDict,
                                  line: parser.lineNumber, column: parser.columnNumber)
        node.namespace = foreign ? namespaceURI : nil
        if elementName == "ink" && (!foreign || stack.isEmpty) || insideInk > 0 { insideInk += 1 }
        if let parent = stack.last { parent.children.append(node) } else if root == nil { root = node }
        stack.append(node)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        if skipping > 0 { skipping -= 1; return }
        _ = stack.popLast()
        if insideInk > 0 { insideInk -= 1 }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        if parseError == nil {
            parseError = error
            errorLine = parser.lineNumber
            errorColumn = parser.columnNumber
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard skipping == 0, let top = stack.last, XMLTree.textElements.contains(top.name) else { return }
        top.text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        guard skipping == 0, let top = stack.last, top.name == "trace" else { return }
        top.text += String(decoding: CDATABlock, as: UTF8.self)
    }
}
