// Reads the XML documents an S3 endpoint sends back: a ListObjectsV2 page (`ListBucketResult`),
// an error (`Error`: Code, Message), and a multipart upload's creation and completion. Untrusted bytes: the same guard as
// the WebDAV multistatus (`MultistatusParser.isPlainMarkup`: no DTD, entity or processing
// instruction reaches FoundationXML), element text bounded, elements matched by local name.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One page of a ListObjectsV2 listing.
struct S3ListPage: Equatable {
    /// An object: its key (decoded when the listing was URL-encoded), ETag and size.
    struct Object: Equatable {
        var key: String
        var etag: String?
        var size: Int?
    }
    var objects: [Object] = []
    /// The common prefixes (each ends with the delimiter).
    var prefixes: [String] = []
    var isTruncated = false
    var nextContinuationToken: String?
}

/// An S3 error reply's code and message.
struct S3ErrorReply: Equatable {
    var code: String
    var message: String
}

final class S3XMLParser: NSObject, XMLParserDelegate {
    private var path: [String] = []
    private var text = ""
    private var page = S3ListPage()
    private var object = S3ListPage.Object(key: "")
    private var sawKey = false
    private var urlEncoded = false
    private var failed = false
    private var root: String?
    private var errorCode = ""
    private var errorMessage = ""
    private var uploadID = ""

    /// A ListObjectsV2 page; nil when the bytes are not one (or a key is not valid percent-encoding
    /// where the listing says it is URL-encoded).
    static func listPage(_ bytes: [UInt8]) -> S3ListPage? {
        guard let p = parse(bytes), p.root == "ListBucketResult", !p.failed else { return nil }
        return p.page
    }

    /// An error reply's code and message; nil when the bytes are not an S3 error.
    static func error(_ bytes: [UInt8]) -> S3ErrorReply? {
        guard !bytes.isEmpty, let p = parse(bytes), p.root == "Error", !p.errorCode.isEmpty else { return nil }
        return S3ErrorReply(code: p.errorCode, message: p.errorMessage)
    }

    /// The UploadId of an InitiateMultipartUploadResult (1...1024 bytes); nil otherwise.
    static func uploadID(_ bytes: [UInt8]) -> String? {
        guard let p = parse(bytes), p.root == "InitiateMultipartUploadResult" else { return nil }
        let id = p.uploadID.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty || id.utf8.count > 1024 ? nil : id
    }

    /// Whether the bytes are a CompleteMultipartUploadResult (a completion can answer 200 with an
    /// Error document instead).
    static func isCompletion(_ bytes: [UInt8]) -> Bool { parse(bytes)?.root == "CompleteMultipartUploadResult" }

    private static func parse(_ bytes: [UInt8]) -> S3XMLParser? {
        let data = Data(bytes)
        guard MultistatusParser.isPlainMarkup(data) else { return nil }
        let p = S3XMLParser()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = p
        guard parser.parse() else { return nil }
        return p
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if root == nil { root = name }
        path.append(name)
        text = ""
        if path == ["ListBucketResult", "Contents"] { object = S3ListPage.Object(key: ""); sawKey = false }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if text.utf8.count < 4096 { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        defer { path.removeLast(); text = "" }
        let value = text
        switch path {
        case ["ListBucketResult", "EncodingType"]: urlEncoded = value.trimmingCharacters(in: .whitespaces).lowercased() == "url"
        case ["ListBucketResult", "IsTruncated"]: page.isTruncated = value.trimmingCharacters(in: .whitespaces) == "true"
        case ["ListBucketResult", "NextContinuationToken"]: page.nextContinuationToken = value.isEmpty ? nil : value
        case ["ListBucketResult", "Contents", "Key"]: object.key = value; sawKey = true
        case ["ListBucketResult", "Contents", "ETag"]: object.etag = value.isEmpty ? nil : value
        case ["ListBucketResult", "Contents", "Size"]: object.size = Int(value.trimmingCharacters(in: .whitespaces))
        case ["ListBucketResult", "Contents"]: if sawKey { page.objects.append(object) }
        case ["ListBucketResult", "CommonPrefixes", "Prefix"]: page.prefixes.append(value)
        case ["InitiateMultipartUploadResult", "UploadId"]: uploadID = value
        case ["Error", "Code"]: errorCode = value.trimmingCharacters(in: .whitespacesAndNewlines)
        case ["Error", "Message"]: errorMessage = value.trimmingCharacters(in: .whitespacesAndNewlines)
        default: break
        }
    }

    func parserDidEndDocument(_ parser: XMLParser) {
        // EncodingType may come after the keys: decode at the end.
        guard urlEncoded else { return }
        func decode(_ s: String) -> String? { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
        for i in page.objects.indices {
            guard let k = decode(page.objects[i].key) else { failed = true; return }
            page.objects[i].key = k
        }
        for i in page.prefixes.indices {
            guard let k = decode(page.prefixes[i]) else { failed = true; return }
            page.prefixes[i] = k
        }
    }
}
