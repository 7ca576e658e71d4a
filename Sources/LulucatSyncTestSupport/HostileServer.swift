// An HTTP server on 127.0.0.1 (a free port) that answers like a hostile or broken WebDAV server:
// a huge body (streamed, never built in memory), a Content-Length that lies, an endless chunked
// body, a trickle, silence after accepting, a reply cut mid-body. Requests whose method and path
// match no rule get a friendly answer (an empty listing, 404, 201), so a whole sync round can run
// against it. One thread per connection; every loop is bounded by `stop()` or a closed socket.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP server that misbehaves on purpose (tests and `lnote-dev bench sync-hostile`).
public final class HostileServer: @unchecked Sendable {
    /// How a matching request is answered.
    public enum Behavior: Sendable, Equatable, CustomStringConvertible {
        /// 200 with a `Content-Length` of `bytes` and that many bytes, streamed in 64 KiB pieces.
        case hugeBody(bytes: Int)
        /// 200 announcing `claimed` bytes and sending `sent` (more or fewer), then closing.
        case lyingLength(claimed: Int, sent: Int)
        /// 200 with `Transfer-Encoding: chunked` and chunks until the client goes away.
        case endlessChunked
        /// 200 announcing `bytes`, then one byte every `interval` until done or the client goes.
        case trickle(bytes: Int, interval: Duration)
        /// `status` (a failure, say 404) with an endless chunked body.
        case endlessFailure(status: Int)
        /// Reads the request and answers nothing, holding the connection until the client goes
        /// away or the server stops.
        case silent
        /// 200 announcing `bytes`, sending half, then closing the connection.
        case cutMidBody(bytes: Int)
        /// A status and a body, as a friendly server would send them.
        case answer(status: Int, body: [UInt8], headers: [String: String] = [:])

        /// The case's name, for a report.
        public var description: String {
            switch self {
            case .hugeBody(let b): return "huge body (\(b) bytes)"
            case let .lyingLength(c, s): return "lying Content-Length (\(c) announced, \(s) sent)"
            case .endlessChunked: return "endless chunked body"
            case .endlessFailure(let st): return "\(st) with an endless body"
            case .trickle(let b, let i): return "trickle (\(b) bytes, one every \(i))"
            case .silent: return "no answer after accepting"
            case .cutMidBody(let b): return "reply cut mid-body (\(b) announced)"
            case .answer(let s, _, _): return "answer \(s)"
            }
        }
    }

    /// The most bytes a second one connection streams (a huge or endless body); nil: as fast as
    /// the socket takes them. Tests set one so that a transfer the client has cut, which
    /// FoundationNetworking goes on reading until its cancellation lands, does not take the
    /// machine's CPU from the requests that follow.
    public var pace: Int? {
        get { lock.withLock { _pace } }
        set { lock.withLock { _pace = newValue } }
    }
    private var _pace: Int?

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var rules: [(method: String, pathContains: String, behavior: Behavior)] = []
    private var stopped = false
    private var open: Set<Int32> = []
    private var _requests: [String] = []
    private var _bytesSent = 0

    /// The folder served to requests no rule matches (nil: an empty collection).
    public let root: String?

    /// A server on a free port of 127.0.0.1, answering by `rules` (the first that matches), and
    /// the others as a friendly WebDAV server of `root` would (`PROPFIND` of depth 1, `GET`,
    /// `PUT`, `MKCOL`, `DELETE` under `/notes/`), or, without a root, as an empty one.
    public init(root: String? = nil) throws {
        self.root = root
        (listener, port) = try Loopback.listen("hostile server")
        Thread { [self] in acceptLoop() }.start()
    }

    /// The collection URL a `WebDAVRemote` is given.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/notes/")! }

    /// Requests whose method is `method` ("*": any) and whose path contains `pathContains` (""
    /// matches every path) get `behavior` (rules set earlier win).
    public func on(_ method: String, _ pathContains: String, _ behavior: Behavior) {
        lock.withLock { rules.append((method, pathContains, behavior)) }
    }

    /// Forgets every rule.
    public func clearRules() { lock.withLock { rules.removeAll() } }

    /// The requests met so far, as "METHOD path".
    public var requests: [String] { lock.withLock { _requests } }
    /// Body bytes sent so far, over every connection.
    public var bytesSent: Int { lock.withLock { _bytesSent } }

    /// Stops listening and closes every connection (their threads end at their next send or wait).
    public func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            // Under the lock: a connection's thread closes its socket under it too, so no number
            // shut down here can be another file's by then.
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    deinit { stop() }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 {
                if isStopped { return }
                if errno == EINTR { continue }
                return
            }
            let keep: Bool = lock.withLock {
                if stopped { return false }
                open.insert(c)
                return true
            }
            if !keep { close(c); continue }
            Thread { [self] in
                handle(c)
                lock.withLock {
                    _ = open.remove(c)
                    _ = close(c)
                }
            }.start()
        }
    }

    /// One connection: requests one after another (keep-alive) until one is answered by closing.
    private func handle(_ fd: Int32) {
        var buffer: [UInt8] = []
        while !isStopped {
            // The request head, then its body by Content-Length (bounded: 64 MiB).
            guard let (method, path, lines, body) = Loopback.readRequest(fd, &buffer) else { return }
            let rule: Behavior? = lock.withLock {
                _requests.append("\(method) \(path)")
                return rules.first { ($0.method == "*" || $0.method == method) && ($0.pathContains.isEmpty || path.contains($0.pathContains)) }?.behavior
            }
            let behavior = rule ?? (root.map { served(method, path, body, headers: lines, root: $0) } ?? friendly(method, path))
            guard answer(fd, behavior, path: path) else { return }
        }
    }

    /// A friendly server's answer: an empty listing of a folder, 404 for a file, 201 for a write.
    private func friendly(_ method: String, _ path: String) -> Behavior {
        switch method {
        case "PROPFIND":
            let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>\(path)</D:href><D:propstat><D:prop>\
            <D:resourcetype><D:collection/></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>\
            </D:response></D:multistatus>
            """
            return .answer(status: 207, body: Array(body.utf8), headers: ["Content-Type": "application/xml; charset=utf-8"])
        case "GET": return .answer(status: 404, body: [])
        case "MKCOL": return .answer(status: 405, body: [])
        default: return .answer(status: 201, body: [])
        }
    }

    /// A WebDAV server's answer from the folder `root` (paths under `/notes/`, no `..`).
    private func served(_ method: String, _ path: String, _ body: [UInt8], headers: [String], root: String) -> Behavior {
        let prefix = "/notes/"
        /// The file a request path names under `root`, or nil outside `/notes/` or with `..`.
        func fileOf(_ path: String) -> String? {
            guard path.hasPrefix(prefix) else { return nil }
            let parts = (String(path.dropFirst(prefix.count)).removingPercentEncoding ?? "").split(separator: "/").map(String.init)
            guard !parts.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
            return ([root] + parts).joined(separator: "/")
        }
        func header(_ name: String) -> String? {
            headers.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
        guard path.hasPrefix(prefix) else { return .answer(status: 404, body: []) }
        guard let file = fileOf(path) else { return .answer(status: 403, body: []) }
        let fm = FileManager.default
        var isDir: ObjCBool = false
        let exists = fm.fileExists(atPath: file, isDirectory: &isDir)
        switch method {
        case "PROPFIND":
            guard exists else { return .answer(status: 404, body: []) }
            func entry(_ href: String, _ p: String) -> String {
                var d: ObjCBool = false
                _ = fm.fileExists(atPath: p, isDirectory: &d)
                if d.boolValue {
                    return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>"
                        + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
                }
                let a = (try? fm.attributesOfItem(atPath: p)) ?? [:]
                let size = (a[.size] as? NSNumber)?.intValue ?? 0
                let inode = (a[.systemFileNumber] as? NSNumber)?.intValue ?? 0
                let mtime = Int(((a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0) * 1e6)
                return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop><D:getetag>\"\(inode)-\(size)-\(mtime)\"</D:getetag>"
                    + "<D:getcontentlength>\(size)</D:getcontentlength><D:resourcetype/></D:prop>"
                    + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
            }
            let own = path.hasSuffix("/") ? path : path + "/"
            var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:multistatus xmlns:D=\"DAV:\">" + entry(own, file)
            if isDir.boolValue {
                for name in ((try? fm.contentsOfDirectory(atPath: file)) ?? []).sorted() { xml += entry(own + name, file + "/" + name) }
            }
            xml += "</D:multistatus>"
            return .answer(status: 207, body: Array(xml.utf8), headers: ["Content-Type": "application/xml; charset=utf-8"])
        case "GET":
            guard exists, !isDir.boolValue, let d = fm.contents(atPath: file) else { return .answer(status: 404, body: []) }
            return .answer(status: 200, body: Array(d))
        case "PUT":
            guard (try? Data(body).write(to: URL(fileURLWithPath: file), options: .atomic)) != nil else { return .answer(status: 409, body: []) }
            return .answer(status: 201, body: [])
        case "MKCOL":
            if exists { return .answer(status: 405, body: []) }
            guard (try? fm.createDirectory(atPath: file, withIntermediateDirectories: false)) != nil else { return .answer(status: 409, body: []) }
            return .answer(status: 201, body: [])
        case "DELETE":
            guard exists else { return .answer(status: 404, body: []) }
            try? fm.removeItem(atPath: file)
            return .answer(status: 204, body: [])
        case "HEAD":
            guard exists, !isDir.boolValue, let size = (try? fm.attributesOfItem(atPath: file))?[.size] as? NSNumber else {
                return .answer(status: 404, body: [])
            }
            return .answer(status: 200, body: [], headers: ["Content-Length": "\(size.intValue)"])
        case "MOVE":
            // As WebDAV servers do (RFC 4918 §9.9): Destination a URL of this server, Overwrite F
            // refusing an existing target with 412.
            guard exists, let destination = header("Destination").flatMap({ URL(string: $0)?.path(percentEncoded: true) }),
                  let target = fileOf(destination) else { return .answer(status: exists ? 400 : 404, body: []) }
            let replacing = fm.fileExists(atPath: target)
            if replacing && header("Overwrite")?.uppercased() == "F" { return .answer(status: 412, body: []) }
            guard rename(file, target) == 0 else { return .answer(status: 409, body: []) }
            return .answer(status: replacing ? 204 : 201, body: [])
        default:
            return .answer(status: 405, body: [])
        }
    }

    /// Answers one request; false when the connection is to be closed.
    private func answer(_ fd: Int32, _ behavior: Behavior, path: String) -> Bool {
        func head(_ status: Int, _ headers: [String: String]) -> Bool {
            var s = "HTTP/1.1 \(status) \(status < 300 ? "OK" : "Status")\r\n"
            for (k, v) in headers.sorted(by: { $0.key < $1.key }) { s += "\(k): \(v)\r\n" }
            return sendAll(fd, Array((s + "\r\n").utf8), counted: false)
        }
        let filler = [UInt8](repeating: 0x61, count: 64 << 10)
        let started = ContinuousClock.now
        var streamed = 0
        /// Waits as long as `pace` asks after `n` more bytes.
        func paced(_ n: Int) {
            streamed += n
            guard let rate = pace, rate > 0 else { return }
            let due = Duration.seconds(Double(streamed) / Double(rate))
            let ahead = due - (ContinuousClock.now - started)
            if ahead > .zero { _ = waitForClose(fd, ahead) }
        }
        func stream(_ n: Int) -> Bool {
            var left = n
            while left > 0 {
                let k = min(left, filler.count)
                guard sendAll(fd, Array(filler[0..<k])) else { return false }
                left -= k
                paced(k)
            }
            return true
        }
        switch behavior {
        case let .answer(status, body, headers):
            var h = headers
            // A HEAD answer names the length of a body it does not send.
            if h["Content-Length"] == nil { h["Content-Length"] = "\(body.count)" }
            return head(status, h) && sendAll(fd, body)
        case .hugeBody(let bytes):
            guard head(200, ["Content-Length": "\(bytes)", "Connection": "close"]) else { return false }
            _ = stream(bytes)
            return false
        case let .lyingLength(claimed, sent):
            guard head(200, ["Content-Length": "\(claimed)", "Connection": "close"]) else { return false }
            _ = stream(sent)
            return false
        case .endlessChunked, .endlessFailure:
            var status = 200
            if case .endlessFailure(let st) = behavior { status = st }
            guard head(status, ["Transfer-Encoding": "chunked", "Connection": "close"]) else { return false }
            let chunk = Array("10000\r\n".utf8) + filler + [13, 10]
            while !isStopped {
                guard sendAll(fd, chunk) else { return false }
                paced(chunk.count)
            }
            return false
        case let .trickle(bytes, interval):
            guard head(200, ["Content-Length": "\(bytes)", "Connection": "close"]) else { return false }
            for _ in 0..<bytes {
                guard !isStopped, sendAll(fd, [0x61]) else { return false }
                // Wait for the interval or the client going away, whichever is first.
                if waitForClose(fd, interval) { return false }
            }
            return false
        case .silent:
            // Holds the connection until the client closes it or the server stops.
            while !isStopped { if waitForClose(fd, .milliseconds(200)) { return false } }
            return false
        case .cutMidBody(let bytes):
            guard head(200, ["Content-Length": "\(bytes)", "Connection": "close"]) else { return false }
            _ = stream(bytes / 2)
            return false
        }
    }

    /// Whether the client closed the connection (or it failed) within `interval`.
    private func waitForClose(_ fd: Int32, _ interval: Duration) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000))
        let n = poll(&p, 1, ms)
        if n <= 0 { return n < 0 }
        var b = [UInt8](repeating: 0, count: 4096)
        let r = b.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, Int32(MSG_DONTWAIT)) }
        return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }


    private func sendAll(_ fd: Int32, _ bytes: [UInt8], counted: Bool = true) -> Bool {
        var off = 0
        while off < bytes.count {
            if isStopped { return false }
            let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            off += n
            if counted { lock.withLock { _bytesSent += n } }
        }
        return true
    }

}
