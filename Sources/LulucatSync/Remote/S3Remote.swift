// A remote in an S3 bucket (AWS S3, Cloudflare R2, MinIO, Garage, OpenStack Swift's s3api):
// ListObjectsV2 to list (paginated), GET, PUT, DELETE, every request signed with SigV4 by our own
// code (S3Signer). Folders are key prefixes; an empty folder is a zero-byte marker object named
// `folder/`. No conditional writes (sync needs none). Every request goes through HTTPTransport:
// each reply bounded while it streams, each request within the round's limits. docs/sync.md §9.3, §9.4.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where an S3 remote keeps its objects: an endpoint, a bucket, a key prefix, a region and how the
/// bucket is addressed. Parsed from `s3://BUCKET[/PREFIX][?endpoint=URL&region=R&style=path|virtual]`.
public struct S3Location: Sendable, Equatable {
    /// How the bucket is named in a request's URL.
    public enum Addressing: String, Sendable {
        /// `https://ENDPOINT/BUCKET/KEY` (MinIO, Garage, Swift s3api; any endpoint).
        case path
        /// `https://BUCKET.ENDPOINT/KEY` (AWS's default; R2 accepts both).
        case virtual
    }

    /// `scheme://host[:port]` of the S3 API, without a path.
    public var endpoint: URL
    /// The bucket's name.
    public var bucket: String
    /// The key prefix of the sync folder, "" or segments separated by "/" (without a trailing "/").
    public var prefix: String
    /// The region signatures name (`us-east-1` unless given; R2 takes `auto`, Garage its own name).
    public var region: String
    /// Path-style or virtual-hosted.
    public var addressing: Addressing

    /// A location given field by field.
    public init(endpoint: URL, bucket: String, prefix: String = "", region: String = "us-east-1", addressing: Addressing = .path) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        self.addressing = addressing
    }

    /// Parses `s3://BUCKET[/PREFIX][?endpoint=URL&region=R&style=path|virtual]` (the prefix
    /// percent-encoded as in any URL). Without `endpoint`, AWS: `https://s3.REGION.amazonaws.com`,
    /// virtual-hosted unless the bucket's name has a dot; with one, path-style unless `style=virtual`.
    /// - Throws: `RemoteError.failed` naming what is wrong: not `s3:`, a bad bucket name, credentials
    ///   in the URL, an unknown parameter, an endpoint that is not `http(s)://host[:port]`.
    public init(url text: String) throws(RemoteError) {
        guard let c = URLComponents(string: text), c.scheme?.lowercased() == "s3" else {
            throw .failed(text, "an S3 remote is written s3://BUCKET/PREFIX?endpoint=URL&region=REGION")
        }
        guard c.user == nil, c.password == nil else {
            throw .failed(text, "put no credentials in the URL: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a netrc file")
        }
        guard let bucket = c.host, S3Location.isBucketName(bucket), c.port == nil else {
            throw .failed(text, "the bucket name must be 3 to 63 of a-z 0-9 . - (starting and ending with a letter or digit)")
        }
        var endpoint: URL?
        var region = "us-east-1", style: Addressing?
        for item in c.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "endpoint":
                guard let u = URL(string: value), let s = u.scheme?.lowercased(), s == "http" || s == "https", u.host != nil,
                      u.user == nil, u.password == nil, u.path.isEmpty || u.path == "/", u.query == nil else {
                    throw .failed(text, "endpoint must be http(s)://HOST[:PORT], without a path or credentials")
                }
                // A default port is left out: the Host header signed must be the one sent.
                let port = u.port.flatMap { (s == "http" && $0 == 80) || (s == "https" && $0 == 443) ? nil : $0 }
                endpoint = URL(string: "\(s)://\(u.host!)" + (port.map { ":\($0)" } ?? ""))
            case "region":
                let regionByte: (UInt8) -> Bool = { b in
                    switch b {
                    case 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F: return true
                    default: return false
                    }
                }
                guard !value.isEmpty, value.utf8.allSatisfy(regionByte) else {
                    throw .failed(text, "region must be a region name such as us-east-1, auto or garage")
                }
                region = value
            case "style":
                guard let a = Addressing(rawValue: value) else { throw .failed(text, "style must be path or virtual") }
                style = a
            default:
                throw .failed(text, "unknown parameter '\(item.name)' (endpoint, region and style are known; credentials never go in the URL)")
            }
        }
        let rawPath = c.percentEncodedPath
        var segments: [String] = []
        for part in rawPath.split(separator: "/") {
            guard let s = String(part).removingPercentEncoding, !s.isEmpty, s != ".", s != "..", !s.contains("/"),
                  !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .failed(text, "the prefix '\(rawPath)' has an empty, '.', '..' or control-character segment")
            }
            segments.append(s)
        }
        let aws = endpoint == nil
        self.init(endpoint: endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!, bucket: bucket,
                  prefix: segments.joined(separator: "/"), region: region,
                  addressing: style ?? (aws && !bucket.contains(".") ? .virtual : .path))
    }

    /// The location as `s3://…` with every field (the remote's identity).
    public var url: String {
        let p = prefix.isEmpty ? "" : "/" + S3Signer.encode(path: prefix)
        return "s3://\(bucket)\(p)?endpoint=\(endpoint.absoluteString)&region=\(region)&style=\(addressing.rawValue)"
    }

    /// A DNS-compliant bucket name: 3...63 of `a-z 0-9 . -`, a letter or digit at both ends.
    package static func isBucketName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        func alnum(_ b: UInt8) -> Bool {
            switch b {
            case 0x61...0x7A, 0x30...0x39: return true
            default: return false
            }
        }
        guard u.count >= 3, u.count <= 63, alnum(u.first!), alnum(u.last!) else { return false }
        return u.allSatisfy { alnum($0) || $0 == 0x2E || $0 == 0x2D } && !name.contains("..")
    }
}

/// One HTTP request as S3Remote makes it, and its reply: the seam a transport plugs into.
package struct S3HTTPRequest: Sendable {
    package var method: String
    package var url: URL
    package var headers: [(String, String)]
    package var body: [UInt8]?
}

/// The reply to an `S3HTTPRequest`: status, headers (names lowercased) and body.
package struct S3HTTPReply: Sendable {
    package var status: Int
    package var headers: [String: String]
    package var body: [UInt8]
    package init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// How S3Remote's requests reach the server. `.lost` may have reached it; `.notSent` did not;
/// `.ended` is the transport's own verdict (a cap, a limit, a lost reply), thrown as it is.
package enum S3TransportFailure: Error, Sendable {
    case notSent(String)
    case lost(String)
    case ended(RemoteError)
}

/// Sends S3Remote's requests: `HTTPS3Transport` (bounded, over `HTTPTransport`), or a test's fake.
package protocol S3Transport: Sendable {
    /// One request and its reply (any status), its body at most `maxBytes` (an error reply's, at
    /// most `HTTPTransport.maxErrorBodyBytes`), or how it failed; `write` says whether a lost
    /// reply leaves the outcome unknown, `path` names the caller's path in errors.
    func send(_ request: S3HTTPRequest, path: String, write: Bool, maxBytes: Int) async -> Result<S3HTTPReply, S3TransportFailure>
}

/// The transport over `HTTPTransport`: every reply bounded while it streams, every request
/// within the limits (the round's `SyncOptions.transfer` and deadline in a round), redirects
/// refused, caches off (docs/sync.md §9.4).
package final class HTTPS3Transport: S3Transport, @unchecked Sendable {
    /// The bounded exchanges (its counters show the largest reply held).
    package let http: HTTPTransport
    /// Requests outside a sync round obey `limits`.
    package init(limits: TransferLimits) { http = HTTPTransport(limits: limits) }

    package func send(_ request: S3HTTPRequest, path: String, write: Bool, maxBytes: Int) async -> Result<S3HTTPReply, S3TransportFailure> {
        var r = URLRequest(url: request.url)
        r.httpMethod = request.method
        for (k, v) in request.headers where k.lowercased() != "host" { r.setValue(v, forHTTPHeaderField: k) }
        if let body = request.body { r.httpBody = Data(body) }
        let reply: HTTPReply
        do throws(RemoteError) {
            // S3Remote counts its requests itself (the same for every transport).
            reply = try await http.send(r, path: path, write: write, maxBytes: maxBytes, errorBodyBytes: HTTPTransport.maxErrorBodyBytes,
                                        statistics: nil)
        } catch {
            return .failure(.ended(error))
        }
        var headers: [String: String] = [:]
        for (k, v) in reply.response.allHeaderFields { if let k = k as? String, let v = v as? String { headers[k.lowercased()] = v } }
        return .success(S3HTTPReply(status: reply.status, headers: headers, body: reply.body))
    }
}

/// A remote in an S3 bucket: objects under a key prefix, listed with ListObjectsV2, read, written
/// and deleted one request each, signed with SigV4. Folders are prefixes; `makeFolder` writes a
/// zero-byte marker `folder/` so an empty folder exists (and a missing one is `notFound`).
public final class S3Remote: Remote, @unchecked Sendable {
    /// Where the objects are.
    public let location: S3Location
    /// `s3://BUCKET/PREFIX?endpoint=…&region=…&style=…`.
    public var identity: String { location.url }
    /// Four blob transfers at once, one on each of the transport's connections to the server.
    public var concurrentTransfers: Int { 4 }
    /// Requests made and bytes moved (a listing of several pages counts each page).
    public let statistics = RemoteStatistics()
    /// The signer; nil when requests go unsigned.
    package let signer: S3Signer?
    let transport: any S3Transport
    /// The clock requests are dated by (a test fixes it).
    let now: @Sendable () -> Date
    /// The largest listing page read (a larger one is `.invalidResponse`, refused as it
    /// streams); the pages of one listing together are bounded by its `maxBytes` too.
    package static let maxListingPageBytes = 16 << 20
    /// The most pages one listing reads (1,000 keys a page on AWS).
    package static let maxListingPages = 10_000
    /// The largest object one `PUT` may carry (S3's limit; sync's objects are far smaller).
    package static let maxPutBytes = 5 << 30
    /// Objects larger than this go up as a multipart upload (a blob is at most 256 MiB, a page
    /// blob typically a few KB to 250 KB: almost every object is one `PUT`).
    package static let multipartThreshold = 32 << 20
    /// The size of each part but the last (S3's minimum is 5 MiB).
    package static let partSize = 16 << 20
    /// This remote's threshold and part size (tests lower them).
    let multipart: (threshold: Int, partSize: Int)
    /// Keys per listing page asked for (`max-keys`); nil: the server's default (1,000 on AWS).
    let listPageSize: Int?

    /// A remote at `location`, with the default limits of ``TransferLimits`` but its silence,
    /// outside a sync round.
    /// - Parameters:
    ///   - location: the endpoint, bucket and key prefix.
    ///   - credentials: the keys requests are signed with; nil: unsigned requests, which only a
    ///     public bucket answers.
    ///   - timeout: outside a sync round, how long the server may send nothing, in seconds (a round
    ///     uses `SyncOptions.transfer`).
    public convenience init(location: S3Location, credentials: S3Credentials?, timeout: TimeInterval = 30) {
        self.init(location: location, credentials: credentials, limits: TransferLimits(silence: .seconds(timeout)))
    }

    /// A remote whose requests outside a sync round obey `limits` (a round's obey
    /// `SyncOptions.transfer` and `SyncOptions.roundDeadline`), every reply bounded as it streams.
    public convenience init(location: S3Location, credentials: S3Credentials?, limits: TransferLimits) {
        self.init(location: location, credentials: credentials, transport: HTTPS3Transport(limits: limits))
    }

    /// Through another transport (tests), dated by `now`.
    package init(location: S3Location, credentials: S3Credentials?, transport: any S3Transport,
                 now: @escaping @Sendable () -> Date = { Date() },
                 multipart: (threshold: Int, partSize: Int) = (S3Remote.multipartThreshold, S3Remote.partSize),
                 listPageSize: Int? = nil) {
        self.listPageSize = listPageSize
        self.location = location
        self.multipart = (multipart.threshold, max(multipart.partSize, 1))
        signer = credentials.map { S3Signer(credentials: $0, region: location.region) }
        self.transport = transport
        self.now = now
    }

    // MARK: Requests

    /// The object key of a caller's path (under the prefix); "" is the prefix itself, as a folder.
    func key(_ path: String, folder: Bool = false) throws(RemoteError) -> String {
        let base = location.prefix.isEmpty ? "" : location.prefix + "/"
        if path.isEmpty && folder { return base }
        guard RemotePath.isSafe(path) else { throw .failed(path, "unsafe remote path") }
        return base + path + (folder ? "/" : "")
    }

    /// The URL's host and path for a key ("" for the bucket), path encoded as SigV4 wants it.
    func hostAndPath(_ key: String) -> (host: String, path: String) {
        let e = location.endpoint
        let port = e.port.map { ":\($0)" } ?? ""
        switch location.addressing {
        case .path: return (e.host! + port, "/" + location.bucket + (key.isEmpty ? "" : "/" + S3Signer.encode(path: key)))
        case .virtual: return (location.bucket + "." + e.host! + port, "/" + S3Signer.encode(path: key))
        }
    }

    /// Signs and sends one request: the only function that talks to the server, through the
    /// transport (`HTTPTransport`: the reply's body at most `maxBytes`, refused as it streams;
    /// unless given, a write's cap, `RemoteLimits.writeReplyBytes`; the round's limits and
    /// deadline). Counts it, turns a lost reply into `.ambiguous` for a write, a 3xx into
    /// `.invalidResponse`, and a 401, 403 or 5xx into an error in words; a limit or cap met is
    /// thrown as the transport gives it; other statuses come back to the caller.
    package func exchange(_ method: String, key: String, query: [(String, String)] = [], body: [UInt8]? = nil,
                          for path: String, write: Bool, maxBytes: Int = RemoteLimits.writeReplyBytes) async throws(RemoteError) -> S3HTTPReply {
        let (host, encodedPath) = hostAndPath(key)
        let payload = body ?? []
        if payload.count > S3Remote.maxPutBytes {
            throw .failed(path, "\(payload.count) bytes is more than one S3 PUT takes (5 GiB); sync's objects are far smaller")
        }
        let payloadHash = payload.isEmpty ? S3Signer.emptyPayloadHash : try S3Signer.sha256Hex(payload)
        let date = S3Signer.amzDate(now())
        var headers: [(String, String)] = [("host", host), ("x-amz-content-sha256", payloadHash), ("x-amz-date", date)]
        if let token = signer?.credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        if let signer {
            let signed = try signer.sign(method: method, encodedPath: encodedPath, query: query, headers: headers,
                                         payloadHash: payloadHash, amzDate: date)
            headers.append(("Authorization", signed.authorization))
        }
        if body != nil { headers.append(("Content-Type", "application/octet-stream")) }
        let queryText = query.map { S3Signer.encode($0.0) + "=" + S3Signer.encode($0.1) }.joined(separator: "&")
        let scheme = location.endpoint.scheme ?? "https"
        guard let url = URL(string: "\(scheme)://\(host)\(encodedPath)" + (queryText.isEmpty ? "" : "?" + queryText)) else {
            throw .failed(path, "no URL for key '\(key)'")
        }
        let result = await transport.send(S3HTTPRequest(method: method, url: url, headers: headers, body: body), path: path, write: write,
                                          maxBytes: maxBytes)
        let reply: S3HTTPReply
        switch result {
        case .failure(.notSent(let why)):
            statistics.record(sent: 0, received: 0)
            throw .failed(path, "\(method): \(why)")
        case .failure(.lost(let why)):
            statistics.record(sent: payload.count, received: 0)
            if write { throw .ambiguous(path, "\(method): \(why)") }
            throw .failed(path, "\(method): \(why)")
        case .failure(.ended(let error)):
            statistics.record(sent: payload.count, received: 0)
            throw error
        case .success(let r):
            statistics.record(sent: payload.count, received: r.body.count)
            reply = r
        }
        let status = reply.status
        if (300..<400).contains(status) && status != 304 {
            let e = S3XMLParser.error(reply.body)
            let moved = e?.code == "PermanentRedirect" || status == 301
                ? ": the bucket is in another region, or needs the other addressing style; set region= (and style=) in the remote's URL" : ""
            throw .invalidResponse(path, "\(method) answered with a redirect (\(status))\(moved), which sync refuses")
        }
        if status == 501 {
            // Not implemented: the server did nothing (Swift s3api answers so to a conditional PUT,
            // which sync never sends). A refusal, never a conflict.
            throw .failed(path, "\(method) answered 501: the server does not implement this request\(errorSuffix(reply))")
        }
        if status == 401 || status == 403 || status >= 500 || (status == 400 && S3XMLParser.error(reply.body)?.code == "AuthorizationHeaderMalformed") {
            let why = explain(status, S3XMLParser.error(reply.body))
            if write && status >= 500 { throw .ambiguous(path, "\(method) answered \(status): \(why)") }
            throw .failed(path, "\(method) answered \(status): \(why)")
        }
        if status == 404, let e = S3XMLParser.error(reply.body), e.code == "NoSuchBucket" {
            throw .failed(path, "\(method) answered 404: the bucket '\(location.bucket)' does not exist at \(location.endpoint.absoluteString)")
        }
        return reply
    }

    /// An error reply in words, by its S3 code.
    func explain(_ status: Int, _ e: S3ErrorReply?) -> String {
        let detail = e.map { " (\($0.code)\($0.message.isEmpty ? "" : ": " + $0.message))" } ?? ""
        switch e?.code {
        case "SignatureDoesNotMatch":
            return "the signature was refused: the secret key (AWS_SECRET_ACCESS_KEY) does not match the access key, or the access key is unknown" + detail
        case "InvalidAccessKeyId": return "the server does not know the access key (AWS_ACCESS_KEY_ID)" + detail
        case "AccessDenied", "AllAccessDisabled":
            return signer == nil
                ? "access denied, and no credentials were given: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a netrc entry" + detail
                : "access denied: the credentials were accepted, but the bucket's or key's policy does not allow this request" + detail
        case "RequestTimeTooSkewed": return "this device's clock is more than 15 minutes away from the server's; set the clock" + detail
        case "ExpiredToken", "TokenRefreshRequired": return "the session token (AWS_SESSION_TOKEN) has expired" + detail
        case "InvalidToken": return "the session token (AWS_SESSION_TOKEN) was refused" + detail
        case "AuthorizationHeaderMalformed": return "the request names the wrong region; set region= in the remote's URL" + detail
        case "SlowDown", "ServiceUnavailable": return "the server asks to slow down; sync again later" + detail
        case "InternalError": return "server error" + detail
        default:
            if status >= 500 { return "server error" + detail }
            if status == 401 || status == 403 { return (signer == nil ? "refused, and no credentials were given" : "refused") + detail }
            return "refused" + detail
        }
    }

    // MARK: Remote

    /// The folder's entries: one ListObjectsV2 per page (delimiter "/"), the folder's own marker
    /// left out; `notFound` when no key starts with the folder's prefix. The pages together are
    /// read up to 64 MiB.
    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        try await list(folder, maxBytes: RemoteLimits.listingBytes)
    }

    /// The folder's entries, as `list(_:)`, its pages read up to `maxBytes` together (each page
    /// also at most 16 MiB): a page that would pass them is refused as it streams.
    public func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry] {
        let prefix = try key(folder, folder: true)
        var entries: [RemoteEntry] = []
        var any = false
        var read = 0
        var token: String?
        var seenTokens: Set<String> = []
        for _ in 0..<S3Remote.maxListingPages {
            var query = [("list-type", "2"), ("delimiter", "/"), ("encoding-type", "url"), ("prefix", prefix)]
            if let listPageSize { query.append(("max-keys", String(listPageSize))) }
            if let token { query.append(("continuation-token", token)) }
            let reply = try await exchange("GET", key: "", query: query, for: folder, write: false,
                                           maxBytes: min(S3Remote.maxListingPageBytes, max(0, maxBytes - read)))
            guard reply.status == 200 else { throw .failed(folder, "ListObjectsV2 answered \(reply.status)\(errorSuffix(reply))") }
            read += reply.body.count
            guard let page = S3XMLParser.listPage(reply.body) else { throw .invalidResponse(folder, "ListObjectsV2 reply is not a listing") }
            for o in page.objects {
                guard o.key.hasPrefix(prefix) else { continue }
                any = true
                let name = String(o.key.dropFirst(prefix.count))
                if name.isEmpty { continue }  // the folder's own marker
                guard RemotePath.isSafeName(name) else { continue }
                entries.append(RemoteEntry(name: name, etag: o.etag, size: o.size))
            }
            for p in page.prefixes {
                guard p.hasPrefix(prefix), p.hasSuffix("/") else { continue }
                any = true
                let name = String(p.dropFirst(prefix.count).dropLast())
                guard RemotePath.isSafeName(name) else { continue }
                entries.append(RemoteEntry(name: name, etag: nil, size: nil, isFolder: true))
            }
            guard page.isTruncated else {
                if !any && !prefix.isEmpty { throw .notFound(folder) }
                return entries
            }
            guard let next = page.nextContinuationToken, seenTokens.insert(next).inserted else {
                throw .invalidResponse(folder, "a truncated listing without a new continuation token")
            }
            token = next
        }
        throw .invalidResponse(folder, "a listing of more than \(S3Remote.maxListingPages) pages")
    }

    /// One GET: the bytes and the ETag; `.invalidResponse` when larger than `maxBytes` (announced
    /// or sent: the transfer is cancelled there, never read whole).
    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let reply = try await exchange("GET", key: try key(path), for: path, write: false, maxBytes: maxBytes)
        if reply.status == 404 { throw .notFound(path) }
        guard reply.status == 200 else { throw .failed(path, "GET answered \(reply.status)\(errorSuffix(reply))") }
        // A transport that did not bound the reply (a test's) is checked here too.
        guard reply.body.count <= maxBytes else { throw .invalidResponse(path, "\(reply.body.count) bytes, more than \(maxBytes)") }
        return (reply.body, reply.headers["etag"])
    }

    /// One PUT of the whole object (S3 replaces objects whole: a cut upload stores nothing), or a
    /// multipart upload above `multipartThreshold`; a lost reply is `.ambiguous`.
    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let key = try key(path)
        if bytes.count > multipart.threshold { return try await putInParts(path, key: key, bytes) }
        let reply = try await exchange("PUT", key: key, body: bytes, for: path, write: true)
        guard reply.status == 200 || reply.status == 201 || reply.status == 204 else {
            throw .failed(path, "PUT answered \(reply.status)\(errorSuffix(reply))")
        }
    }

    /// One DELETE; an object already gone is success (S3 answers 204 either way).
    public func delete(_ path: String) async throws(RemoteError) {
        let reply = try await exchange("DELETE", key: try key(path), for: path, write: true)
        guard reply.status == 200 || reply.status == 204 || reply.status == 404 else {
            throw .failed(path, "DELETE answered \(reply.status)\(errorSuffix(reply))")
        }
    }

    /// Writes the folder's zero-byte marker `folder/` (one PUT; again is harmless). The prefix
    /// itself ("") gets one too, unless it is the bucket's root, which needs none (one request
    /// either way: a HEAD of the bucket, which also says whether it exists).
    public func makeFolder(_ path: String) async throws(RemoteError) {
        let k = try key(path, folder: true)
        if k.isEmpty {
            let reply = try await exchange("HEAD", key: "", for: path, write: false)
            if reply.status == 404 { throw .failed(path, "the bucket '\(location.bucket)' does not exist at \(location.endpoint.absoluteString)") }
            guard reply.status == 200 else { throw .failed(path, "HEAD of the bucket answered \(reply.status)") }
            return
        }
        let reply = try await exchange("PUT", key: k, body: [], for: path, write: true)
        guard reply.status == 200 || reply.status == 201 || reply.status == 204 else {
            throw .failed(path, "PUT of the folder marker answered \(reply.status)\(errorSuffix(reply))")
        }
    }

    /// A multipart upload: create it, send the parts (invisible until completed), complete it
    /// (the one step that replaces the object). Anything failing before completion aborts the
    /// upload (best effort) and is `.failed`: the object is as it was. A lost or failed reply to
    /// the completion is `.ambiguous` (S3 may answer 200 with an error in the body).
    func putInParts(_ path: String, key: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let created = try await exchange("POST", key: key, query: [("uploads", "")], body: [], for: path, write: false)
        guard created.status == 200, let uploadID = S3XMLParser.uploadID(created.body) else {
            throw .failed(path, "creating the multipart upload answered \(created.status)\(errorSuffix(created))")
        }
        var parts: [(number: Int, etag: String)] = []
        do throws(RemoteError) {
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + multipart.partSize, bytes.count)
                let number = parts.count + 1
                let reply = try await exchange("PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                               body: Array(bytes[offset..<end]), for: path, write: false)
                guard reply.status == 200, let etag = reply.headers["etag"], !etag.isEmpty else {
                    throw .failed(path, "part \(number) answered \(reply.status)\(errorSuffix(reply))")
                }
                parts.append((number, etag))
                offset = end
            }
        } catch {
            _ = try? await exchange("DELETE", key: key, query: [("uploadId", uploadID)], for: path, write: false)
            throw error
        }
        let list = parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(S3Remote.escapeXML($0.etag))</ETag></Part>" }.joined()
        let body = Array("<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>".utf8)
        let done = try await exchange("POST", key: key, query: [("uploadId", uploadID)], body: body, for: path, write: true)
        if done.status == 200, S3XMLParser.isCompletion(done.body) { return }
        if done.status == 200 { throw .ambiguous(path, "completing the multipart upload answered 200 with\(errorSuffix(done).isEmpty ? " no result" : errorSuffix(done))") }
        _ = try? await exchange("DELETE", key: key, query: [("uploadId", uploadID)], for: path, write: false)
        throw .failed(path, "completing the multipart upload answered \(done.status)\(errorSuffix(done))")
    }

    /// Text for an XML element (an ETag echoed back: quotes stay, markup is escaped).
    static func escapeXML(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// The reply's S3 error code and message, if any; for an unsigned request refused with a 4xx,
    /// that no credentials were given (Swift s3api answers one 412: it is not taken for S3 at all).
    func errorSuffix(_ reply: S3HTTPReply) -> String {
        let code = S3XMLParser.error(reply.body).map { ": \($0.code)\($0.message.isEmpty ? "" : " (\($0.message))")" } ?? ""
        guard signer == nil, (400..<500).contains(reply.status), reply.status != 404 else { return code }
        return code + "; no credentials were given: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a netrc entry for the endpoint's host"
    }

    // MARK: For tests and setup

    /// Creates the bucket (a PUT of it). 200 is made; an existing bucket of ours (409
    /// `BucketAlreadyOwnedByYou`, AWS outside us-east-1 and Swift) counts as made too.
    package func createBucket() async throws(RemoteError) {
        let reply = try await exchange("PUT", key: "", body: nil, for: "", write: true)
        if reply.status == 200 { return }
        if reply.status == 409, S3XMLParser.error(reply.body)?.code == "BucketAlreadyOwnedByYou" { return }
        throw .failed("", "creating the bucket answered \(reply.status)\(errorSuffix(reply))")
    }

    /// Every key in the bucket (all prefixes), with its size: ListObjectsV2 without a delimiter.
    package func allKeys() async throws(RemoteError) -> [String] {
        var keys: [String] = []
        var token: String?
        for _ in 0..<S3Remote.maxListingPages {
            var query = [("list-type", "2"), ("encoding-type", "url")]
            if let token { query.append(("continuation-token", token)) }
            let reply = try await exchange("GET", key: "", query: query, for: "", write: false, maxBytes: S3Remote.maxListingPageBytes)
            guard reply.status == 200, let page = S3XMLParser.listPage(reply.body) else {
                throw .invalidResponse("", "ListObjectsV2 of the bucket answered \(reply.status)")
            }
            keys += page.objects.map(\.key)
            guard page.isTruncated, let next = page.nextContinuationToken else { return keys }
            token = next
        }
        return keys
    }

    /// An object's bytes by its full key (outside the prefix too); nil when missing.
    package func object(key: String) async throws(RemoteError) -> [UInt8]? {
        let reply = try await exchange("GET", key: key, for: key, write: false, maxBytes: RemoteLimits.blobBytes)
        if reply.status == 404 { return nil }
        guard reply.status == 200 else { throw .failed(key, "GET answered \(reply.status)") }
        return reply.body
    }
}
