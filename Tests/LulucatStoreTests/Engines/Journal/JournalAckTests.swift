// Format 3: the allocation claim and ack marks tell damage in a journal's last frame from a frame
// a crash tore; a damaged snapshot keeps every journal frame that checks, applied element by element.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct JournalAckTests {
    /// Saves `count` strokes one at a time (fixed16 frames) and leaves them in the journal.
    func journal(_ f: JournalFixture, count: Int) async throws -> (UUID, [UInt8], [PageContent], [Int]) {
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        var contents = [try await session.content(of: page)]
        var ends = [JournalFormat.headerSize]
        for i in 0..<count {
            try await session.append(sampleStroke(40 + 10 * i, seed: i), to: page)
            try await session.save()
            contents.append(try await session.content(of: page))
            ends.append(try f.replay(page).validEnd)
        }
        await session.abandon()
        return (page, try #require(readBytes(f.package.journalPath(page))), contents, ends)
    }

    @Test func aSaveIsFollowedByItsAckMarkAndTheSizeStaysAMultipleOfTheChunk() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 8192), codec: .fixed16)
        let (page, bytes, _, ends) = try await journal(f, count: 6)
        let r = try f.replay(page)
        #expect(r.header?.version == 3 && r.header?.allocationChunk == 8192)
        #expect(bytes.count % 8192 == 0 && bytes.count > 8192)  // it grew, by whole chunks
        #expect(r.journal == .current && r.findings.isEmpty && r.tailToClear == nil)
        let last = ends.last!
        let ack = JournalFormat.encodeAckMark(generation: r.header!.generation, sequence: 5)
        #expect(Array(bytes[(last + JournalFormat.ackGap)..<(last + JournalFormat.ackGap + 9)]) == ack)
        // The end mark right after the last frame, as in format 2.
        #expect(Array(bytes[last..<(last + 9)]) == JournalFormat.encodeEndMark(generation: r.header!.generation, sequence: 6))
    }

    /// The cases a torn write also produces (the last frame cut, zeroed from inside it on, or its
    /// bytes changed), on a frame that was acknowledged: damage, reported. The same bytes without
    /// the ack mark (what a crash while writing that frame leaves) stay a torn tail.
    @Test func damageInsideTheLastAcknowledgedFrameIsReported() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 8192), codec: .fixed16)
        let (page, bytes, contents, ends) = try await journal(f, count: 4)
        let path = f.package.journalPath(page)
        let start = ends[3], end = ends[4]
        let generation = try #require(try f.replay(page).header?.generation)
        let ackAt = end + JournalFormat.ackGap
        func check(_ variant: [UInt8], damaged: Bool, _ what: String) throws {
            try Data(variant).write(to: URL(fileURLWithPath: path))
            let r = try f.replay(page)
            #expect(r.content == contents[3], "\(what)")
            #expect(r.frameCount == 3, "\(what)")
            if damaged {
                guard case .damaged = r.journal else { Issue.record("\(what): \(r.journal)"); return }
                #expect(r.findings.contains { $0.severity == .error }, "\(what)")
            } else {
                #expect(r.journal == .current, "\(what)")
                #expect(!r.findings.contains { $0.severity == .error }, "\(what)")
            }
        }
        var withoutAck = bytes
        withoutAck.replaceSubrange(ackAt..<(ackAt + 9), with: [UInt8](repeating: 0, count: 9))
        // Stale ack marks of earlier frames that later frames did not overwrite are not evidence.
        for earlier in 0..<3 {
            let at = ends[earlier + 1] + JournalFormat.ackGap
            if at >= end + 9, JournalFormat.encodeAckMark(generation: generation, sequence: UInt64(earlier)) == Array(withoutAck[at..<(at + 9)]) {
                #expect(Bool(true))
            }
        }
        for cut in stride(from: start + 1, to: end, by: 37) {
            // Zeroed from inside the last frame through its end mark (a lost block's worth).
            var zeroed = bytes
            for i in cut..<(end + 9) { zeroed[i] = 0 }
            try check(zeroed, damaged: true, "zeroed from \(cut)")
            var tornZeroed = withoutAck
            for i in cut..<(end + 9) { tornZeroed[i] = 0 }
            try check(tornZeroed, damaged: false, "zeroed from \(cut) without the ack mark")
            // Cut off inside the last frame: the size is no longer a multiple of the chunk.
            try check(Array(bytes[0..<cut]), damaged: true, "cut at \(cut)")
            // A byte changed inside the last frame.
            var flipped = bytes
            flipped[cut] ^= 0x5A
            try check(flipped, damaged: true, "flipped at \(cut)")
            var tornFlipped = withoutAck
            tornFlipped[cut] ^= 0x5A
            try check(tornFlipped, damaged: false, "flipped at \(cut) without the ack mark")
        }
        // Cut in the zeros after the end mark: nothing lost, a warning, and the next write
        // restores the size.
        try Data(Array(bytes[0..<(bytes.count - 100)])).write(to: URL(fileURLWithPath: path))
        let r = try f.replay(page)
        #expect(r.journal == .current && r.frameCount == 4 && r.content == contents[4])
        #expect(r.findings.contains { $0.severity == .warning } && !r.findings.contains { $0.severity == .error })
        let session = try await f.open()
        try await session.append(sampleStroke(12, seed: 77), to: page)
        try await session.save()
        await session.abandon()
        #expect((readBytes(path)?.count ?? 0) % 8192 == 0)
        let again = try f.replay(page)
        #expect(again.journal == .current && again.frameCount == 5 && again.findings.isEmpty)
    }

    /// A version-2 journal (no claim, no ack marks) reads as before: the same cut is a torn tail.
    @Test func aVersionTwoJournalKeepsItsRules() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 8192), codec: .fixed16)
        let (page, _, contents, ends) = try await journal(f, count: 2)
        let path = f.package.journalPath(page)
        let r = try f.replay(page)
        var header = try #require(r.header)
        header.version = 2
        header.allocationShift = 0
        let snapshot = try #require(readBytes(f.package.pagePath(page)))
        var bytes = JournalFormat.encodeHeader(header)
        let changes = JournalChangeCodec(codec: header.codec, version: 2)
        for (k, element) in contents[2].elements.enumerated() {
            let e = try changes.encodeSave([.append([element])])
            bytes += JournalFormat.encodeFrame(type: e.type, payload: e.payload, generation: header.generation, sequence: UInt64(k))
        }
        _ = snapshot
        let full = bytes + JournalFormat.encodeEndMark(generation: header.generation, sequence: 2) + [UInt8](repeating: 0, count: 5000)
        try Data(full).write(to: URL(fileURLWithPath: path))
        let whole = try f.replay(page)
        #expect(whole.header?.version == 2 && whole.content == contents[2] && whole.journal == .current)
        try Data(Array(full[0..<(ends[1] + 20)])).write(to: URL(fileURLWithPath: path))
        let cut = try f.replay(page)
        #expect(cut.content == contents[1] && cut.journal == .current)
        #expect(cut.findings.contains { $0.message.contains("torn tail") })
    }
}

@Suite struct JournalSalvageTests {
    /// The snapshot damaged (its trailer, so its identity no longer matches the journal's header):
    /// its records still check, and the journal's frames apply on top of them.
    @Test func aDamagedSnapshotKeepsTheJournalsFrames() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 8192), codec: .fixed16)
        let first = try await f.open()
        let page = await first.pageIDs()[0]
        for i in 0..<3 { try await first.append(sampleStroke(20 + i, seed: i), to: page); try await first.save() }
        try await first.close()  // compacted: the three strokes in the snapshot
        let second = try await f.open()
        for i in 3..<6 { try await second.append(sampleStroke(20 + i, seed: i), to: page); try await second.save() }
        let ids = try await second.content(of: page).elements.map(\.id)
        try await second.transform([ids[0]], by: .translation(dx: 9, dy: 9), on: page)
        try await second.save()
        try await second.delete([ids[1]], from: page)
        try await second.save()
        let expected = try await second.content(of: page)
        await second.abandon()
        var snapshot = try #require(readBytes(f.package.pagePath(page)))
        snapshot[snapshot.count - 2] ^= 0xFF
        try Data(snapshot).write(to: URL(fileURLWithPath: f.package.pagePath(page)))
        let session = try await f.open()
        #expect(try await session.content(of: page) == expected)
        #expect(await session.openReport.contains { $0.severity == .error })
        try await session.close()
        // Written back whole: the next open reads it without salvage.
        let again = try await f.open()
        #expect(try await again.content(of: page) == expected)
        #expect(await !again.openReport.contains { $0.severity == .error })
        try await again.close()
    }

    /// Element by element: a change naming an element the salvage lost costs only that element.
    @Test func changesApplyElementByElement() throws {
        let a = Element.stroke(sampleStroke(10, seed: 1)), b = Element.stroke(sampleStroke(11, seed: 2))
        let c = Element.stroke(sampleStroke(12, seed: 3))
        let missing = Element.stroke(sampleStroke(13, seed: 4))
        var page = PageContent(canvasSize: QuantizedSize(width: 100, height: 100), elements: [a, b])
        var ids = Set(page.elements.map(\.id))
        #expect(JournalReplay.applyLeniently(.append([a, c]), to: &page, ids: &ids) == 1)
        #expect(page.elements.map(\.id) == [a.id, b.id, c.id])
        #expect(JournalReplay.applyLeniently(.delete([missing.id, b.id]), to: &page, ids: &ids) == 1)
        #expect(page.elements.map(\.id) == [a.id, c.id])
        #expect(JournalReplay.applyLeniently(.move([missing.id, c.id], to: .back), to: &page, ids: &ids) == 1)
        #expect(page.elements.map(\.id) == [c.id, a.id])
        // An update of an element the page lacks adds that version: its ink survives.
        let moved = PageChange.update([missing]).self
        #expect(JournalReplay.applyLeniently(moved, to: &page, ids: &ids) == 0)
        #expect(page.elements.map(\.id) == [c.id, a.id, missing.id])
        // A replace of a stroke the page lacks keeps the pieces.
        let piece = Element.stroke(sampleStroke(5, seed: 9))
        #expect(JournalReplay.applyLeniently(.replace(UUID(), with: [piece]), to: &page, ids: &ids) == 1)
        #expect(page.elements.last?.id == piece.id)
        #expect(ids == Set(page.elements.map(\.id)))
    }
}
