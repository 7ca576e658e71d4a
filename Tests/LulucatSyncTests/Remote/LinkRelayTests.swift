// The link relay of the sync bench (LulucatSyncTestSupport.LinkRelay): an echo server behind it,
// bytes sent through it and read back. Only lower bounds on time are asserted (the machine is
// shared; a relay may be late, never early): a round trip takes at least two one-way delays, a
// new connection's first one two more, N bytes at least N × 8 / rate; and every byte arrives,
// in order, counted exactly.

import Foundation
import Testing
import LulucatSyncTestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LinkRelayTests {
    /// A blocking client socket connected to `port` on 127.0.0.1, reads bounded by 20 s.
    static func connect(_ port: Int) throws -> Int32 {
        guard let fd = Loopback.connect(port, timeout: 20) else { throw TestFailure("connect to \(port) failed") }
        return fd
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send failed") }
            off += n
        }
    }

    /// Exactly `count` bytes, or a failure when the connection ends or stays silent for 20 s.
    static func receive(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var b = [UInt8](repeating: 0, count: 65536)
        while out.count < count {
            let n = b.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min(65536, count - out.count), 0) }
            guard n > 0 else { throw TestFailure("the connection ended after \(out.count) of \(count) bytes") }
            out += b[0..<n]
        }
        return out
    }

    static func random(_ n: Int, seed: UInt64) -> [UInt8] {
        var x = seed
        return (0..<n).map { _ in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: x >> 33)
        }
    }

    static func elapsed(_ body: () throws -> Void) rethrows -> Duration {
        let start = ContinuousClock.now
        try body()
        return ContinuousClock.now - start
    }

    @Test func aRoundTripTakesTwoDelaysAndANewConnectionOneMore() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let delay = Duration.milliseconds(30)
        let relay = try LinkRelay(upstreamPort: echo.port, link: .init(delay: delay, bitsPerSecond: 0))
        defer { relay.stop() }
        let fd = try Self.connect(relay.port)
        defer { close(fd) }
        let hello = Array("hello".utf8)
        // The first exchange pays the handshake's round trip, then its own.
        let first = try Self.elapsed { () throws -> Void in
            try Self.sendAll(fd, hello)
            let got = try Self.receive(fd, hello.count)
            #expect(got == hello)
        }
        #expect(first >= delay * 4, "\(first)")
        for i in 0..<3 {
            let line = Array("line \(i)".utf8)
            let t = try Self.elapsed { () throws -> Void in
                try Self.sendAll(fd, line)
                let got = try Self.receive(fd, line.count)
                #expect(got == line)
            }
            #expect(t >= delay * 2, "\(t)")
        }
        #expect(relay.counters.connections == 1)
    }

    @Test func withoutTheHandshakeTheFirstExchangeIsOneRoundTrip() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try LinkRelay(upstreamPort: echo.port, link: .init(delay: .milliseconds(25), bitsPerSecond: 0, handshake: false))
        defer { relay.stop() }
        let fd = try Self.connect(relay.port)
        defer { close(fd) }
        let t = try Self.elapsed { () throws -> Void in
            try Self.sendAll(fd, [1, 2, 3])
            let got = try Self.receive(fd, 3)
            #expect(got == [1, 2, 3])
        }
        #expect(t >= .milliseconds(50), "\(t)")
    }

    @Test func everyByteArrivesInOrderAndIsCounted() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let relay = try LinkRelay(upstreamPort: echo.port, link: .init(delay: .milliseconds(2), bitsPerSecond: 0))
        defer { relay.stop() }
        var total = 0
        for k in 0..<2 {
            let fd = try Self.connect(relay.port)
            defer { close(fd) }
            // Writes of every size from 1 byte to 40 KiB, so chunks cross the relay's read size.
            let bytes = Self.random(300_000 + k * 12_345, seed: UInt64(k + 1))
            var sizes: [Int] = []
            var left = bytes.count
            var s = 1
            while left > 0 {
                sizes.append(min(s, left))
                left -= min(s, left)
                s = s >= 40_000 ? 1 : s * 3
            }
            let chunks = sizes
            let sender = Thread {
                var off = 0
                for n in chunks {
                    try? Self.sendAll(fd, Array(bytes[off..<off + n]))
                    off += n
                }
            }
            sender.start()
            let got = try Self.receive(fd, bytes.count)
            #expect(got == bytes)
            total += bytes.count
        }
        let c = relay.counters
        #expect(c.connections == 2)
        #expect(c.bytesUp == total && c.bytesDown == total, "\(c)")
        relay.resetCounters()
        #expect(relay.counters == LinkRelay.Counters())
    }

    @Test func nBytesTakeAtLeastTheirTimeOnTheLine() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let rate = 8_000_000  // 1 MB/s
        let relay = try LinkRelay(upstreamPort: echo.port, link: .init(delay: .milliseconds(1), bitsPerSecond: rate, handshake: false))
        defer { relay.stop() }
        let fd = try Self.connect(relay.port)
        defer { close(fd) }
        let n = 200_000
        let bytes = Self.random(n, seed: 9)
        // Up and back down: each direction's line carries the n bytes at the rate.
        let t = try Self.elapsed { () throws -> Void in
            let sender = Thread { try? Self.sendAll(fd, bytes) }
            sender.start()
            let got = try Self.receive(fd, n)
            #expect(got == bytes)
        }
        #expect(t >= .seconds(Double(n * 8) / Double(rate)), "\(t)")
    }

    @Test func twoConnectionsShareTheLine() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let rate = 8_000_000
        let relay = try LinkRelay(upstreamPort: echo.port, link: .init(delay: .milliseconds(1), bitsPerSecond: rate, handshake: false))
        defer { relay.stop() }
        let a = try Self.connect(relay.port), b = try Self.connect(relay.port)
        defer { close(a); close(b) }
        let n = 100_000
        let one = Self.random(n, seed: 1), two = Self.random(n, seed: 2)
        let t = try Self.elapsed { () throws -> Void in
            Thread { try? Self.sendAll(a, one) }.start()
            Thread { try? Self.sendAll(b, two) }.start()
            let gotA = try Self.receive(a, n), gotB = try Self.receive(b, n)
            #expect(gotA == one && gotB == two)
        }
        // 2 n bytes went up one line shared by both connections.
        #expect(t >= .seconds(Double(2 * n * 8) / Double(rate)), "\(t)")
        #expect(relay.counters.connections == 2)
    }
}
