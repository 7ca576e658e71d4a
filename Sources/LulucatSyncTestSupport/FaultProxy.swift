// An HTTP proxy on 127.0.0.1 between a client and the test's Apache that injects one-shot
// faults: an upload cut halfway, a reply dropped after the server committed, a 307 instead of
// the answer. One request per connection (it asks both sides for `Connection: close`).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class FaultProxy: @unchecked Sendable {
    public enum Fault: Sendable {
        /// Forwards the headers and half the body, then closes both sides.
        case cutUpload
        /// Forwards the whole request, reads the server's reply, and closes without sending it.
        case dropReplyAfterCommit
        /// Answers 307 to the same URL on the server, forwarding nothing.
        case redirect307
        /// Forwards the headers and half the body, then holds both connections open until
        /// `releaseStalled()` (the test kills the server meanwhile), then closes them.
        case stallUpload
    }

    public let port: Int
    public let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var faults: [(method: String, pathContains: String, fault: Fault)] = []
    public private(set) var injected = 0
    private var stopped = false

    public init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        (listener, port) = try Loopback.listen("proxy")
        let t = Thread { [self] in acceptLoop() }
        t.start()
    }

    public var url: URL { URL(string: "http://127.0.0.1:\(port)/notes/")! }

    /// The next request with this method whose path contains `pathContains` gets `fault`.
    public func inject(_ fault: Fault, method: String, pathContains: String) {
        lock.withLock { faults.append((method, pathContains, fault)) }
    }

    /// Faults injected and not met yet.
    public var pendingFaults: Int { lock.withLock { faults.count } }

    public func clearFaults() { lock.withLock { faults.removeAll() } }

    private var stalled = 0
    private var released = false
    /// Uploads held by `stallUpload` now.
    public var stalledUploads: Int { lock.withLock { stalled } }
    /// Lets every held upload end (its connections are closed, the client sees a dropped write).
    public func releaseStalled() { lock.withLock { released = true } }

    public func stop() {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 {
                if lock.withLock({ stopped }) { return }
                if errno == EINTR { continue }
                return
            }
            let t = Thread { [self] in handle(c) }
            t.start()
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The request head, then its body by Content-Length.
        var buffer: [UInt8] = []
        guard let (method, path, head, body) = Loopback.readRequest(client, &buffer) else { return }
        var lines = head
        let fault: Fault? = lock.withLock {
            guard let i = faults.firstIndex(where: { $0.method == method && path.contains($0.pathContains) }) else { return nil }
            injected += 1
            return faults.remove(at: i).fault
        }
        if case .redirect307 = fault {
            let reply = "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(upstreamPort)\(path)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            sendAll(client, Array(reply.utf8))
            return
        }
        lines.removeAll { $0.lowercased().hasPrefix("connection:") || $0.lowercased().hasPrefix("keep-alive:") }
        lines.insert("Connection: close", at: lines.count)
        let forwardedHead = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        guard let server = connectUpstream() else { return }
        defer { close(server) }
        if case .stallUpload = fault {
            sendAll(server, forwardedHead + body.prefix(body.count / 2))
            lock.withLock { stalled += 1 }
            // Bounded: 30 s at most, then the connections close as if released.
            for _ in 0..<600 {
                if lock.withLock({ released }) { break }
                usleep(50_000)
            }
            lock.withLock { stalled -= 1 }
            return
        }
        if case .cutUpload = fault {
            sendAll(server, forwardedHead + body.prefix(body.count / 2))
            usleep(100_000)
            return
        }
        sendAll(server, forwardedHead + body)
        var reply: [UInt8] = []
        while let chunk = Loopback.receive(server), !chunk.isEmpty { reply += chunk }
        if case .dropReplyAfterCommit = fault { return }
        sendAll(client, reply)
    }

    private func connectUpstream() -> Int32? { Loopback.connect(upstreamPort, timeout: 10) }


    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

}
