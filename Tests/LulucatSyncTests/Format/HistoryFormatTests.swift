// History's formats (docs/sync.md §12.2, §12.3) byte by byte, as untrusted input, and the retention
// rule (§12.4) on exact times.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite struct HistoryFormatTests {
    static let doc = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let dev = UUID(uuidString: "10000000-0000-0000-0000-000000000001")!
    static let page = UUID(uuidString: "20000000-0000-0000-0000-000000000002")!

    /// A history chunk (§12.3), byte for byte: magic, version 1, reserved, document, device,
    /// count, then each entry (page, time varint, blob, strokes varint) in (time, page, blob) order.
    @Test func historyBlobBytesAreExactlyTheDocumented() throws {
        let b1 = BlobName(of: [1]), b2 = BlobName(of: [2])
        let blob = HistoryBlob(document: Self.doc, device: Self.dev, entries: [
            HistoryEntry(page: Self.page, time: 300, blob: b2, strokes: 2),
            HistoryEntry(page: Self.page, time: 5, blob: b1, strokes: 130),
            HistoryEntry(page: Self.page, time: 300, blob: b2, strokes: 2),  // a repeat: written once
        ])
        var expected: [UInt8] = [0x4C, 0x53, 0x48, 0x49, 0x01, 0x00, 0x00, 0x00]
        expected += [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
        expected += [0x10] + [UInt8](repeating: 0, count: 14) + [0x01]
        expected += [0x02]
        expected += [0x20] + [UInt8](repeating: 0, count: 14) + [0x02] + [0x05] + b1.bytes + [0x82, 0x01]
        expected += [0x20] + [UInt8](repeating: 0, count: 14) + [0x02] + [0xA7, 0x02] + b2.bytes + [0x02]
        #expect(blob.encode() == expected)
        let back = try HistoryBlob.decode(expected)
        #expect(back.document == Self.doc && back.device == Self.dev)
        #expect(back.entries == [HistoryEntry(page: Self.page, time: 5, blob: b1, strokes: 130),
                                 HistoryEntry(page: Self.page, time: 300, blob: b2, strokes: 2)])
    }

    /// Bad history chunks are refused with a reason: a newer version, bytes after the entries,
    /// entries out of order or repeated, a truncation anywhere, a count beyond what is left.
    @Test func badHistoryBlobsAreRefused() throws {
        let good = HistoryBlob(document: Self.doc, device: Self.dev, entries: [
            HistoryEntry(page: Self.page, time: 5, blob: BlobName(of: [1]), strokes: 1),
            HistoryEntry(page: Self.page, time: 9, blob: BlobName(of: [2]), strokes: 1),
        ]).encode()
        var newer = good
        newer[4] = 2
        #expect(throws: SyncFormatError.newerVersion(2)) { try HistoryBlob.decode(newer) }
        #expect(throws: SyncFormatError.self) { try HistoryBlob.decode(good + [0]) }
        for n in 0..<good.count { #expect(throws: SyncFormatError.self) { try HistoryBlob.decode(Array(good.prefix(n))) } }
        // Times are differences, so any times are in order; entries of one time must still be in
        // (page, blob) order and distinct: two of the same time in the wrong order, and one twice.
        let (low, high) = [BlobName(of: [1]), BlobName(of: [2])].sorted { $0.hex < $1.hex }.pair
        func blob(_ entries: [(Int64, BlobName)]) -> [UInt8] {
            var w = SyncWriter()
            w.raw(HistoryBlob.magic)
            w.uint16(1)
            w.uint16(0)
            w.uuid(Self.doc)
            w.uuid(Self.dev)
            w.varint(entries.count)
            var previous: Int64 = 0
            for (t, b) in entries {
                HistoryEntry(page: Self.page, time: t, blob: b, strokes: 1).write(&w, after: previous)
                previous = t
            }
            return w.bytes
        }
        #expect(try HistoryBlob.decode(blob([(5, low), (5, high)])).entries.count == 2)
        #expect(throws: SyncFormatError.self) { try HistoryBlob.decode(blob([(5, high), (5, low)])) }
        #expect(throws: SyncFormatError.self) { try HistoryBlob.decode(blob([(5, low), (5, low)])) }
        var huge = Array(good.prefix(40))
        huge += [0xFF, 0xFF, 0x3F]
        #expect(throws: SyncFormatError.self) { try HistoryBlob.decode(huge) }
        var magic = good
        magic[0] = 0
        #expect(throws: SyncFormatError.badMagic) { try HistoryBlob.decode(magic) }
        // Thousands of seeded mutations: refused or read, never a crash.
        var rng = TestRandom(seed: 35)
        for _ in 0..<3000 {
            var m = good
            for _ in 0..<Int.random(in: 1...4, using: &rng) { m[Int.random(in: 0..<m.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            _ = try? HistoryBlob.decode(m)
        }
    }

    /// A head without history is written as version 1 (a device of an older version reads it);
    /// with history, as version 2 with the section after the pages (name, chunks, entries): the same bytes plus the
    /// section. Both read back whole; a version 2 head with its section cut or extended is refused.
    @Test func aHeadCarriesItsHistoryAsVersion2AndWithoutItStaysVersion1() throws {
        var head = Head(document: Self.doc, device: Self.dev, clock: 4, title: Register("T", stamp: Stamp(clock: 1, device: Self.dev)),
                        origin: DocumentOrigin(created: 1, engine: "snapshot", codec: "compact"), deleted: nil)
        head.pages[Self.page] = HeadPage(fields: Register(PageFields(key: PositionKey([1]), width: 10, height: 20), stamp: Stamp(clock: 2, device: Self.dev)),
                                         removed: nil, blob: BlobName(of: [7]))
        let v1 = head.encode()
        #expect(v1[4] == 1 && v1[5] == 0)
        #expect(try Head.decode(v1) == head)
        var h2 = head
        h2.history = HeadHistory(deviceName: "Ada's iPad", chunks: [BlobName(of: [8]), BlobName(of: [9])],
                                 entries: [HistoryEntry(page: Self.page, time: 1_800_000_000_000, blob: BlobName(of: [7]), strokes: 3)])
        let v2 = h2.encode()
        #expect(v2[4] == 2 && v2[5] == 0)
        var section: [UInt8] = [10] + Array("Ada's iPad".utf8) + [2] + BlobName(of: [8]).bytes + BlobName(of: [9]).bytes + [1]
        section += Self.page.bytesInOrder + [0x80, 0xA0, 0xF1, 0xC2, 0xB1, 0x34] + BlobName(of: [7]).bytes + [3]
        #expect(Array(v2.prefix(4)) == Array(v1.prefix(4)) && Array(v2[6..<v1.count]) == Array(v1[6...]))
        #expect(Array(v2[v1.count...]) == section)
        #expect(try Head.decode(v2) == h2)
        #expect(throws: SyncFormatError.self) { try Head.decode(v2 + [0]) }
        #expect(throws: SyncFormatError.self) { try Head.decode(Array(v2.dropLast())) }
        // A chunk named twice is refused.
        var twice = h2
        twice.history.chunks = [BlobName(of: [8]), BlobName(of: [8])]
        #expect(throws: SyncFormatError.self) { try Head.decode(twice.encode()) }
        // A name over 64 bytes is cut on a character boundary when written.
        var long = h2
        long.history.deviceName = String(repeating: "é", count: 40)
        #expect(try Head.decode(long.encode()).history.deviceName == String(repeating: "é", count: 32))
        // More than 32 inline entries is refused.
        var crowded = h2
        crowded.history.entries = (0..<33).map { HistoryEntry(page: Self.page, time: Int64($0), blob: BlobName(of: [UInt8($0)]), strokes: 1) }
        #expect(throws: SyncFormatError.self) { try Head.decode(crowded.encode()) }
    }

    /// Retention (§12.4) on exact times: every version within `everyVersion`; then the newest of
    /// each page per UTC day; then per week; older, none; `.keepNothing` keeps nothing.
    @Test func retentionKeepsEveryVersionThenOneADayThenOneAWeek() {
        let day: Int64 = 86_400_000
        let now: Int64 = 3000 * day + day / 2
        let p1 = UUID(), p2 = UUID()
        func e(_ p: UUID, _ t: Int64) -> HistoryEntry { HistoryEntry(page: p, time: t, blob: BlobName(of: Array("\(p)\(t)".utf8)), strokes: 1) }
        let recent = [e(p1, now - 1000), e(p1, now - 2 * day), e(p1, now - 7 * day + 1)]
        // Day 2990 (10 days ago): three versions of p1, one of p2; day 2980: two of p1.
        let d2990 = [e(p1, 2990 * day + 5), e(p1, 2990 * day + 50), e(p1, 2990 * day + 500), e(p2, 2990 * day + 7)]
        let d2980 = [e(p1, 2980 * day + 1), e(p1, 2980 * day + 2)]
        // 100 days ago and 103 days ago: weeks 428 (days 2996 .. 3002 hold now); 2900 / 7 = 414.28
        let w = [e(p1, 2900 * day), e(p1, 2901 * day), e(p1, 2897 * day)]
        let ancient = [e(p1, now - 366 * day), e(p2, now - 400 * day)]
        let all = (recent + d2990 + d2980 + w + ancient).sorted(by: HistoryEntry.precedes)
        let kept = Set(HistoryRetention.standard.kept(all, now: now))
        #expect(kept.isSuperset(of: recent))
        #expect(kept.contains(e(p1, 2990 * day + 500)) && !kept.contains(e(p1, 2990 * day + 50)) && !kept.contains(e(p1, 2990 * day + 5)))
        #expect(kept.contains(e(p2, 2990 * day + 7)), "another page's version of the same day is its own")
        #expect(kept.contains(e(p1, 2980 * day + 2)) && !kept.contains(e(p1, 2980 * day + 1)))
        // 2897, 2900 and 2901 are days of weeks 413 (2891...2897) and 414 (2898...2904).
        #expect(kept.contains(e(p1, 2897 * day)) && kept.contains(e(p1, 2901 * day)) && !kept.contains(e(p1, 2900 * day)))
        #expect(kept.isDisjoint(with: ancient))
        #expect(kept.count == 3 + 2 + 1 + 2)
        #expect(HistoryRetention.keepNothing.kept(all, now: now).isEmpty)
        // A version from the future (another device's clock ahead) counts as new.
        #expect(HistoryRetention.standard.kept([e(p1, now + 5 * day)], now: now).count == 1)
    }
}

extension UUID {
    /// The 16 bytes in RFC 4122 order.
    var bytesInOrder: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}

extension Array {
    /// The first two elements as a pair.
    var pair: (Element, Element) { (self[0], self[1]) }
}
