// A remote on a WebDAV server (RFC 4918) over URLSession: PROPFIND Depth 1, GET, PUT, MKCOL,
// DELETE; HTTP Basic; redirects refused; caches off and every reply bounded (HTTPTransport); lost replies on writes are ambiguous.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP Basic credentials for a WebDAV server (sent only over https, or to the loopback address).
public struct WebDAVCredentials: Sendable, Equatable {
    /// The user name.
    public var user: String
    /// The password (or an app password).
    public var password: String
    /// Credentials for one user.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// A remote that is a WebDAV collection (Apache mod_dav, lighttpd, nginx with dav-ext, Nextcloud, ownCloud): `PROPFIND` to list, `GET`, `PUT`, `DELETE`, `MKCOL`; redirects refused, replies bounded.
public final class WebDAVRemote: Remote, @unchecked Sendable {
    /// The collection holding `heads/` and `blobs/`, with a trailing slash.
    public let base: URL
    /// The collection's URL.
    public var identity: String { base.absoluteString }
    /// Four blob transfers at once, one on each of the transport's connections to the server.
    public var concurrentTransfers: Int { 4 }
    /// Requests made and bytes moved.
    public let statistics = RemoteStatistics()
    let credentials: WebDAVCredentials?
    /// The bounded exchanges every request goes through (its counters show the largest reply held).
    package let transport: HTTPTransport
    /// The largest `PROPFIND` reply read (a larger one is `.invalidResponse`).
    package static let maxListingBytes = RemoteLimits.listingBytes
    private let serverLock = NSLock()
    nonisolated(unsafe) private var serverHeader: String?

    /// Whether the server, as its last reply's `Server` header names it, is one measured to write
    /// a `PUT` to a temporary file renamed into place and to honour `If-None-Match: *` (Apache
    /// mod_dav, lighttpd mod_webdav: docs/sync.md §9.1), so that `create` is one conditional `PUT`
    /// instead of a `PUT` and a `MOVE`. Unknown until a reply came; false for any other server.
    var createsWithOnePut: Bool {
        guard let server = serverLock.withLock({ serverHeader })?.lowercased() else { return false }
        return server.hasPrefix("apache") || server.hasPrefix("lighttpd")
    }

    /// The server's name as the last reply's `Server` header gave it, or as `assumeServer` set it
    /// before any reply; nil when neither.
    var serverName: String? { serverLock.withLock { serverHeader } }

    /// Takes `name` as the server's until a reply names it: the name the last round recorded
    /// (`.sync/server`, docs/sync.md §6), so that a blob sent before the first reply of this
    /// process (the round's early uploads, while the listing is on its way) takes the one-`PUT`
    /// `create` on a server known for it. Any reply's own header replaces it.
    func assumeServer(_ name: String) { serverLock.withLock { if serverHeader == nil { serverHeader = name } } }

    /// A remote at the WebDAV collection `url`, with the default limits of ``TransferLimits`` but
    /// its silence, outside a sync round.
    /// - Parameters:
    ///   - url: the collection that holds (or will hold) `heads/` and `blobs/`; http or https.
    ///   - credentials: HTTP Basic credentials, sent with every request; nil for none.
    ///   - timeout: outside a sync round, how long the server may send nothing, in seconds (a round
    ///     uses `SyncOptions.transfer`).
    /// - Throws: `RemoteError.failed` for a URL that is not http(s), or credentials over plain
    ///   http to anything but the loopback address.
    public convenience init(url: URL, credentials: WebDAVCredentials?, timeout: TimeInterval = 30) throws(RemoteError) {
        try self.init(url: url, credentials: credentials, limits: TransferLimits(silence: .seconds(timeout)))
    }

    /// A remote whose requests outside a sync round obey `limits` (a round's obey `SyncOptions.transfer`).
    /// - Throws: `RemoteError.failed` for a URL that is not http(s), or credentials over plain
    ///   http to anything but the loopback address.
    public init(url: URL, credentials: WebDAVCredentials?, limits: TransferLimits) throws(RemoteError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = url.host else {
            throw .failed(url.absoluteString, "a WebDAV remote needs an http or https URL")
        }
        if scheme == "http" && credentials != nil && !["127.0.0.1", "localhost", "::1"].contains(host) {
            throw .failed(url.absoluteString, "credentials are sent only over https (or to the loopback address)")
        }
        var s = url.absoluteString
        if !s.hasSuffix("/") { s += "/" }
        base = URL(string: s)!
        self.credentials = credentials
        transport = HTTPTransport(limits: limits)
    }

    /// The URL of a caller's path, which must be a safe path as given (a trailing "/" is refused,
    /// never dropped: it is added for a `folder`); "" is the collection itself, as a folder only
    /// (listed or made, never read, written or deleted).
    func url(_ path: String, folder: Bool = false) throws(RemoteError) -> URL {
        if path.isEmpty && folder { return base }
        guard RemotePath.isSafe(path) else { throw .failed(path, "unsafe remote path") }
        return URL(string: folder ? path + "/" : path, relativeTo: base)!.absoluteURL
    }

    /// One request through the transport, its reply body at most `maxBytes`; `write` says
    /// whether a lost reply leaves the outcome unknown.
    func send(_ method: String, _ path: String, folder: Bool = false, body: [UInt8]? = nil, headers: [String: String] = [:],
              write: Bool, maxBytes: Int = RemoteLimits.writeReplyBytes) async throws(RemoteError) -> (Int, [UInt8], HTTPURLResponse) {
        var request = URLRequest(url: try url(path, folder: folder))
        request.httpMethod = method
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        if let c = credentials {
            let token = Data("\(c.user):\(c.password)".utf8).base64EncodedString()
            request.setValue("Basic " + token, forHTTPHeaderField: "Authorization")
        }
        if let body { request.httpBody = Data(body) }
        let reply = try await transport.send(request, path: path, write: write, maxBytes: maxBytes, statistics: statistics)
        let http = reply.response
        if let server = http.value(forHTTPHeaderField: "Server") { serverLock.withLock { serverHeader = server } }
        let status = reply.challenged ? 401 : http.statusCode
        if (300..<400).contains(status) {
            // Refused by the transport: URLSession on Linux would re-send a PUT without its body.
            throw .invalidResponse(path, "\(method) answered with a redirect (\(status)), which sync refuses")
        }
        // Each cause in words (docs/sync.md §7): a 401 is missing or wrong credentials, a 403 the
        // server's own rules (not the credentials), a 507 a full server (nothing was stored).
        switch status {
        case 401: throw .refused(path, credentials == nil ? .noCredentials : .wrongCredentials)
        case 403: throw .refused(path, .forbidden)
        case 507: throw .refused(path, .storageFull)
        case 500...:
            if write { throw .ambiguous(path, "\(method) answered \(status), an error of the server's own") }
        default: break
        }
        return (status, reply.body, http)
    }

    /// The folder above `path` (the collection's URL for a path at its top), for a sentence.
    func parentFolder(of path: String) -> String {
        let parts = path.split(separator: "/").dropLast()
        return parts.isEmpty ? base.absoluteString : base.absoluteString + parts.joined(separator: "/") + "/"
    }

    /// A read's answer that is not a success, as the error naming its cause: 404 is `notFound`,
    /// 5xx the server's own error, anything else a refusal with its status.
    func readFailure(_ method: String, _ path: String, _ status: Int) -> RemoteError {
        if status == 404 { return .notFound(path) }
        if status >= 500 { return .refused(path, .serverError(status)) }
        return .failed(path, "\(method) answered \(status)")
    }

    /// One `PROPFIND` of depth 1: the folder's entries, without the folder itself; a reply larger
    /// than 64 MiB is `.invalidResponse`, refused as it streams.
    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        try await list(folder, maxBytes: RemoteLimits.listingBytes)
    }

    /// One `PROPFIND` of depth 1, its reply read up to `maxBytes` (refused as it streams past them).
    public func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry] {
        let body = Array("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:getcontentlength/><D:getlastmodified/><D:resourcetype/></D:prop></D:propfind>
        """.utf8)
        let (status, data, http) = try await send("PROPFIND", folder, folder: true, body: body,
                                                  headers: ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"], write: false,
                                                  maxBytes: maxBytes)
        // The collection itself missing: said as such (a folder in it missing is `notFound`).
        if folder.isEmpty && (status == 404 || status == 409) { throw .refused(folder, .missingFolder(base.absoluteString)) }
        guard status == 207 else { throw readFailure("PROPFIND", folder, status) }
        guard let listed = MultistatusParser.parseWithPaths(Data(data)) else { throw .invalidResponse(folder, "PROPFIND reply is not a multistatus") }
        // The folder's own entry is the one whose href is the request's path; only a server whose
        // hrefs never match it falls back to its name (which also drops a child of the same name).
        let own = try url(folder, folder: true).path(percentEncoded: true)
        let ownName = folder.split(separator: "/").last.map(String.init)
        let isOwn: (String, RemoteEntry) -> Bool = listed.contains { MultistatusParser.samePath($0.path, own) }
            ? { path, _ in MultistatusParser.samePath(path, own) } : { _, e in e.name == ownName }
        let now = http.value(forHTTPHeaderField: "Date").flatMap(HTTPDate.seconds)
        return listed.filter { !isOwn($0.path, $0.entry) && RemotePath.isSafeName($0.entry.name) }.map { listedEntry in
            var e = listedEntry.entry
            if e.etag == nil { e.etag = Self.changeToken(lastModified: listedEntry.lastModified, size: e.size, listedAt: now) }
            return e
        }
    }

    /// A change token for an entry the server lists without an ETag (nginx's dav-ext), from its
    /// `getlastmodified` and `getcontentlength` (docs/sync.md §9): `lm:<seconds since 1970>:<size>`.
    /// A modification time has whole seconds only, so a file written again within the second
    /// with the same size keeps its token; the token is therefore given only once the file has
    /// been left alone for `settledSeconds` by the listing's `Date` (the server's clock): any
    /// later write then falls in a later second and changes it. A younger entry, or a listing
    /// without a `Date`, gets none (it is read again next round, as an entry without an ETag).
    static func changeToken(lastModified: String?, size: Int?, listedAt now: Int64?) -> String? {
        guard let lastModified, let size, let now, let modified = HTTPDate.seconds(lastModified),
              now - modified >= settledSeconds else { return nil }
        return "lm:\(modified):\(size)"
    }

    /// How long an entry listed without an ETag must have been left alone for its change token to
    /// be given: its last second over, and one more for a write whose body was finished in one
    /// second and renamed into place in the next.
    static let settledSeconds: Int64 = 2

    /// One `GET`: the bytes and the reply's ETag; `.invalidResponse` when larger than `maxBytes`
    /// (announced or sent: the transfer is cancelled there, never read whole).
    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let (status, data, http) = try await send("GET", path, write: false, maxBytes: maxBytes)
        guard status == 200 else { throw readFailure("GET", path, status) }
        return (data, http.value(forHTTPHeaderField: "ETag"))
    }

    /// One `PUT` of the whole file; a lost reply is `.ambiguous`.
    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        try await put(path, bytes, onlyIfAbsent: false)
    }

    /// `put`; `onlyIfAbsent` sends `If-None-Match: *` and returns false when the server answers
    /// 412, the name being taken (`createWithOnePut`), true when the bytes were written.
    @discardableResult
    func put(_ path: String, _ bytes: [UInt8], onlyIfAbsent: Bool) async throws(RemoteError) -> Bool {
        var headers = ["Content-Type": "application/octet-stream"]
        if onlyIfAbsent { headers["If-None-Match"] = "*" }
        let (status, _, _) = try await send("PUT", path, body: bytes, headers: headers, write: true)
        if onlyIfAbsent && status == 412 { return false }
        // 400 or 409: a folder on the way may be missing or be a file (MKCOL where a file is answers
        // 405, as for a folder that exists, so the round's makeFolder did not see it).
        if status == 400 || status == 409, let file = await fileOnTheWay(to: path) {
            throw .refused(path, .notAFolder(base.absoluteString + file))
        }
        // 404 or 409 otherwise: the folder it goes in does not exist (RFC 4918 §9.7.1).
        if status == 404 || status == 409 { throw .refused(path, .missingFolder(parentFolder(of: path))) }
        guard status == 200 || status == 201 || status == 204 else { throw .failed(path, "PUT answered \(status)") }
        return true
    }

    /// A file that is never replaced once it is there (a blob): `PUT` under a temporary name
    /// beside it (`<name>.<16 hex>.tmp`), then `MOVE` with `Overwrite: F`, so the name only ever
    /// holds whole bytes (rclone's `PUT` writes in place: a cut upload there truncated a blob a
    /// head named) and a copy already there is never written over (docs/sync.md §9). 412, the
    /// name is taken: a copy of the same size is the same blob (the temporary file is deleted);
    /// one of another size, damaged by an in-place write before, is replaced (`Overwrite: T`).
    /// 423, the name is locked by another client's write of it: asked again a few times, then
    /// ambiguous. A temporary file left by a lost reply is debris that garbage collection
    /// removes (§8).
    ///
    /// On a server that writes a `PUT` whole or not at all and honours `If-None-Match: *`
    /// (`createsWithOnePut`), it is one `PUT` with `If-None-Match: *` instead: 412, the name is
    /// taken, is handled as above (a `HEAD`; a copy of another size is replaced by a plain `PUT`).
    public func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        guard let last = path.split(separator: "/").last, last.utf8.count <= 100 else { return try await put(path, bytes) }
        if createsWithOnePut { return try await createWithOnePut(path, bytes) }
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        let temp = path + "." + String(repeating: "0", count: 16 - random.count) + random + ".tmp"
        do { try await put(temp, bytes) } catch {
            // A refusal is the blob's (a full server, a missing folder), said of its own name.
            if case .refused(_, let why) = error { throw .refused(path, why) }
            throw error
        }
        let destination = try url(path).absoluteString
        var overwrite = false
        for attempt in 0..<4 {
            let (status, _, _) = try await send("MOVE", temp, headers: ["Destination": destination, "Overwrite": overwrite ? "T" : "F"], write: true)
            switch status {
            case 201, 204:
                return
            case 412 where !overwrite:
                let (headStatus, _, http) = try await send("HEAD", path, write: false)
                if headStatus == 200, http.value(forHTTPHeaderField: "Content-Length").flatMap({ Int($0) }) == bytes.count {
                    _ = try? await send("DELETE", temp, write: true)
                    return
                }
                overwrite = true
            case 423:
                try? await Task.sleep(for: .milliseconds(50 << attempt))
            default:
                _ = try? await send("DELETE", temp, write: true)
                throw .failed(path, "MOVE answered \(status)")
            }
        }
        _ = try? await send("DELETE", temp, write: true)
        throw .ambiguous(path, "MOVE answered 423: another client kept the name locked")
    }

    /// `create` on a server whose `PUT` is atomic and conditional: `PUT` with `If-None-Match: *`.
    func createWithOnePut(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        guard try await put(path, bytes, onlyIfAbsent: true) == false else { return }
        let (headStatus, _, http) = try await send("HEAD", path, write: false)
        if headStatus == 200, http.value(forHTTPHeaderField: "Content-Length").flatMap({ Int($0) }) == bytes.count { return }
        try await put(path, bytes)
    }

    /// One `DELETE`; a file already gone (404) is success.
    public func delete(_ path: String) async throws(RemoteError) {
        let (status, _, _) = try await send("DELETE", path, write: true)
        guard status == 200 || status == 204 || status == 404 else { throw .failed(path, "DELETE answered \(status)") }
    }

    /// One `MKCOL`; a folder that exists (405) is success.
    public func makeFolder(_ path: String) async throws(RemoteError) {
        let (status, _, _) = try await send("MKCOL", path, folder: true, write: true)
        // 405: the collection exists already.
        if status == 400 || status == 409, let file = await fileOnTheWay(to: path + "/x") {
            throw .refused(path, .notAFolder(base.absoluteString + file))
        }
        // 409 otherwise: the folder above does not exist (RFC 4918 §9.3.1), the collection's own
        // when `path` is at its top ("heads: MKCOL answered 409" before).
        if status == 404 || status == 409 { throw .refused(path, .missingFolder(parentFolder(of: path))) }
        guard status == 201 || status == 405 else { throw .failed(path, "MKCOL answered \(status)") }
    }
}

extension WebDAVRemote {
    /// The first folder on the way to `path` (not `path` itself) that the server lists as a file,
    /// by a `PROPFIND` of depth 0 of each (one that fails says nothing); nil when none is. Asked only after a
    /// write under it was refused, to say why.
    func fileOnTheWay(to path: String) async -> String? {
        let body = Array("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>
        """.utf8)
        var prefix = ""
        for part in path.split(separator: "/").dropLast() {
            prefix += (prefix.isEmpty ? "" : "/") + part
            guard let (status, data, _) = try? await send("PROPFIND", prefix, body: body,
                                                           headers: ["Depth": "0", "Content-Type": "application/xml; charset=utf-8"],
                                                           write: false, maxBytes: RemoteLimits.listingBytes),
                  status == 207, let entries = MultistatusParser.parse(Data(data)) else { continue }
            if entries.count == 1, !entries[0].isFolder { return prefix }
        }
        return nil
    }
}
