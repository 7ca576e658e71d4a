// The zlib calls the archive needs: CRC-32, raw deflate, and an inflate that stops at a bound.

import CZlib
import Foundation

/// Raw deflate streams (no zlib header, window bits -15) and CRC-32, as zip stores them.
/// The pointer work is fenced here; nothing unsafe leaves these functions.
package enum Deflate {
    /// zlib's CRC-32 of `bytes`, continuing from `crc` (0 to start).
    package static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = uLong(crc)
        var rest = bytes
        // zlib takes a 32-bit length: feed it in chunks.
        while !rest.isEmpty {
            let n = min(rest.count, 1 << 30)
            c = CZlib.crc32(c, rest.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
        return UInt32(truncatingIfNeeded: c)
    }

    package static func crc32(_ data: Data) -> UInt32 { data.withUnsafeBytes { crc32($0) } }

    /// Compresses `input` as one raw deflate stream at `level` (0...9). The output depends only on
    /// the input, the level and the zlib build, which is what makes archives reproducible.
    static func compress(_ input: UnsafeRawBufferPointer, level: Int32) throws(ArchiveError) -> [UInt8] {
        var stream = z_stream()
        var rc = deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
                               zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw ArchiveError(.io, "zlib deflateInit2 failed (\(rc))") }
        defer { deflateEnd(&stream) }

        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: max(bound, 64))
        let produced: Int = output.withUnsafeMutableBytes { out in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(out.count)
            rc = deflate(&stream, Z_FINISH)
            return out.count - Int(stream.avail_out)
        }
        // deflateBound guarantees one Z_FINISH call completes.
        guard rc == Z_STREAM_END else { throw ArchiveError(.io, "zlib deflate failed (\(rc))") }
        output.removeSubrange(produced...)
        return output
    }

    /// Why a bounded inflate stopped.
    package enum InflateOutcome: Equatable {
        /// The stream ended after exactly `produced` bytes, having consumed `consumed` input bytes.
        case ended(produced: Int, consumed: Int)
        /// The output filled up: the stream holds more than the room given.
        case overflow
        /// The input ran out before the stream ended.
        case truncated(produced: Int)
        /// zlib found invalid deflate data.
        case corrupt(String)
    }

    /// Inflates a raw deflate stream into `output`, never writing past it. Give one byte more room
    /// than expected to tell "exactly this size" from "more than this size".
    package static func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> InflateOutcome {
        var stream = z_stream()
        let rcInit = inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rcInit == Z_OK else { return .corrupt("zlib inflateInit2 failed (\(rcInit))") }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        // A zero-size output still needs a valid pointer for zlib.
        var scratch: UInt8 = 0
        let rc: Int32 = withUnsafeMutablePointer(to: &scratch) { scratchPointer in
            stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self) ?? scratchPointer
            stream.avail_out = uInt(output.count)
            return CZlib.inflate(&stream, Z_FINISH)
        }
        let produced = output.count - Int(stream.avail_out)
        let consumed = input.count - Int(stream.avail_in)
        switch rc {
        case Z_STREAM_END:
            return .ended(produced: produced, consumed: consumed)
        case Z_BUF_ERROR, Z_OK:
            return stream.avail_out == 0 ? .overflow : .truncated(produced: produced)
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "error \(rc)"
            return .corrupt(message)
        }
    }

    /// Inflates a raw deflate stream in pieces of at most `chunk` bytes, handing each to `sink`,
    /// never producing more than `limit` bytes: memory stays at one chunk whatever the entry's
    /// size. The outcome is the same as `inflate(_:into:)` with a `limit + 1` byte buffer.
    static func inflate(_ input: UnsafeRawBufferPointer, limit: Int, chunk: Int,
                        into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> InflateOutcome {
        var stream = z_stream()
        let rcInit = inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rcInit == Z_OK else { return .corrupt("zlib inflateInit2 failed (\(rcInit))") }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        var buffer = [UInt8](repeating: 0, count: max(1, chunk))
        var total = 0
        return try buffer.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) throws -> InflateOutcome in
            while true {
                stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                let produced = out.count - Int(stream.avail_out)
                total += produced
                if total > limit { return .overflow }
                if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: out[..<produced])) }
                switch rc {
                case Z_STREAM_END:
                    return .ended(produced: total, consumed: input.count - Int(stream.avail_in))
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress possible: the output had room, so the input ran out.
                    return .truncated(produced: total)
                default:
                    return .corrupt(stream.msg.map { String(cString: $0) } ?? "error \(rc)")
                }
            }
        }
    }
}
