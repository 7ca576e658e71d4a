// zlib's deflate, inflate and CRC-32, wrapped once for the PNG codec.

import CZlib
import Foundation

enum Zlib {
    /// CRC-32 (the PNG/zip polynomial) of `bytes`, continuing from `crc`.
    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = UInt(crc)
        var rest = bytes
        // zlib takes a uInt length: feed in pieces that fit.
        while !rest.isEmpty {
            let n = min(rest.count, 1 << 30)
            c = CZlib.crc32(c, rest.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
        return UInt32(truncatingIfNeeded: c)
    }

    /// The zlib stream (RFC 1950) of `bytes` at `level` (0...9).
    static func deflate(_ bytes: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        var bound = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(bound))
        let status = out.withUnsafeMutableBufferPointer { dst in
            bytes.withUnsafeBufferPointer { src in
                compress2(dst.baseAddress, &bound, src.baseAddress, uLong(src.count), level)
            }
        }
        guard status == Z_OK else {
            throw RenderError.encodingFailed(format: "PNG", "zlib compress2 returned \(status)")
        }
        out.removeSubrange(Int(bound)...)
        return out
    }

    /// Inflates the zlib stream made of `pieces` (in order) into exactly `expectedCount` bytes.
    /// A stream that ends early, runs past `expectedCount`, or is corrupt throws: the output size is
    /// known in advance, so nothing is allocated from the compressed data's say-so.
    static func inflate(pieces: [UnsafeRawBufferPointer], expectedCount: Int, format: String) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw RenderError.corruptImage(format: format, "zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: expectedCount + 1)  // one spare byte detects excess data
        var ended = false
        try out.withUnsafeMutableBufferPointer { dst in
            stream.next_out = dst.baseAddress
            stream.avail_out = uInt(dst.count)
            for piece in pieces where !piece.isEmpty {
                guard !ended else {
                    throw RenderError.corruptImage(format: format, "data continues after the end of the zlib stream")
                }
                stream.next_in = UnsafeMutablePointer(mutating: piece.baseAddress!.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(piece.count)
                while stream.avail_in > 0 {
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    if status == Z_STREAM_END { ended = true; break }
                    guard status == Z_OK else {
                        let why = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                        throw RenderError.corruptImage(format: format, "compressed data is corrupt (\(why))")
                    }
                    if stream.avail_out == 0 {
                        throw RenderError.corruptImage(format: format, "pixel data is larger than the image")
                    }
                }
            }
        }
        guard ended else { throw RenderError.corruptImage(format: format, "compressed data ends early") }
        guard Int(stream.total_out) == expectedCount else {
            throw RenderError.corruptImage(format: format, "pixel data holds \(stream.total_out) bytes, expected \(expectedCount)")
        }
        out.removeLast()
        return out
    }
}
