// A save larger than one journal frame (docs/journal-format.md, "A save larger than a frame") is
// written as a compaction: never refused, all of it or none of it after a crash. The frame limit is
// lowered here (JournalOptions.maxFramePayload) so the tests need no 64 MiB of strokes;
// `lnote-dev bench journal --large-save 28000` runs the real limit with ~71 MB of frame.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct JournalLargeSaveTests {
    /// Frames of one 50-sample fixed16 stroke (about 900 bytes) fit; a save of ten does not.
    static func options(compactAfterFrames: Int = 4096) -> JournalOptions {
        var o = JournalOptions(compactAfterFrames: compactAfterFrames, preallocationChunk: 8192)
        o.maxFramePayload = 2_000
        return o
    }

    @Test func aSaveLargerThanAFrameIsWrittenAsACompaction() async throws {
        let f = try JournalFixture(Self.options(), codec: .compact)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(50, seed: 1), to: page)
        try await session.save()
        let before = try f.replay(page)
        #expect(before.journal == .current && before.frameCount == 1)
        let generation = try #require(before.header?.generation)
        let snapshotBefore = try #require(readBytes(f.package.pagePath(page)))

        // Ten strokes in one save: about 9 KB of frame, over the 2,000-byte limit.
        for i in 0..<10 { try await session.append(sampleStroke(50, seed: 100 + i), to: page) }
        let expected = try await session.content(of: page)
        try await session.save()
        #expect(await session.dirtyPageIDs.isEmpty)

        // The snapshot holds the whole page; a new, empty journal generation names it.
        let after = try f.replay(page)
        #expect(after.journal == .current)
        #expect(after.frameCount == 0)
        #expect(after.header?.generation == generation + 1)
        #expect(readBytes(f.package.pagePath(page)) != snapshotBefore)
        #expect(try PageFile.decode(#require(readBytes(f.package.pagePath(page)))) == expected)
        #expect(after.content == expected)

        // The next small save is frame 0 of the new journal.
        try await session.append(sampleStroke(50, seed: 999), to: page)
        try await session.save()
        let next = try f.replay(page)
        #expect(next.frameCount == 1 && next.header?.generation == generation + 1)
        #expect(next.content == (try await session.content(of: page)))
        let final = try await session.content(of: page)
        await session.abandon()
        let reopened = try await f.open()
        #expect(try await reopened.content(of: page) == final)
        try await reopened.close()
    }

    /// A crash during the large save: before the new snapshot's rename the page is as before the
    /// save (which was never acknowledged); after it, the old journal is stale and the page is the
    /// new snapshot. Never part of the save.
    @Test func aCrashDuringALargeSaveLeavesAllOrNothing() async throws {
        let f = try JournalFixture(Self.options(), codec: .compact)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(50, seed: 1), to: page)
        try await session.save()
        let old = try await session.content(of: page)
        let oldSnapshot = try #require(readBytes(f.package.pagePath(page)))
        let oldJournal = try #require(readBytes(f.package.journalPath(page)))
        for i in 0..<10 { try await session.append(sampleStroke(50, seed: 200 + i), to: page) }
        let new = try await session.content(of: page)
        try await session.save()
        let newSnapshot = try #require(readBytes(f.package.pagePath(page)))
        let newJournal = try #require(readBytes(f.package.journalPath(page)))
        await session.abandon()

        func state(_ snapshot: [UInt8], _ journal: [UInt8]) throws -> PageContent {
            try Data(snapshot).write(to: URL(fileURLWithPath: f.package.pagePath(page)))
            try Data(journal).write(to: URL(fileURLWithPath: f.package.journalPath(page)))
            return try f.replay(page).content
        }
        // Before the snapshot's rename: the old pair.
        #expect(try state(oldSnapshot, oldJournal) == old)
        // After it, before the new journal: the old journal names the old snapshot (stale).
        #expect(try f.replay(page).journal == .current)
        #expect(try state(newSnapshot, oldJournal) == new)
        #expect(try f.replay(page).journal == .stale)
        // Both written.
        #expect(try state(newSnapshot, newJournal) == new)
        let reopened = try await f.open()
        #expect(try await reopened.content(of: page) == new)
        try await reopened.close()
    }

    /// A save larger than a frame on a page whose journal is damaged: the damaged journal is kept
    /// aside first, and the snapshot holds what replay salvaged plus the save.
    @Test func aLargeSaveOverADamagedJournalKeepsItAside() async throws {
        let f = try JournalFixture(Self.options(), codec: .compact)
        var session = try await f.open()
        let page = await session.pageIDs()[0]
        for i in 0..<3 {
            try await session.append(sampleStroke(50, seed: 300 + i), to: page)
            try await session.save()
        }
        await session.abandon()
        // A bad header: the journal is damaged as a whole; the page is its snapshot (empty).
        var journal = try #require(readBytes(f.package.journalPath(page)))
        journal[0] ^= 0xFF
        try Data(journal).write(to: URL(fileURLWithPath: f.package.journalPath(page)))
        session = try await f.open()
        for i in 0..<10 { try await session.append(sampleStroke(50, seed: 400 + i), to: page) }
        let expected = try await session.content(of: page)
        try await session.save()
        #expect(readBytes(f.package.journalPath(page) + ".corrupt-1") == journal)
        #expect(try f.replay(page).content == expected)
        try await session.close()
    }
}
