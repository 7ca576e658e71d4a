// The journal's bytes: header layout, every frame type round trip, the CRC covering length and
// type, and zero or garbage bytes never taken for a frame.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatHandwriting
import LulucatStoreTesting

/// Every kind of page change, with elements of every kind.
func everyChange(base: Stroke) -> [PageChange] {
    var withChannels = sampleStroke(20, seed: 3)
    withChannels.azimuth = (0..<20).map { UInt16($0 * 100) }
    withChannels.altitude = (0..<20).map { UInt16(1500 - $0) }
    withChannels.opacity = (0..<20).map { UInt16(900 + $0) }
    let image = ImageElement(assetID: UUID(), frame: QuantizedRect(x: -10, y: 20, width: 300, height: 400), rotation: 4500)
    var payload = Data(repeating: 7, count: 24)
    payload.replaceSubrange(0..<16, with: withUnsafeBytes(of: UUID().uuid) { Data($0) })
    let unknown = try! UnknownElement(kind: 200, payload: payload)
    let piece = Stroke(ink: base.ink, samples: Array(base.samples[0..<5]))
    var moved = base
    moved.samples[0].x += 10
    return [
        .append([.stroke(withChannels), .image(image), .unknown(unknown)]),
        .replace(base.id, with: [.stroke(piece)]),
        .update([.stroke(moved)]),
        .move([image.id], to: .back),
        .move([unknown.id], to: .index(1)),
        .move([piece.id], to: .front),
        .delete([image.id]),
        .resize(QuantizedSize(width: 6120, height: 7920)),
    ]
}

@Suite struct JournalFormatTests {
    @Test func headerBytes() throws {
        let header = JournalFormat.Header(codec: .compact, generation: 0x0102_0304_0506_0708,
                                          base: SnapshotIdentity(length: 600_000, crc: 0xDEAD_BEEF))
        let bytes = JournalFormat.encodeHeader(header)
        #expect(bytes.count == 32)
        #expect(Array(bytes[0..<4]) == Array("LNJL".utf8))
        #expect(Array(bytes[4..<8]) == [3, 0, 1, 0])
        #expect(Array(bytes[8..<16]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Array(bytes[16..<24]) == [0xC0, 0x27, 0x09, 0, 0, 0, 0, 0])
        #expect(Array(bytes[24..<28]) == [0xEF, 0xBE, 0xAD, 0xDE])
        #expect(Array(bytes[28..<32]) == withUnsafeBytes(of: CRC32C.checksum(Array(bytes[0..<28])).littleEndian) { Array($0) })
        #expect(try bytes.withUnsafeBytes { try JournalFormat.decodeHeader($0) } == header)
        // A version-1 header (elements framed without their own checks) still reads, as version 1.
        var old = header
        old.version = 1
        let oldBytes = JournalFormat.encodeHeader(old)
        #expect(Array(oldBytes[4..<6]) == [1, 0])
        #expect(try oldBytes.withUnsafeBytes { try JournalFormat.decodeHeader($0) }.version == 1)
        // Version 2 (no allocation claim) still reads, as version 2.
        var two = header
        two.version = 2
        #expect(try JournalFormat.encodeHeader(two).withUnsafeBytes { try JournalFormat.decodeHeader($0) }.version == 2)
        var newer = header
        newer.version = 4
        #expect(throws: JournalFormatError.unsupportedVersion(4)) { try JournalFormat.encodeHeader(newer).withUnsafeBytes { try JournalFormat.decodeHeader($0) } }
        // Version 3's byte 7: the allocation shift, 0 or 13...30 (a 256 KiB chunk is 18).
        let claimed = JournalFormat.Header(codec: .compact, generation: 1, base: SnapshotIdentity(length: 1, crc: 2),
                                           allocationShift: JournalFormat.allocationShift(forChunk: 256 << 10))
        let claimedBytes = JournalFormat.encodeHeader(claimed)
        #expect(claimedBytes[7] == 18)
        #expect(try claimedBytes.withUnsafeBytes { try JournalFormat.decodeHeader($0) } == claimed)
        #expect(try claimedBytes.withUnsafeBytes { try JournalFormat.decodeHeader($0) }.allocationChunk == 256 << 10)
        #expect(JournalFormat.allocationShift(forChunk: 1024) == 0 && JournalFormat.allocationShift(forChunk: 3 << 12) == 0)
        #expect(JournalFormat.allocationShift(forChunk: 4096) == 0 && JournalFormat.allocationShift(forChunk: 8192) == 13)
        for shift: UInt8 in [1, 12, 31, 0xFF] {
            var bad = claimedBytes
            bad[7] = shift
            let crc = CRC32C.checksum(Array(bad[0..<28]))
            bad.replaceSubrange(28..<32, with: withUnsafeBytes(of: crc.littleEndian) { Array($0) })
            #expect(throws: JournalFormatError.self) { try bad.withUnsafeBytes { try JournalFormat.decodeHeader($0) } }
        }
        // Version 2 keeps byte 7 reserved: an allocation shift there is an error.
        var twoClaiming = JournalFormat.encodeHeader(two)
        twoClaiming[7] = 18
        let crc2 = CRC32C.checksum(Array(twoClaiming[0..<28]))
        twoClaiming.replaceSubrange(28..<32, with: withUnsafeBytes(of: crc2.littleEndian) { Array($0) })
        #expect(throws: JournalFormatError.self) { try twoClaiming.withUnsafeBytes { try JournalFormat.decodeHeader($0) } }
        // Every single-byte change of the header is refused.
        for i in 0..<32 {
            var bad = bytes
            bad[i] ^= 0x20
            #expect(throws: JournalFormatError.self) { try bad.withUnsafeBytes { try JournalFormat.decodeHeader($0) } }
        }
    }

    @Test(arguments: [UInt16(1), 2])
    func everyChangeRoundTrips(_ version: UInt16) throws {
        for codec in SampleCodecID.allCases {
            let c = JournalChangeCodec(codec: codec, version: version)
            let changes = everyChange(base: sampleStroke(30))
            for change in changes {
                let (type, payload) = try c.encode(change)
                let back = try payload.withUnsafeBytes { try c.decodeFrame(type: type, $0, fileOffset: 0) }
                #expect(back == [change])
            }
            let (type, payload) = try c.encodeSave(changes)
            #expect(type == JournalFormat.FrameType.group)
            #expect(try payload.withUnsafeBytes { try c.decodeFrame(type: type, $0, fileOffset: 0) } == changes)
            let (single, _) = try c.encodeSave([changes[0]])
            #expect(single == JournalFormat.FrameType.append)
        }
    }

    /// One element codec: a version-2 append frame's element is byte for byte the page file's record
    /// of the same element (docs/page-format.md's worked example, version 2, offsets 24..<71).
    @Test func anAppendedElementIsThePageFilesRecord() throws {
        let stroke = Stroke(id: UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!, ink: Ink(tool: .pen, color: .black, width: 20), samples: [
            Sample(x: 1000, y: 2000, radius: 10, pressure: 500, time: 0),
            Sample(x: 1003, y: 2001, radius: 10, pressure: 520, time: 4),
            Sample(x: 1007, y: 2003, radius: 10, pressure: 530, time: 8),
        ])
        let page = try PageFile.encode(PageContent(canvasSize: .letter, elements: [.stroke(stroke)]), codec: .compact)
        let (type, payload) = try JournalChangeCodec(codec: .compact).encode(.append([.stroke(stroke)]))
        #expect(type == JournalFormat.FrameType.append)
        #expect(payload == [1] + Array(page[PageFile.checkedHeaderSize..<page.count - PageFile.trailerSize]))
        #expect(payload.count == 1 + 47)
        #expect(Array(payload[1...4]) == [0x01, 0x27, 0x90, 0x05])
    }

    @Test func frameTypesAreTheChangeTypes() throws {
        let c = JournalChangeCodec(codec: .compact)
        let types = try everyChange(base: sampleStroke()).map { try c.encode($0).type }
        #expect(types == [1, 3, 4, 5, 5, 5, 2, 6])
    }

    @Test func truncatedOrExtendedPayloadsAreRefused() throws {
        let c = JournalChangeCodec(codec: .compact)
        for change in everyChange(base: sampleStroke(12)) {
            let (type, payload) = try c.encode(change)
            for cut in 0..<payload.count {
                let short = Array(payload[0..<cut])
                #expect(throws: PageFormatError.self) { try short.withUnsafeBytes { try c.decodeFrame(type: type, $0, fileOffset: 0) } }
            }
            let long = payload + [0]
            #expect(throws: PageFormatError.self) { try long.withUnsafeBytes { try c.decodeFrame(type: type, $0, fileOffset: 0) } }
        }
        #expect(throws: PageFormatError.self) { try [UInt8](repeating: 0, count: 8).withUnsafeBytes { try c.decodeFrame(type: 99, $0, fileOffset: 0) } }
    }

    @Test func frameLayoutAndChecksum() throws {
        let payload: [UInt8] = [9, 8, 7]
        let frame = JournalFormat.encodeFrame(type: 2, payload: payload, generation: 5, sequence: 11)
        #expect(frame.count == 12)
        #expect(Array(frame[0..<4]) == [3, 0, 0, 0])
        #expect(frame[8] == 2)
        #expect(Array(frame[9...]) == payload)
        // The CRC covers the generation and sequence (implied), then length, type and payload.
        var covered = ByteWriter()
        covered.writeUInt64(5); covered.writeUInt64(11)
        covered.writeUInt32(3); covered.writeUInt8(2); covered.writeBytes(payload)
        #expect(Array(frame[4..<8]) == withUnsafeBytes(of: CRC32C.checksum(covered.bytes).littleEndian) { Array($0) })
    }

    /// A journal of `frames` frames after a header, as bytes, and the frames' extents.
    func journal(frames payloads: [[UInt8]], generation: UInt64 = 1) -> [UInt8] {
        var bytes = JournalFormat.encodeHeader(.init(codec: .compact, generation: generation, base: SnapshotIdentity(length: 1, crc: 2)))
        for (i, p) in payloads.enumerated() {
            bytes += JournalFormat.encodeFrame(type: 1, payload: p, generation: generation, sequence: UInt64(i))
        }
        return bytes
    }

    func scan(_ bytes: [UInt8], generation: UInt64 = 1) -> JournalScan {
        bytes.withUnsafeBytes { JournalScan($0, generation: generation) }
    }

    @Test func everyByteOfAFrameIsCovered() {
        let bytes = journal(frames: [[1, 2, 3, 4], [5, 6, 7]])
        #expect(scan(bytes).frames.count == 2)
        for i in 32..<(32 + 13) {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var bad = bytes
                bad[i] ^= flip
                let s = scan(bad)
                #expect(s.frames.count == 0, "byte \(i) flipped by \(flip)")
                // The second frame is still whole and valid after the damaged first one: damage.
                #expect(s.tail == .corrupt(at: 32, validFramesAfter: 1))
                #expect(s.lostFrames == 1 && s.later.count == 1)
            }
        }
    }

    @Test func framesOnlyValidateInTheirPlace() {
        let a = JournalFormat.encodeFrame(type: 1, payload: [1], generation: 1, sequence: 0)
        let b = JournalFormat.encodeFrame(type: 1, payload: [2], generation: 1, sequence: 1)
        let header = journal(frames: [])
        #expect(scan(header + a + b).frames.count == 2)
        #expect(scan(header + b + a).frames.count == 0)  // swapped: wrong sequence numbers
        #expect(scan(header + a + b, generation: 2).frames.count == 0)  // another generation
        #expect(scan(header + a + a).frames.count == 1)  // a frame repeated
    }

    @Test func zerosEndTheJournalCleanly() {
        let bytes = journal(frames: [[1, 2, 3]])
        for zeros in [0, 1, 8, 9, 100, 65536] {
            let s = scan(bytes + [UInt8](repeating: 0, count: zeros))
            #expect(s.frames.count == 1)
            #expect(s.tail == .clean)
            #expect(s.validEnd == bytes.count)
        }
        // An all-zero frame header never validates: length 0 and type 0 are never written.
        #expect(JournalScan.frame(in: UnsafeRawBufferPointer(start: nil, count: 0), at: 0, generation: 0, sequence: 0) == nil)
        let zeros = [UInt8](repeating: 0, count: 64)
        for g: UInt64 in 0..<4 {
            for q: UInt64 in 0..<4 {
                #expect(zeros.withUnsafeBytes { JournalScan.frame(in: $0, at: 0, generation: g, sequence: q) } == nil)
            }
        }
    }

    @Test func garbageTailsNeverReplay() {
        var rng = SeededRandom(seed: 42)
        let good = journal(frames: [[1, 2, 3], [4, 5]])
        for length in [1, 2, 8, 9, 10, 50, 500, 4096] {
            for _ in 0..<20 {
                let garbage = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let s = scan(good + garbage)
                #expect(s.frames.count == 2)
                #expect(s.validEnd == good.count)
                if garbage.contains(where: { $0 != 0 }) {
                    #expect(s.tail == .torn(at: good.count))
                }
            }
        }
        // Garbage in which every fourth offset claims a 1 MiB frame: the search for valid frames
        // stops at its work limit and calls it damage rather than rule them out by guessing.
        var heavy = [UInt8](repeating: 0, count: 3 << 20)
        for i in stride(from: 0, to: heavy.count, by: 4) { heavy[i] = 0x01; heavy[i + 2] = 0x10 }
        #expect(scan(good + heavy).tail == .unsearched(at: good.count))
        #expect(scan(good + heavy).frames.count == 2)
        // A whole journal of garbage after the header.
        let noise = (0..<10_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        #expect(scan(journal(frames: []) + noise).frames.isEmpty)
    }
}

