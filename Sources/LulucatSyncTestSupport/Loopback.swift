// What the test servers on 127.0.0.1 share (FaultProxy, HostileServer): a listening socket on a
// free port, a read of what is there, and a search for a byte sequence.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sockets on 127.0.0.1 for the test servers and their tests.
public enum Loopback {
    /// A blocking socket connected to `port` on 127.0.0.1, its reads bounded by `timeout`
    /// seconds (0: unbounded); nil when nothing answers there.
    public static func connect(_ port: Int, timeout: Int = 0) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !ok { close(fd); return nil }
        if timeout > 0 {
            var t = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, socklen_t(MemoryLayout<timeval>.size))
        }
        return fd
    }

    /// A socket listening on 127.0.0.1, on a port the system chose.
    static func listen(_ what: String) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && Glibc.listen(fd, 64) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else {
            close(fd)
            throw TestFailure("\(what): bind failed")
        }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// What one `recv` gets (at most 64 KiB); nil on an error, empty at the end.
    static func receive(_ fd: Int32) -> [UInt8]? {
        var b = [UInt8](repeating: 0, count: 65536)
        let n = b.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65536, 0) }
        if n < 0 { return nil }
        return Array(b[0..<n])
    }

    /// Where `needle` first starts in `hay`.
    static func find(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<i + needle.count]) == needle { return i }
        return nil
    }

    /// One HTTP request read off `fd`: its method, path, head lines and body (by its
    /// Content-Length, at most 64 MiB). `buffer` holds what was read past it (keep-alive). Nil
    /// when the connection ends first or the request cannot be read.
    static func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> (method: String, path: String, lines: [String], body: [UInt8])? {
        var headEnd: Int?
        while headEnd == nil {
            if let end = find(buffer, [13, 10, 13, 10]) { headEnd = end; break }
            guard buffer.count <= 1 << 20, let chunk = receive(fd), !chunk.isEmpty else { return nil }
            buffer += chunk
        }
        let lines = String(decoding: buffer[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var length = 0
        for l in lines where l.lowercased().hasPrefix("content-length:") { length = Int(l.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0 }
        guard length <= 64 << 20 else { return nil }
        buffer.removeFirst(headEnd! + 4)
        while buffer.count < length {
            guard let chunk = receive(fd), !chunk.isEmpty else { return nil }
            buffer += chunk
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return (String(requestLine[0]), String(requestLine[1]), lines, body)
    }
}
