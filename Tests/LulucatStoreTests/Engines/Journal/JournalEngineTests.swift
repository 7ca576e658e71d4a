// The journal engine through the session API: appends, replay, preallocation, torn tails,
// corruption kept aside, compaction and its crash points, reopening after a crash.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreMaintenance
import LulucatHandwriting
import LulucatStoreTesting

/// A journal document in a fresh library, opened with autosave off.
struct JournalFixture {
    let tmp = TemporaryFolder()
    let library: Library
    let package: DocumentPackage
    let options: SessionOptions

    init(_ journal: JournalOptions = JournalOptions(), fileSystem: any FileSystem = PosixFileSystem(),
         codec: SampleCodecID = .compact) throws {
        library = Library(root: tmp.path + "/lib", fileSystem: fileSystem)
        package = try library.createDocument(title: "Journal", engine: .journal, codec: codec)
        options = SessionOptions(autosaveDelay: nil, journal: journal)
    }

    func open() async throws -> DocumentSession { try await library.open(package.id, options: options) }

    /// The page replayed from disk without a session.
    func replay(_ page: UUID) throws -> JournalReplay {
        try JournalReplay.read(package, page: page, fileSystem: PosixFileSystem())
    }

    var journalPath: (UUID) -> String { { package.journalPath($0) } }
}

@Suite struct JournalEngineTests {
    @Test func newDocumentsUseTheSnapshotEngineUnlessTold() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let plain = try await library.createDocument(title: "Plain")
        #expect(try DocumentMetadata.read(plain).engine == .snapshot)
        let journal = try await library.createDocument(title: "J", engine: .journal)
        #expect(try DocumentMetadata.read(journal).engine == .journal)
        let session = try await library.open(journal.id)
        #expect(await session.engineKind == .journal)
        try await session.close()
    }

    @Test func aSaveAppendsOneSyncedFrameAndLeavesTheSnapshot() async throws {
        // fixed16: 16 bytes a sample, so frame sizes are known.
        let f = try JournalFixture(JournalOptions(preallocationChunk: 4096), codec: .fixed16)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        let snapshotBefore = readBytes(f.package.pagePath(page))
        try await session.append(sampleStroke(), to: page)
        try await session.save()
        #expect(readBytes(f.package.pagePath(page)) == snapshotBefore)
        let journal = try #require(readBytes(f.package.journalPath(page)))
        #expect(journal.count == 4096)  // preallocated
        let r = try f.replay(page)
        #expect(r.journal == .current)
        #expect(r.frameCount == 1)
        #expect(r.content.elements.count == 1)
        // More saves fill the preallocated region without growing the file.
        for i in 0..<5 { try await session.append(sampleStroke(10, seed: i), to: page); try await session.save() }
        #expect(readBytes(f.package.journalPath(page))?.count == 4096)
        // Until a frame no longer fits: the file grows by whole chunks.
        try await session.append(sampleStroke(400), to: page)
        try await session.save()
        let grown = try #require(readBytes(f.package.journalPath(page)))
        #expect(grown.count > 4096 && grown.count % 4096 == 0)
        #expect(try f.replay(page).frameCount == 7)
        try await session.close()
    }

    @Test func withoutPreallocationTheJournalIsExactlyItsFrames() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 0))
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        try await session.save()
        let r = try f.replay(page)
        // The frames and the end mark after them (format 2).
        #expect(r.fileSize == r.validEnd + JournalFormat.frameHeaderSize)
        #expect(r.frameBytes == r.validEnd - JournalFormat.headerSize)
        await session.abandon()
    }

    /// Random edits of every kind, saved at random points; after a crash (abandon) the replayed
    /// page equals what was in memory at the last save; after close it is all in the snapshot.
    @Test func replayEqualsMemoryAfterRandomEdits() async throws {
        for seed: UInt64 in [1, 2, 3] {
            // Seed 3 codes its frames with the document's compact codec instead of fixed16.
            let f = try JournalFixture(JournalOptions(compactAfterFrames: 7, preallocationChunk: 8192,
                                                      frameCodec: seed == 3 ? nil : .fixed16))
            let session = try await f.open()
            let page = await session.pageIDs()[0]
            var rng = SeededRandom(seed: seed)
            var saved = try await session.content(of: page)
            for step in 0..<60 {
                try await randomEdit(session, page, &rng, step: step)
                if rng.next() % 3 == 0 {
                    try await session.save()
                    saved = try await session.content(of: page)
                }
            }
            try await session.save()
            saved = try await session.content(of: page)
            await session.abandon()
            #expect(try f.replay(page).content == saved)

            let again = try await f.open()
            #expect(try await again.content(of: page) == saved)
            #expect(await again.pageEntries()[0].elementCount == saved.elements.count)
            try await again.close()
            // Closing merged the journal: the snapshot alone is the page, the journal is empty.
            #expect(try SnapshotEngine.readSnapshot(f.package.pagePath(page), page: page, fileSystem: PosixFileSystem()) == saved)
            let r = try f.replay(page)
            // The header and the end mark (format 2).
            #expect(r.frameCount == 0 && r.journal == .current && r.fileSize == JournalFormat.headerSize + JournalFormat.frameHeaderSize)
            #expect(DocumentVerifier().verify(f.package).filter { $0.severity == .error }.isEmpty)
        }
    }

    func randomEdit(_ s: DocumentSession, _ page: UUID, _ rng: inout SeededRandom, step: Int) async throws {
        let content = try await s.content(of: page)
        let strokes = content.strokes
        switch strokes.isEmpty ? 0 : rng.next() % 7 {
        case 0, 1:
            try await s.append(sampleStroke(5 + Int(rng.next() % 40), seed: step), to: page)
        case 2:
            let st = strokes[Int(rng.next() % UInt64(strokes.count))]
            if st.samples.count > 4 { try await s.erase(stroke: st.id, keeping: [0..<2, 3..<st.samples.count], on: page) }
        case 3:
            let ids = strokes.prefix(3).map(\.id)
            try await s.transform(ids, by: .translation(dx: Int32(rng.next() % 50), dy: -3), on: page)
        case 4:
            try await s.move([strokes[0].id], to: rng.next() % 2 == 0 ? .front : .index(0), on: page)
        case 5:
            try await s.delete([strokes[Int(rng.next() % UInt64(strokes.count))].id], from: page)
        default:
            try await s.resizeCanvas(of: page, to: QuantizedSize(width: 6000 + Int32(step), height: 7000))
        }
    }

    /// Builds a journal of single-stroke saves and returns its bytes, the page, and the content
    /// after each acknowledged frame (index 0: before any).
    func journalWithFrames(_ f: JournalFixture, count: Int) async throws -> (UUID, [UInt8], [PageContent], [Int]) {
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        var contents = [try await session.content(of: page)]
        var ends = [JournalFormat.headerSize]
        for i in 0..<count {
            if i % 4 == 3 {
                let first = try await session.content(of: page).elements[0].id
                try await session.transform([first], by: .translation(dx: 5, dy: 5), on: page)
            } else {
                try await session.append(sampleStroke(2 + i, seed: i), to: page)
            }
            try await session.save()
            contents.append(try await session.content(of: page))
            ends.append(try f.replay(page).validEnd)
        }
        await session.abandon()
        let bytes = try #require(readBytes(f.package.journalPath(page)))
        return (page, bytes, contents, ends)
    }

    @Test func aJournalCutAtEveryByteReplaysExactlyTheFramesBeforeTheCut() async throws {
        // Preallocated: cutting short covers a journal grown by plain appends as well.
        do {
            let f = try JournalFixture(JournalOptions(preallocationChunk: 1024))
            let (page, bytes, contents, ends) = try await journalWithFrames(f, count: 7)
            let path = f.package.journalPath(page)
            // Where each frame's last nonzero byte ends: a cut filled with zeros (the preallocated
            // region) completes a frame whose missing bytes were zeros anyway, the very bytes the
            // save wrote, so that frame replays whole.
            let nonzeroEnds = ends.map { end in (JournalFormat.headerSize..<end).last { bytes[$0] != 0 }.map { $0 + 1 } ?? end }
            for cut in JournalFormat.headerSize...ends.last! {
                let cutShort = Array(bytes[0..<cut])
                let zeroFilled = cutShort + [UInt8](repeating: 0, count: bytes.count - cut)
                for (variant, acknowledged) in [(cutShort, ends.lastIndex { $0 <= cut }!),
                                                (zeroFilled, nonzeroEnds.lastIndex { $0 <= cut }!)] {
                    try Data(variant).write(to: URL(fileURLWithPath: path))
                    let r = try f.replay(page)
                    let same = r.content == contents[acknowledged]
                    #expect(same, "cut at \(cut)")
                    #expect(r.frameCount == acknowledged, "cut at \(cut)")
                    // Zeros or the end of the file right after the last valid frame, where a crash
                    // leaves the old end mark or the torn frame's nonzero bytes, are damage (format 2).
                    let after = variant[min(ends[acknowledged], variant.count)...]
                    if after.contains(where: { $0 != 0 }) {
                        #expect(r.journal == .current, "cut at \(cut)")
                    } else {
                        guard case .damaged(let why) = r.journal else { Issue.record("cut at \(cut): \(r.journal)"); continue }
                        #expect(why.contains("end mark"), "cut at \(cut)")
                    }
                }
            }
            // And the session reopens on a torn journal and appends after the valid frames.
            let cut = ends[5] + 7
            try Data(Array(bytes[0..<cut]) + [UInt8](repeating: 0, count: 3000)).write(to: URL(fileURLWithPath: path))
            let session = try await f.open()
            #expect(try await session.content(of: page) == contents[5])
            #expect(await session.engineFindings.contains { $0.message.contains("torn tail") })
            let extra = sampleStroke(9, seed: 99)
            try await session.append(extra, to: page)
            try await session.save()
            await session.abandon()
            var expected = contents[5]
            expected.elements.append(.stroke(extra))
            let r = try f.replay(page)
            #expect(r.content == expected)
            #expect(r.frameCount == 6)
            #expect(r.tailToClear == nil)
        }
    }

    /// A crash may persist the sectors of the last frame's write in any order: every subset of
    /// its 512-byte sectors reaching the disk (the rest still the bytes before the write: the old
    /// end mark, then the preallocated zeros) replays the
    /// frames before it, or all of it, and is never taken for damage.
    @Test func anySubsetOfTheLastFramesSectorsIsATornTail() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 8192), codec: .fixed16)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(30, seed: 1), to: page)
        try await session.save()
        let before = try await session.content(of: page)
        let start = try f.replay(page).validEnd
        // What the disk held before the write: a sector the crash did not persist keeps it (the
        // old end mark where the new frame begins, zeros after).
        let old = try #require(readBytes(f.package.journalPath(page)))
        try await session.append(sampleStroke(150, seed: 2), to: page)  // about 2.4 KB: 5 or 6 sectors
        try await session.save()
        let after = try await session.content(of: page)
        await session.abandon()
        let end = try f.replay(page).validEnd
        let bytes = try #require(readBytes(f.package.journalPath(page)))
        let sectors = Array(stride(from: start / 512 * 512, to: end, by: 512))
        #expect(sectors.count >= 5)
        for mask in 0..<(1 << sectors.count) {
            // The file before the write, with the persisted sectors of the write (the frame and
            // its end mark). Nothing written after the sync (format 3's ack mark) is there.
            var crashed = old
            for (k, sector) in sectors.enumerated() where mask & (1 << k) != 0 {
                for i in max(sector, start)..<min(sector + 512, end + JournalFormat.frameHeaderSize) { crashed[i] = bytes[i] }
            }
            try Data(crashed).write(to: URL(fileURLWithPath: f.package.journalPath(page)))
            let r = try f.replay(page)
            let whole = mask == (1 << sectors.count) - 1
            let same = r.content == (whole ? after : before)
            #expect(same, "sectors persisted: \(String(mask, radix: 2))")
            #expect(r.journal == .current, "sectors persisted: \(String(mask, radix: 2))")
        }
    }

    @Test func garbageAfterTheLastFrameIsATornTailNotAnError() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 0))
        let (page, bytes, contents, _) = try await journalWithFrames(f, count: 3)
        var rng = SeededRandom(seed: 7)
        let garbage = (0..<700).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        try Data(bytes + garbage).write(to: URL(fileURLWithPath: f.package.journalPath(page)))
        let r = try f.replay(page)
        #expect(r.content == contents[3])
        #expect(r.journal == .current)
        #expect(!DocumentVerifier().verify(f.package).contains { $0.severity == .error && $0.path.hasSuffix(".journal") })
    }

    @Test func damageInTheMiddleIsReportedAndKeptAside() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 2048))
        let (page, bytes, contents, ends) = try await journalWithFrames(f, count: 5)
        var bad = bytes
        bad[ends[2] + 20] ^= 0x40  // inside frame 2's payload
        let path = f.package.journalPath(page)
        try Data(bad).write(to: URL(fileURLWithPath: path))

        // Frame 2 (an append) is lost; frames 3 (a transform) and 4 (an append) check and are kept.
        let lostID = contents[3].elements.last!.id
        var salvaged = contents[5]
        salvaged.elements.removeAll { $0.id == lostID }
        let r = try f.replay(page)
        #expect(r.content == salvaged)
        guard case .damaged = r.journal else { Issue.record("expected damage, got \(r.journal)"); return }
        let findings = DocumentVerifier().verify(f.package)
        #expect(findings.contains { $0.severity == .error && $0.path == path && $0.message.contains("1 save lost") && $0.message.contains("2 valid frames after the damage are kept") })
        #expect(readBytes(path) == bad)  // verify changes nothing

        // Opening is fine; the first write keeps the damaged journal aside before anything else.
        let session = try await f.open()
        #expect(try await session.content(of: page) == salvaged)
        // The loss is in the open report (found when the page was loaded), not only in engineFindings.
        #expect(await session.openReport.contains { $0.severity == .error && $0.path == path && $0.message.contains("1 save lost") })
        let extra = sampleStroke(6, seed: 50)
        try await session.append(extra, to: page)
        try await session.save()
        #expect(readBytes(path + ".corrupt-1") == bad)
        #expect(await session.engineFindings.contains { $0.severity == .repaired })
        try await session.close()
        var expected = salvaged
        expected.elements.append(.stroke(extra))
        let reopened = try await f.open()
        #expect(try await reopened.content(of: page) == expected)
        try await reopened.close()
        let after = DocumentVerifier().verify(f.package)
        #expect(!after.contains { $0.severity == .error })
        #expect(after.contains { $0.severity == .warning && $0.path.hasSuffix(".corrupt-1") })
    }

    /// The issue's case: 30 strokes, one save each, and 16 bytes flipped in the written part of the
    /// journal. Every frame the damage did not touch is kept, wherever the damage falls; the loss is
    /// in the open report; and the page reads the same after the damaged journal is kept aside.
    @Test func sixteenFlippedBytesCostOnlyTheFramesTheyTouch() async throws {
        var random = SeededRandom(seed: 0x1516)
        for trial in 0..<4 {
            let f = try JournalFixture(JournalOptions(preallocationChunk: 4096))
            let session = try await f.open()
            let page = await session.pageIDs()[0]
            let strokes = (0..<30).map { sampleStroke(40, seed: 100 * trial + $0) }
            for s in strokes {
                try await session.append(s, to: page)
                try await session.save()
            }
            await session.abandon()
            let path = f.package.journalPath(page)
            var bytes = try #require(readBytes(path))
            let end = try f.replay(page).validEnd
            let frameSize = (end - JournalFormat.headerSize) / 30
            // Not the last frame: damage there is indistinguishable from a write a crash cut short
            // (a torn tail, reported as info), since no valid frame follows it.
            let at = JournalFormat.headerSize + Int(random.next() % UInt64(end - JournalFormat.headerSize - frameSize - 16))
            for i in at..<at + 16 { bytes[i] ^= UInt8(1 + random.next() % 255) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            // Which frames the 16 bytes touched, from the undamaged frame boundaries.
            let touched = Set((at..<at + 16).map { ($0 - JournalFormat.headerSize) / frameSize })
            let survivors = strokes.enumerated().filter { !touched.contains($0.offset) }.map { Element.stroke($0.element) }

            let reopened = try await f.open()
            let content = try await reopened.content(of: page)
            #expect(content.elements == survivors, "trial \(trial): \(content.elements.count) of \(survivors.count) kept")
            let report = await reopened.openReport
            #expect(report.contains { $0.severity == .error && $0.path == path && $0.message.contains("\(touched.count) save\(touched.count == 1 ? "" : "s") lost") },
                    "trial \(trial): \(report)")
            try await reopened.close()
            #expect(readBytes(path + ".corrupt-1") == bytes)  // the original bytes kept aside
            let again = try await f.open()
            #expect(try await again.content(of: page).elements == survivors)
            try await again.close()
        }
    }

    @Test func aBadHeaderIsKeptAsideToo() async throws {
        let f = try JournalFixture()
        let (page, bytes, contents, _) = try await journalWithFrames(f, count: 2)
        var bad = bytes
        bad[9] ^= 1  // the generation
        let path = f.package.journalPath(page)
        try Data(bad).write(to: URL(fileURLWithPath: path))
        #expect(try f.replay(page).content == contents[0])
        #expect(DocumentVerifier().verify(f.package).contains { $0.severity == .error && $0.path == path })
        let session = try await f.open()
        #expect(try await session.compact() == [page])
        #expect(readBytes(path + ".corrupt-1") == bad)
        try await session.close()
    }

    /// Compaction's steps done by hand, stopping after each: no frame is applied twice or lost.
    @Test func compactionCrashPoints() async throws {
        let f = try JournalFixture()
        let (page, bytes, contents, _) = try await journalWithFrames(f, count: 6)
        let final = contents.last!
        let snapshotPath = f.package.pagePath(page), journalPath = f.package.journalPath(page)
        let oldSnapshot = try #require(readBytes(snapshotPath))
        let merged = try PageFile.encode(final, codec: .compact)

        // 1. Crash while writing the new snapshot: only a temporary file exists.
        try Data(merged.prefix(100)).write(to: URL(fileURLWithPath: f.package.pagesPath + "/" + temporaryFilePrefix + "x-" + page.uuidString + ".content"))
        #expect(try f.replay(page).content == final)

        // 2. Crash after the new snapshot, before the new journal: the old journal is stale.
        try Data(merged).write(to: URL(fileURLWithPath: snapshotPath))
        let stale = try f.replay(page)
        #expect(stale.content == final)
        #expect(stale.journal == .stale)
        #expect(stale.frameCount == 0)
        #expect(!DocumentVerifier().verify(f.package).contains { $0.severity == .error && $0.path.hasSuffix(".journal") })
        // The session goes on from there: its first save starts the next generation.
        let session = try await f.open()
        #expect(try await session.content(of: page) == final)
        let extra = sampleStroke(4, seed: 77)
        try await session.append(extra, to: page)
        try await session.save()
        await session.abandon()
        let next = try f.replay(page)
        var expected = final
        expected.elements.append(.stroke(extra))
        #expect(next.content == expected)
        #expect(next.header!.generation == stale.header!.generation + 1)

        // 3. Put the old state back and let compaction run whole: the same page.
        try Data(oldSnapshot).write(to: URL(fileURLWithPath: snapshotPath))
        try Data(bytes).write(to: URL(fileURLWithPath: journalPath))
        let s2 = try await f.open()
        #expect(try await s2.compact() == [page])
        try await s2.close()
        #expect(try SnapshotEngine.readSnapshot(f.package.pagePath(page), page: page, fileSystem: PosixFileSystem()) == final)
        #expect(try f.replay(page).frameCount == 0)
    }

    @Test func theThresholdCompactsWhileEditing() async throws {
        let f = try JournalFixture(JournalOptions(compactAfterFrames: 5, preallocationChunk: 4096))
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        for i in 0..<12 {
            try await session.append(sampleStroke(8, seed: i), to: page)
            try await session.save()
        }
        let expected = try await session.content(of: page)
        await session.abandon()
        let r = try f.replay(page)
        #expect(r.frameCount == 2)
        #expect(r.header!.generation == 3)  // two compactions since the first journal
        #expect(try SnapshotEngine.readSnapshot(f.package.pagePath(page), page: page, fileSystem: PosixFileSystem()).elements.count == 10)
        #expect(r.content == expected)
    }

    @Test func aFailedAppendIsRetriedWithoutDuplicates() async throws {
        let fs = InstrumentedFileSystem()
        let f = try JournalFixture(JournalOptions(preallocationChunk: 4096), fileSystem: fs)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        try await session.save()
        fs.failPathContaining = ".journal"
        try await session.append(sampleStroke(20, seed: 1), to: page)
        await #expect(throws: StoreError.self) { try await session.save() }
        #expect(await session.dirtyPageIDs == [page])
        fs.failPathContaining = nil
        try await session.save()
        let expected = try await session.content(of: page)
        await session.abandon()
        let r = try f.replay(page)
        #expect(r.content == expected)
        #expect(r.frameCount == 2)
    }

    @Test func duplicateCopiesJournalsAndRemovePageRemovesThem() async throws {
        let f = try JournalFixture()
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        let second = try await session.addPage()
        try await session.append(sampleStroke(7, seed: 2), to: second)
        try await session.flush()
        let expected = try await session.content(of: page)
        // Duplicate while the journal holds the frames (duplicate needs the lock: abandon first).
        await session.abandon()
        let copy = try await f.library.duplicate(f.package.id)
        #expect(readBytes(copy.journalPath(page)) == readBytes(f.package.journalPath(page)))
        let copied = try await f.library.open(copy.id, options: f.options)
        #expect(try await copied.content(of: page) == expected)
        try await copied.removePage(second)
        #expect(readBytes(copy.journalPath(second)) == nil)
        #expect(readBytes(copy.pagePath(second)) == nil)
        try await copied.close()
    }

    @Test func uncleanShutdownRepairUsesTheJournal() async throws {
        let f = try JournalFixture()
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        for i in 0..<3 { try await session.append(sampleStroke(5, seed: i), to: page) }
        try await session.save()  // pages durable; document.json still says 0 elements
        await session.abandon()
        let again = try await f.open()
        #expect(await again.pageEntries()[0].elementCount == 3)
        #expect(await again.openReport.contains { $0.severity == .repaired })
        try await again.close()
        #expect(!DocumentVerifier().verify(f.package).contains { $0.severity == .error })
    }
}

@Suite struct JournalRepairTests {
    @Test func repairMovesAPageJournalWithItsSnapshot() async throws {
        let f = try JournalFixture()
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: page)
        try await session.save()
        try await session.close()
        let journal = try #require(readBytes(f.package.journalPath(page)))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: f.package.pagePath(page)))
        let findings = try DocumentRepair().repair(f.package)
        // The page keeps its place (nothing in the damaged snapshot checks, so it is empty); the
        // damaged snapshot is in recovered/, the journal kept aside beside the page, not dropped.
        #expect(findings.contains { $0.severity == .repaired && $0.path == f.package.pagePath(page) && $0.message.contains("0 elements salvaged") })
        #expect(readBytes(f.package.recoveredPath + "/" + page.uuidString + ".content") == [1, 2, 3])
        #expect(readBytes(f.package.journalPath(page) + ".corrupt-1") == journal)
        #expect(try DocumentMetadata.read(f.package).pages.map(\.id) == [page])
        #expect(try f.replay(page).content.elements.isEmpty)
        #expect(!DocumentVerifier().verify(f.package).contains { $0.severity == .error })
    }

    @Test func compactOnASnapshotDocumentDoesNothing() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Plain")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil))
        try await session.append(sampleStroke(), to: session.pageIDs()[0])
        #expect(try await session.compact() == [])
        #expect(await session.dirtyPageIDs.isEmpty)
        try await session.close()
    }
}

@Suite struct JournalPageCloseTests {
    @Test func aPageThatClosesIsCompacted() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Pages", engine: .journal)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, maxLoadedPages: 1))
        let first = await session.pageIDs()[0]
        try await session.append(sampleStroke(), to: first)
        try await session.save()
        #expect(try JournalFile.summary(package, page: first).frames == 1)
        let expected = try await session.content(of: first)
        // Loading a second page lets the first (clean) one go: it is merged into its snapshot.
        let second = try await session.addPage()
        _ = try await session.content(of: second)
        #expect(await session.loadedPageCount == 1)
        #expect(try JournalFile.summary(package, page: first).frames == 0)
        #expect(try SnapshotEngine.readSnapshot(package.pagePath(first), page: first, fileSystem: PosixFileSystem()) == expected)
        // And it loads again, and takes more frames.
        try await session.append(sampleStroke(9, seed: 4), to: first)
        try await session.save()
        #expect(try JournalFile.summary(package, page: first).frames == 1)
        await session.abandon()
        #expect(try StoredPage.read(package, page: first).elements.count == 2)
    }
}

/// Passes every call to the real file system, except that renames onto a `.journal` fail while
/// armed (the new journal of a compaction cannot be put in place).
final class JournalRenameFailing: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var armed = false
    init() { super.init(PosixFileSystem()) }
    func arm(_ on: Bool) { lock.withLock { armed = on } }
    override func rename(_ from: String, to: String) throws(FileError) {
        if lock.withLock({ armed }) && to.hasSuffix(".journal") { throw FileError("rename", path: to, errno: ENOSPC) }
        try base.rename(from, to: to)
    }
}

@Suite struct JournalCompactionFailureTests {
    /// The snapshot of a compaction is written, its new journal is not: the save that triggered
    /// it still succeeds, and the saves after it are not lost in the now stale journal.
    @Test func aCompactionThatStopsAfterItsSnapshotLosesNothing() async throws {
        let fs = JournalRenameFailing()
        let f = try JournalFixture(JournalOptions(compactAfterFrames: 3, preallocationChunk: 4096), fileSystem: fs)
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        for i in 0..<2 {
            try await session.append(sampleStroke(6, seed: i), to: page)
            try await session.save()
        }
        fs.arm(true)
        try await session.append(sampleStroke(6, seed: 2), to: page)
        try await session.save()  // durable; its compaction fails after the snapshot
        #expect(await session.engineFindings.contains { $0.severity == .warning && $0.message.contains("compaction failed") })
        #expect(try f.replay(page).journal == .stale)
        let afterThird = try await session.content(of: page)
        // While no new journal can be put in place, a save cannot be acknowledged: appending to
        // the stale journal would be acknowledged and then ignored by replay.
        try await session.append(sampleStroke(6, seed: 3), to: page)
        await #expect(throws: StoreError.self) { try await session.save() }
        #expect(try f.replay(page).content == afterThird)
        fs.arm(false)
        try await session.save()
        let expected = try await session.content(of: page)
        await session.abandon()
        let r = try f.replay(page)
        #expect(r.content == expected)
        #expect(r.content.elements.count == 4)
        #expect(r.journal == .current && r.frameCount == 1)
    }
}

@Suite struct JournalFrameApplyTests {
    /// An intact frame that does not apply (it appends a stroke the page already has) stops replay
    /// and is damage, not a torn tail.
    @Test func anIntactFrameThatDoesNotApplyIsDamage() async throws {
        let f = try JournalFixture(JournalOptions(preallocationChunk: 0))
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        let stroke = sampleStroke(8)
        try await session.append(stroke, to: page)
        try await session.save()
        let one = try await session.content(of: page)
        await session.abandon()
        let path = f.package.journalPath(page)
        // Without its end mark: the frames below go where the next frame would.
        var bytes = Array(try #require(readBytes(path)).dropLast(JournalFormat.frameHeaderSize))
        let generation = try #require(try f.replay(page).header?.generation)
        for change: PageChange in [.append([.stroke(stroke)]), .delete([UUID()]), .move([UUID()], to: .front)] {
            let again = try JournalFile.frame(for: [change], codec: .compact, generation: generation, sequence: 1)
            try Data(bytes + again).write(to: URL(fileURLWithPath: path))
            let r = try f.replay(page)
            #expect(r.content == one)
            #expect(r.frameCount == 1)
            guard case .damaged(let why) = r.journal else { Issue.record("expected damage for \(change)"); continue }
            #expect(why.contains("does not apply"))
        }
        // A group frame applies all or nothing.
        let second = sampleStroke(5, seed: 9)
        let group = try JournalFile.frame(for: [.append([.stroke(second)]), .delete([UUID()])], codec: .compact, generation: generation, sequence: 1)
        bytes += group
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try f.replay(page)
        #expect(r.content == one)
        #expect(r.frameCount == 1)
    }
}

@Suite struct JournalFrameCodecTests {
    /// Frames are coded fixed16 by default (append latency); the snapshot keeps the document's
    /// compact codec (size). The header says which codec its frames use.
    @Test func framesFixed16SnapshotsCompact() async throws {
        let f = try JournalFixture()
        let session = try await f.open()
        let page = await session.pageIDs()[0]
        try await session.append(sampleStroke(40), to: page)
        try await session.save()
        #expect(try f.replay(page).header?.codec == .fixed16)
        let expected = try await session.content(of: page)
        try await session.close()
        let snapshot = try #require(readBytes(f.package.pagePath(page)))
        #expect(try snapshot.withUnsafeBytes { try PageFile.readHeader($0) }.codec == .compact)
        #expect(try SnapshotEngine.readSnapshot(f.package.pagePath(page), page: page, fileSystem: PosixFileSystem()) == expected)
        // A session set to code frames otherwise goes on in the codec the current journal's
        // header names (one journal, one codec); its next generation uses the new setting.
        let other = try await f.library.open(f.package.id, options: SessionOptions(autosaveDelay: nil, journal: JournalOptions(frameCodec: nil)))
        try await other.append(sampleStroke(7, seed: 5), to: page)
        try await other.save()
        await other.abandon()
        let r = try f.replay(page)
        #expect(r.header?.codec == .fixed16 && r.frameCount == 1)
        let third = try await f.library.open(f.package.id, options: SessionOptions(autosaveDelay: nil, journal: JournalOptions(frameCodec: nil)))
        #expect(try await third.compact() == [page])
        try await third.append(sampleStroke(9, seed: 6), to: page)
        try await third.save()
        await third.abandon()
        let next = try f.replay(page)
        #expect(next.header?.codec == .compact && next.frameCount == 1)
        let reopened = try await f.open()
        #expect(try await reopened.content(of: page).elements.count == 3)
        try await reopened.close()
    }
}
