// Not a product: shared by LulucatSyncTests and lnote-dev bench sync --only link.
// A TCP relay on 127.0.0.1 that stands for a real link between a client and a server on this
// machine: every byte is forwarded no earlier than it crossed a link of a given one-way delay and
// bandwidth, in order, in each direction; a new connection's first bytes wait one more round trip
// (the handshake a real connection pays before it can send, which here happens locally with the
// relay); and it counts connections and bytes each way.
//
// The link: each direction is one line shared by every connection (as one network path is). A
// chunk read at time t starts crossing when the line is free (and, of a connection's first
// bytes from the client, not before its accept + 2 × delay), takes bytes × 8 / rate to cross, and
// is delivered `delay` after its last bit left. Delivery times only grow, so order is kept.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class LinkRelay: @unchecked Sendable {
    /// The link a relay stands for.
    public struct Link: Sendable, Equatable {
        /// The one-way delay: 20 ms by default (a 40 ms round trip).
        public var delay: Duration
        /// The bandwidth of each direction in bits a second: 50 Mbit/s by default; 0: unlimited.
        public var bitsPerSecond: Int
        /// Whether a new connection's first bytes wait one round trip more (its handshake).
        public var handshake: Bool

        /// A link of `delay` each way and `bitsPerSecond` each direction.
        public init(delay: Duration = .milliseconds(20), bitsPerSecond: Int = 50_000_000, handshake: Bool = true) {
            self.delay = delay
            self.bitsPerSecond = max(0, bitsPerSecond)
            self.handshake = handshake
        }
    }

    /// What the relay has carried.
    public struct Counters: Sendable, Equatable {
        /// Connections accepted from clients.
        public var connections = 0
        /// Bytes from the clients to the server.
        public var bytesUp = 0
        /// Bytes from the server to the clients.
        public var bytesDown = 0
        /// Nothing carried.
        public init() {}
    }

    /// The port clients connect to.
    public let port: Int
    /// The server's port on 127.0.0.1.
    public let upstreamPort: Int
    /// The link it stands for.
    public let link: Link
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var counts = Counters()
    /// When each direction's line is next free (0: up, client to server; 1: down).
    private var lineFree: [ContinuousClock.Instant]
    /// The sockets of the connections still open (both sides), shut down by `stop`.
    private var open: Set<Int32> = []

    /// A relay to `upstreamPort` on 127.0.0.1, listening on a free port of 127.0.0.1.
    public init(upstreamPort: Int, link: Link = Link()) throws {
        self.upstreamPort = upstreamPort
        self.link = link
        lineFree = [ContinuousClock.now, ContinuousClock.now]
        (listener, port) = try Loopback.listen("relay")
        let t = Thread { [self] in acceptLoop() }
        t.start()
    }

    /// The URL of `path` on the server, through the relay.
    public func url(_ path: String = "/notes/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// What was carried since the start or the last `resetCounters`.
    public var counters: Counters { lock.withLock { counts } }

    /// Sets the counters back to zero.
    public func resetCounters() { lock.withLock { counts = Counters() } }

    /// Stops accepting and ends every open connection.
    public func stop() {
        let fds: Set<Int32>? = lock.withLock {
            if stopped { return nil }
            stopped = true
            return open
        }
        guard let fds else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let c = accept(listener, nil, nil)
            if c < 0 {
                if lock.withLock({ stopped }) { return }
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let accepted = ContinuousClock.now
            guard let s = Loopback.connect(upstreamPort) else { close(c); continue }
            var one: Int32 = 1
            for fd in [c, s] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
            let refused: Bool = lock.withLock {
                if stopped { return true }
                counts.connections += 1
                open.insert(c)
                open.insert(s)
                return false
            }
            if refused { close(c); close(s); continue }
            let connection = Connection(client: c, server: s)
            // The client's first bytes leave once the handshake's round trip is over.
            let ready = link.handshake ? accepted + link.delay * 2 : accepted
            for (from, to, direction, notBefore) in [(c, s, 0, ready), (s, c, 1, accepted)] {
                let pipe = Pipe()
                Thread { [self] in read(from, into: pipe, direction: direction, notBefore: notBefore) }.start()
                Thread { [self] in write(to, from: pipe, connection: connection) }.start()
            }
        }
    }

    /// One connection's two sockets, closed once both directions ended.
    final class Connection: @unchecked Sendable {
        let client: Int32, server: Int32
        private let lock = NSLock()
        /// The writers still running (each ends after its direction's reader).
        private var running = 2
        init(client: Int32, server: Int32) { (self.client, self.server) = (client, server) }
        /// One writer is done; returns true for the last.
        func done() -> Bool { lock.withLock { running -= 1; return running == 0 } }
    }

    /// What one direction of a connection has read and not yet delivered, in order: each chunk
    /// with when it may be delivered; an empty chunk is the end.
    final class Pipe: @unchecked Sendable {
        let condition = NSCondition()
        var chunks: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        func push(_ bytes: [UInt8], due: ContinuousClock.Instant) {
            condition.lock()
            chunks.append((due, bytes))
            condition.signal()
            condition.unlock()
        }
        func pop() -> (due: ContinuousClock.Instant, bytes: [UInt8]) {
            condition.lock()
            while chunks.isEmpty { condition.wait() }
            let c = chunks.removeFirst()
            condition.unlock()
            return c
        }
    }

    /// At most this much is read at once: a large write crosses the link in pieces, each
    /// delivered when it has crossed (as a real link delivers segments).
    static let chunkBytes = 16 << 10

    private func read(_ fd: Int32, into pipe: Pipe, direction: Int, notBefore: ContinuousClock.Instant) {
        var b = [UInt8](repeating: 0, count: Self.chunkBytes)
        // Held at the client until its handshake is over (the line is free for others meanwhile).
        let wait = notBefore - ContinuousClock.now
        if wait > .zero { Self.sleep(wait) }
        while true {
            let n = b.withUnsafeMutableBytes { recv(fd, $0.baseAddress, Self.chunkBytes, 0) }
            if n < 0 && errno == EINTR { continue }
            let now = ContinuousClock.now
            guard n > 0 else {
                pipe.push([], due: lock.withLock { max(lineFree[direction], now) } + link.delay)
                // The connection ends: the writer of this direction ends it at the other side.
                return
            }
            let due: ContinuousClock.Instant = lock.withLock {
                if direction == 0 { counts.bytesUp += n } else { counts.bytesDown += n }
                let start = max(now, lineFree[direction])
                let crossing = link.bitsPerSecond > 0 ? Duration.seconds(Double(n * 8) / Double(link.bitsPerSecond)) : .zero
                lineFree[direction] = start + crossing
                return start + crossing + link.delay
            }
            pipe.push(Array(b[0..<n]), due: due)
        }
    }

    private func write(_ fd: Int32, from pipe: Pipe, connection: Connection) {
        var failed = false
        while true {
            let (due, bytes) = pipe.pop()
            let wait = due - ContinuousClock.now
            if wait > .zero { Self.sleep(wait) }
            if bytes.isEmpty { break }
            if failed { continue }
            var off = 0
            while off < bytes.count {
                let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    // The receiver is gone: both sides end, so the reader of this pipe stops too.
                    failed = true
                    shutdown(connection.client, Int32(SHUT_RDWR))
                    shutdown(connection.server, Int32(SHUT_RDWR))
                    break
                }
                off += n
            }
        }
        shutdown(fd, Int32(SHUT_WR))
        finish(connection)
    }

    /// A direction's end (its reader ended first): the last closes both sockets.
    private func finish(_ connection: Connection) {
        guard connection.done() else { return }
        lock.withLock {
            open.remove(connection.client)
            open.remove(connection.server)
        }
        close(connection.client)
        close(connection.server)
    }

    static func sleep(_ d: Duration) {
        let (s, atto) = d.components
        var ts = timespec(tv_sec: Int(s), tv_nsec: Int(atto / 1_000_000_000))
        var left = timespec()
        while nanosleep(&ts, &left) != 0 && errno == EINTR { ts = left }
    }
}

/// A server on 127.0.0.1 that sends back every byte it receives (the relay's tests stand it behind
/// a relay); stopped by `stop`.
public final class EchoServer: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var open: Set<Int32> = []

    /// An echo server on a free port of 127.0.0.1.
    public init() throws {
        (listener, port) = try Loopback.listen("echo")
        Thread { [self] in
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 {
                    if lock.withLock({ stopped }) || (errno != EINTR && errno != ECONNABORTED) { return }
                    continue
                }
                guard lock.withLock({ stopped ? false : open.insert(c).inserted }) else { close(c); continue }
                Thread { [self] in
                    while let chunk = Loopback.receive(c), !chunk.isEmpty {
                        var off = 0
                        while off < chunk.count {
                            let n = chunk[off...].withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                            if n <= 0 { break }
                            off += n
                        }
                    }
                    lock.withLock { _ = open.remove(c) }
                    close(c)
                }.start()
            }
        }.start()
    }

    /// Stops accepting and ends every open connection.
    public func stop() {
        let fds: Set<Int32>? = lock.withLock {
            if stopped { return nil }
            stopped = true
            return open
        }
        guard let fds else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
