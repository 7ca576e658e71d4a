// The bytes of `pages/<page-id>.journal`: a 32-byte header and CRC32C-checked frames, and the
// scan that finds the valid frames, a torn tail, or corruption. Specified in docs/journal-format.md.

import Foundation
import LulucatInk

/// Which snapshot a journal applies on top of: the snapshot file's length and its CRC32C trailer.
package struct SnapshotIdentity: Equatable, Sendable {
    package var length: UInt64
    package var crc: UInt32

    /// The identity of snapshot file bytes (the CRC is the file's own trailer, not recomputed).
    package init(snapshot bytes: [UInt8]) {
        length = UInt64(bytes.count)
        crc = bytes.count >= 4
            ? UInt32(bytes[bytes.count - 4]) | UInt32(bytes[bytes.count - 3]) << 8
                | UInt32(bytes[bytes.count - 2]) << 16 | UInt32(bytes[bytes.count - 1]) << 24
            : 0
    }

    package init(length: UInt64, crc: UInt32) {
        self.length = length
        self.crc = crc
    }
}

/// Constants and the header of the journal format.
package enum JournalFormat {
    /// "LNJL".
    static let magic: [UInt8] = [0x4C, 0x4E, 0x4A, 0x4C]
    /// The version this build writes: 3 adds the allocation claim (header byte 7) and ack marks
    /// to version 2, whose elements are checked records (`ElementCodec`). Versions 1 and 2 are
    /// read, and appended to in their own version until the next generation.
    static let version: UInt16 = 3
    static let versions: ClosedRange<UInt16> = 1...3
    /// Version 3: the smallest and largest allocation shift a header may claim (8 KiB ... 1 GiB:
    /// the ack mark needs a block other than its frame's end, so a claimed chunk holds at least
    /// two 4 KiB blocks).
    static let allocationShifts: ClosedRange<UInt8> = 13...30
    /// Version 3: an ack mark goes this many bytes after the end of the frame it acknowledges, so
    /// that it never shares an aligned 4 KiB block with that frame's end mark.
    package static let ackGap = 4096
    package static let headerSize = 32
    /// length u32 + CRC u32 + type u8.
    package static let frameHeaderSize = 9
    /// The largest payload a frame may claim; a bigger length is never trusted.
    static let maxPayload = 1 << 26

    /// Frame types. 0 is never a type: an all-zero frame header is the end of the journal.
    enum FrameType {
        static let append: UInt8 = 1
        static let delete: UInt8 = 2
        static let replace: UInt8 = 3
        static let update: UInt8 = 4
        static let move: UInt8 = 5
        /// Page metadata: the canvas size.
        static let resize: UInt8 = 6
        /// Several changes of one save, in order, so that one save is one frame.
        static let group: UInt8 = 7
        static let known: ClosedRange<UInt8> = 1...7
    }

    package struct Header: Equatable, Sendable {
        package var codec: SampleCodecID
        package var generation: UInt64
        package var base: SnapshotIdentity
        package var version: UInt16
        /// Version 3, byte 7: 0, or s when the writer keeps the file's size a multiple of 2^s
        /// (preallocation in chunks of 2^s bytes; a header-only journal is the one exception)
        /// and writes an ack mark after every acknowledged frame.
        package var allocationShift: UInt8

        package init(codec: SampleCodecID, generation: UInt64, base: SnapshotIdentity, version: UInt16 = JournalFormat.version,
                     allocationShift: UInt8 = 0) {
            self.codec = codec
            self.generation = generation
            self.base = base
            self.version = version
            self.allocationShift = version >= 3 ? allocationShift : 0
        }

        /// The chunk the file's size is a multiple of (0: none claimed).
        package var allocationChunk: Int { allocationShift == 0 ? 0 : 1 << Int(allocationShift) }
    }

    /// The allocation shift a new journal claims for a preallocation chunk: its log2 when the
    /// chunk is a power of two of 8 KiB ... 1 GiB, otherwise 0 (no claim, no ack marks).
    package static func allocationShift(forChunk chunk: Int) -> UInt8 {
        guard chunk > 0, chunk & (chunk - 1) == 0 else { return 0 }
        let shift = UInt8(chunk.trailingZeroBitCount)
        return allocationShifts.contains(shift) ? shift : 0
    }

    package static func encodeHeader(_ h: Header) -> [UInt8] {
        var w = ByteWriter(capacity: headerSize)
        w.writeBytes(magic)
        w.writeUInt16(h.version)
        w.writeUInt8(h.codec.rawValue)
        w.writeUInt8(h.version >= 3 ? h.allocationShift : 0)
        w.writeUInt64(h.generation)
        w.writeUInt64(h.base.length)
        w.writeUInt32(h.base.crc)
        w.writeUInt32(CRC32C.checksum(w.bytes))
        return w.bytes
    }

    /// Reads the header, checking magic, version, codec, flags and its CRC.
    package static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(JournalFormatError) -> Header {
        guard bytes.count >= headerSize else { throw .badHeader("the file is \(bytes.count) bytes, shorter than the \(headerSize)-byte header") }
        guard bytes.prefix(4).elementsEqual(magic) else { throw .badHeader("the magic bytes are not LNJL") }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<28]))
        guard stored == computed else { throw .badHeader("header CRC32C is 0x\(String(computed, radix: 16)) but the file says 0x\(String(stored, radix: 16))") }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[4..<28]), base: 4)
        do {
            let version = try r.readUInt16()
            guard versions.contains(version) else { throw JournalFormatError.unsupportedVersion(version) }
            let codecByte = try r.readUInt8()
            guard let codec = SampleCodecID(rawValue: codecByte) else { throw JournalFormatError.badHeader("unknown sample codec \(codecByte)") }
            let flags = try r.readUInt8()
            if version >= 3 {
                guard flags == 0 || allocationShifts.contains(flags) else {
                    throw JournalFormatError.badHeader("allocation shift \(flags) is neither 0 nor \(allocationShifts.lowerBound)...\(allocationShifts.upperBound)")
                }
            } else {
                guard flags == 0 else { throw JournalFormatError.badHeader("reserved flags 0x\(String(flags, radix: 16)) are not zero") }
            }
            let generation = try r.readUInt64()
            // The next journal is generation + 1: the last value could not be followed (a writer
            // counting from 1 never gets there; only a damaged or forged file says it).
            guard generation < UInt64.max else { throw JournalFormatError.badHeader("generation \(generation) leaves no next generation") }
            let length = try r.readUInt64()
            let crc = try r.readUInt32()
            return Header(codec: codec, generation: generation, base: SnapshotIdentity(length: length, crc: crc), version: version,
                          allocationShift: flags)
        } catch let e as JournalFormatError {
            throw e
        } catch {
            throw .badHeader("\(error)")
        }
    }

    /// The CRC32C of a frame: over the journal's generation and the frame's sequence number (both
    /// implied, 8 bytes each little-endian), then its length, type and payload as stored.
    package static func frameChecksum(generation: UInt64, sequence: UInt64, lengthAndType: (UInt32, UInt8),
                              payload: UnsafeRawBufferPointer) -> UInt32 {
        var prefix = ByteWriter(capacity: 21)
        prefix.writeUInt64(generation)
        prefix.writeUInt64(sequence)
        prefix.writeUInt32(lengthAndType.0)
        prefix.writeUInt8(lengthAndType.1)
        let crc = CRC32C.checksum(prefix.bytes)
        return CRC32C.checksum(payload, continuing: crc)
    }

    /// Version 2: the 9 bytes a writer puts right after its last frame, in the same write: a frame
    /// header with length 0, type 0xFF and the CRC a frame of that length and type would have as
    /// frame number `sequence` (the number of frames before it). A journal that ends without it
    /// (zeros, or the end of the file, right after a valid frame) lost saves to damage: a crash
    /// tears only the frame being written, which overwrites the old end mark with nonzero bytes.
    package static let endMarkType: UInt8 = 0xFF

    package static func encodeEndMark(generation: UInt64, sequence: UInt64) -> [UInt8] {
        encodeMark(type: endMarkType, generation: generation, sequence: sequence)
    }

    /// A mark: a frame header of length 0 and `type`, with the CRC such a frame would have as
    /// frame number `sequence` (what `isMark` checks).
    private static func encodeMark(type: UInt8, generation: UInt64, sequence: UInt64) -> [UInt8] {
        let crc = frameChecksum(generation: generation, sequence: sequence, lengthAndType: (0, type),
                                payload: UnsafeRawBufferPointer(start: nil, count: 0))
        var w = ByteWriter(capacity: frameHeaderSize)
        w.writeUInt32(0)
        w.writeUInt32(crc)
        w.writeUInt8(type)
        return w.bytes
    }

    /// Whether the end mark for frame number `sequence` is at `offset`.
    static func isEndMark(_ bytes: UnsafeRawBufferPointer, at offset: Int, generation: UInt64, sequence: UInt64) -> Bool {
        isMark(bytes, at: offset, type: endMarkType, generation: generation, sequence: sequence)
    }

    /// Version 3: the 9 bytes a writer puts `ackGap` bytes after frame number `sequence` once that
    /// frame's `fdatasync` returned (not synced itself): shaped like the end mark, type 0xFE, its
    /// CRC that of a frame of length 0 and type 0xFE as frame number `sequence`. It is written
    /// only after the frame is durable, so a crash while the frame is written never leaves it:
    /// a frame that fails its check with its ack mark (or a later one) present was damaged.
    package static let ackMarkType: UInt8 = 0xFE

    package static func encodeAckMark(generation: UInt64, sequence: UInt64) -> [UInt8] {
        encodeMark(type: ackMarkType, generation: generation, sequence: sequence)
    }

    /// The frame number of the ack mark at `offset`, if one of `sequences` checks there.
    static func ackMark(_ bytes: UnsafeRawBufferPointer, at offset: Int, generation: UInt64, sequences: ClosedRange<UInt64>) -> UInt64? {
        guard offset >= 0, bytes.count - offset >= frameHeaderSize,
              bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self) == 0, bytes[offset + 8] == ackMarkType else { return nil }
        for s in sequences.reversed() where isMark(bytes, at: offset, type: ackMarkType, generation: generation, sequence: s) { return s }
        return nil
    }

    static func isMark(_ bytes: UnsafeRawBufferPointer, at offset: Int, type: UInt8, generation: UInt64, sequence: UInt64) -> Bool {
        guard offset >= 0, bytes.count - offset >= frameHeaderSize,
              bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self) == 0, bytes[offset + 8] == type else { return false }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        return stored == frameChecksum(generation: generation, sequence: sequence, lengthAndType: (0, type),
                                       payload: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// The bytes of one frame.
    package static func encodeFrame(type: UInt8, payload: [UInt8], generation: UInt64, sequence: UInt64) -> [UInt8] {
        precondition(FrameType.known.contains(type) && !payload.isEmpty && payload.count <= maxPayload)
        let length = UInt32(payload.count)
        let crc = payload.withUnsafeBytes {
            frameChecksum(generation: generation, sequence: sequence, lengthAndType: (length, type), payload: $0)
        }
        var w = ByteWriter(capacity: frameHeaderSize + payload.count)
        w.writeUInt32(length)
        w.writeUInt32(crc)
        w.writeUInt8(type)
        w.writeBytes(payload)
        return w.bytes
    }
}

/// What is wrong with a journal file's header.
package enum JournalFormatError: Error, Equatable, CustomStringConvertible {
    case badHeader(String)
    case unsupportedVersion(UInt16)
    package var description: String {
        switch self {
        case .badHeader(let s): return "journal header is invalid: \(s)"
        case .unsupportedVersion(let v): return "journal format version \(v) is not one this build reads (\(JournalFormat.versions.lowerBound)...\(JournalFormat.versions.upperBound))"
        }
    }
}

/// The valid frames of a journal and what follows them.
struct JournalScan {
    struct Frame {
        var type: UInt8
        /// Where the payload is in the file.
        var payload: Range<Int>
        /// Where the whole frame is in the file.
        var extent: Range<Int>
    }

    enum Tail: Equatable {
        /// Only zero bytes (or nothing) after the last valid frame.
        case clean
        /// A frame that fails its check, with nothing valid after it: a write cut short by a crash.
        case torn(at: Int)
        /// A frame that fails its check followed by valid frames: damage, not a crash.
        case corrupt(at: Int, validFramesAfter: Int)
        /// Nonzero bytes too many to search for valid frames within the work limit: treated as
        /// damage (kept aside), since valid frames could not be ruled out.
        case unsearched(at: Int)
        /// Version 2: no end mark right after the last valid frame, and no valid frame after it,
        /// but zeros or the end of the file there (a crash leaves the old end mark or the torn
        /// frame's nonzero bytes), or an end mark of a later frame number further on: saves lost
        /// to damage (zeroed or cut off), how many unknown (`laterEndMark`: at least that many).
        case missingEnd(at: Int, laterEndMark: Int?)
    }

    /// Most payload bytes the search for frames after a bad one may checksum (about 10 ms with
    /// CRC instructions), so a journal of garbage cannot make opening a page take minutes.
    static let searchBudget = 64 << 20

    var frames: [Frame] = []
    /// Damage only: the frames that validate in their own place after the damaged ones (each run
    /// found by searching for the next sequence numbers, as below), in order. Replay salvages them.
    var later: [Frame] = []
    /// Damage only: how many frame numbers the damage took (frames between the valid chains).
    var lostFrames = 0
    /// The offset just past the last valid frame: where the next frame goes.
    var validEnd: Int
    /// The offset just past the last nonzero byte of the file (at least `validEnd`).
    var dataEnd: Int
    var tail: Tail = .clean

    /// Version 3: no valid frame after the last valid one, but an ack mark of frame number k or
    /// later (k = the valid frames) after it: frame k was acknowledged, so the bytes that fail
    /// their check are damage, not a torn write. `saves`: at least that many saves lost.
    /// Version 3 with an allocation claim: the file's size is not a multiple of its chunk and the
    /// last valid frame ends at or past the last whole chunk: the file was cut short (a crash
    /// growing the file tears a frame that began before that chunk boundary).
    var acknowledgedAfter: (ackAt: Int, saves: Int)?
    /// The file is shorter than its allocation claim says it can be (version 3).
    var cutShort = false

    /// Walks the frames of a journal whose header is valid. `endMarks`: the journal is version 2,
    /// whose writer ends every write with an end mark. `chunk`: version 3's allocation claim (0:
    /// none), whose writer also keeps the size a multiple of it and writes ack marks.
    init(_ bytes: UnsafeRawBufferPointer, generation: UInt64, endMarks: Bool = false, chunk: Int = 0) {
        var offset = JournalFormat.headerSize
        var sequence: UInt64 = 0
        while let frame = JournalScan.frame(in: bytes, at: offset, generation: generation, sequence: sequence) {
            frames.append(frame)
            offset = frame.extent.upperBound
            sequence += 1
        }
        validEnd = offset
        var end = bytes.count
        while end > offset && bytes[end - 1] == 0 { end -= 1 }
        if chunk > 0 {
            // Ack marks of frames before the last valid one's are left where later frames did not
            // overwrite them: like zeros. (Frame numbers up to 4,096 back: one a byte of the gap.)
            let stale = (sequence > 4096 ? sequence - 4096 : 0)...(sequence == 0 ? 0 : sequence - 1)
            while sequence > 0, end - offset >= JournalFormat.frameHeaderSize,
                  JournalFormat.ackMark(bytes, at: end - JournalFormat.frameHeaderSize, generation: generation, sequences: stale) != nil {
                end -= JournalFormat.frameHeaderSize
                while end > offset && bytes[end - 1] == 0 { end -= 1 }
            }
            let size = bytes.count
            if size % chunk != 0 && size != JournalFormat.headerSize + JournalFormat.frameHeaderSize && offset >= size / chunk * chunk {
                cutShort = true
            }
        }
        dataEnd = end
        let marked = endMarks && JournalFormat.isEndMark(bytes, at: offset, generation: generation, sequence: sequence)
        if marked && end <= offset + JournalFormat.frameHeaderSize { return }
        if endMarks && !marked && end <= offset {
            // Zeros or the end of the file where the end mark should be. Unless the end mark begins
            // a 512-byte sector or crosses into the next within its first 8 bytes: a crash may then
            // have persisted the frame's sector and not the next one, whose bytes were zeros.
            let inSector = offset % 512
            if cutShort || (inSector != 0 && inSector < 512 - (JournalFormat.frameHeaderSize - 1)) {
                tail = .missingEnd(at: offset, laterEndMark: nil)
            }
            return
        }
        guard end > offset else { return }
        // Nonzero bytes after the valid frames. A crash tears at most the one frame being written
        // (a save is one frame), so a valid later frame means damage. Look for the next few
        // sequence numbers at every offset where a frame header is plausible.
        // After a run of valid frames is found, the search goes on from its end, so damage in
        // several places keeps every run that checks (each found by its own sequence numbers).
        var budget = JournalScan.searchBudget
        var cursor = offset
        var bad = sequence  // the number of the first frame that failed
        runs: while cursor < end {
            var found: Frame?
            search: for start in (cursor + 1)..<max(cursor + 1, end) {
                guard let length = JournalScan.plausibleLength(in: bytes, at: start) else { continue }
                budget -= 16 * length
                if budget < 0 {
                    // Past the limit valid frames cannot be ruled out: damage either way.
                    if later.isEmpty { tail = .unsearched(at: offset); return }
                    break runs
                }
                for skipped in 1...16 {
                    if let first = JournalScan.frame(in: bytes, at: start, generation: generation, sequence: bad + UInt64(skipped)) {
                        found = first
                        lostFrames += skipped
                        bad += UInt64(skipped)
                        break search
                    }
                }
            }
            guard let first = found else { break }
            later.append(first)
            var next = first.extent.upperBound
            bad += 1
            while let f = JournalScan.frame(in: bytes, at: next, generation: generation, sequence: bad) {
                later.append(f)
                next = f.extent.upperBound
                bad += 1
            }
            cursor = next  // `end` is past the last nonzero byte: only zeros after it
        }
        if later.isEmpty && chunk > 0 {
            // An ack mark of frame k or later (k: the first frame that fails) is written only after
            // that frame's sync: the frame was acknowledged, and what fails its check is damage.
            var at = offset
            var latest: (at: Int, sequence: UInt64)?
            while at <= end - JournalFormat.frameHeaderSize {
                if let s = JournalFormat.ackMark(bytes, at: at, generation: generation, sequences: sequence...(sequence + 16)),
                   s >= (latest?.sequence ?? 0) {
                    latest = (at, s)
                }
                at += 1
            }
            if let latest {
                acknowledgedAfter = (latest.at, Int(latest.sequence - sequence) + 1)
                tail = .missingEnd(at: offset, laterEndMark: Int(latest.sequence - sequence) + 1)
                return
            }
            if cutShort && !marked {
                tail = .missingEnd(at: offset, laterEndMark: nil)
                return
            }
        }
        if later.isEmpty && endMarks && !marked {
            // Nonzero bytes and no valid frame after them: a torn frame, unless the end mark of a
            // frame number two or more past it shows that a later save was written after this
            // frame was acknowledged. (The end mark right after the torn frame proves nothing: a
            // crash may persist its sector and not one in the middle of the frame.)
            let limit = min(end, bytes.count - JournalFormat.frameHeaderSize)
            var at = offset + 1
            while at <= limit {
                for skipped in 2...16 where JournalFormat.isEndMark(bytes, at: at, generation: generation, sequence: sequence + UInt64(skipped)) {
                    tail = .missingEnd(at: offset, laterEndMark: skipped)
                    return
                }
                at += 1
            }
        }
        tail = later.isEmpty ? .torn(at: offset) : .corrupt(at: offset, validFramesAfter: later.count)
    }

    /// The payload length of a frame header at `offset` that could be a frame (a length in range
    /// that fits in the file, a type that is not 0), before any CRC; nil otherwise.
    static func plausibleLength(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard offset >= 0, bytes.count - offset >= JournalFormat.frameHeaderSize else { return nil }
        let length = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        guard length > 0, length <= UInt32(JournalFormat.maxPayload) else { return nil }
        // A type this build does not know still frames: replay reports it.
        guard bytes[offset + 8] != 0 else { return nil }
        guard Int(length) <= bytes.count - offset - JournalFormat.frameHeaderSize else { return nil }
        return Int(length)
    }

    /// The frame at `offset` if it is whole and its CRC matches for `sequence`; nil otherwise.
    static func frame(in bytes: UnsafeRawBufferPointer, at offset: Int, generation: UInt64, sequence: UInt64) -> Frame? {
        guard let length = plausibleLength(in: bytes, at: offset) else { return nil }
        let type = bytes[offset + 8]
        let start = offset + JournalFormat.frameHeaderSize
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])
        let crc = JournalFormat.frameChecksum(generation: generation, sequence: sequence, lengthAndType: (UInt32(length), type), payload: payload)
        guard crc == stored else { return nil }
        return Frame(type: type, payload: start..<start + length, extent: offset..<start + length)
    }
}
