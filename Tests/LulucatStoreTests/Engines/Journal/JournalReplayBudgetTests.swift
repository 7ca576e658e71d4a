// The cost of replaying a journal is counted, and bounded where the journal is untrusted (an
// import): a journal of many moves on a page of many strokes is refused before it is replayed,
// by the count of elements its changes would visit, not by a clock.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct JournalReplayBudgetTests {
    /// A journal document whose page is `hostile`'s snapshot and journal.
    static func plant(_ hostile: HostileJournal, root: String) throws -> (DocumentPackage, UUID) {
        let library = Library(root: root)
        let package = try library.createDocument(title: "Moves", engine: .journal)
        let page = try DocumentMetadata.read(package).pages[0].id
        try Data(hostile.snapshot).write(to: URL(fileURLWithPath: package.pagePath(page)))
        try Data(hostile.journal).write(to: URL(fileURLWithPath: package.journalPath(page)))
        return (package, page)
    }

    @Test func theReplayCountsWhatItsChangesVisit() throws {
        let root = NSTemporaryDirectory() + "lnote-replay-budget-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hostile = try HostileJournal(elements: 300, frames: 200)
        #expect(hostile.scanCost == 200 * (2 * 300 + 1))
        let (package, page) = try Self.plant(hostile, root: root)

        let free = try JournalReplay.read(package, page: page, fileSystem: PosixFileSystem())
        #expect(free.frameCount == 200)
        #expect(free.scanned == hostile.scanCost)
        #expect(!free.overBudget)
        #expect(free.content == hostile.content)

        // Exactly enough: replayed whole. One short: refused before any frame is applied.
        let enough = try JournalReplay.read(package, page: page, fileSystem: PosixFileSystem(), scanBudget: hostile.scanCost)
        #expect(!enough.overBudget && enough.frameCount == 200 && enough.content == hostile.content)
        let short = try JournalReplay.read(package, page: page, fileSystem: PosixFileSystem(), scanBudget: hostile.scanCost - 1)
        #expect(short.overBudget)
        #expect(short.frameCount == 0)
        #expect(short.scanned == hostile.scanCost)
    }

    /// The engine an import uses refuses the page with a clear error; without a budget (a session
    /// of one's own library) the same journal replays.
    @Test func anEngineWithABudgetRefusesThePageAndLosesNothing() throws {
        let root = NSTemporaryDirectory() + "lnote-replay-budget-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hostile = try HostileJournal(elements: 100, frames: 50)
        let (package, page) = try Self.plant(hostile, root: root)
        let journalBefore = try Data(contentsOf: URL(fileURLWithPath: package.journalPath(page)))
        let engine = JournalEngine(package: package, fileSystem: PosixFileSystem(), codec: .compact, options: JournalOptions())
        engine.replayScanBudget = 1000
        do {
            _ = try engine.checkPage(page)
            Issue.record("a replay over its budget was accepted")
        } catch {
            #expect("\(error)".contains("visits more than 1000 elements"), "\(error)")
        }
        engine.replayScanBudget = nil
        #expect(try engine.loadPage(page) == hostile.content)
        #expect(try engine.checkPage(page) == PageSummary(hostile.content))
        #expect(try Data(contentsOf: URL(fileURLWithPath: package.journalPath(page))) == journalBefore)
        let findings = DocumentVerifier(replayScanBudget: 1000).verify(package)
        #expect(findings.contains { $0.severity == .error && $0.message.contains("visits more than 1000 elements") })
    }

    /// The import budget holds every journal the engine leaves with its default options: at most
    /// 4,096 frames before it compacts, each a move (the costliest small change) on a page of
    /// 32,000 elements.
    @Test func theImportBudgetCoversWhatTheEngineWrites() {
        let options = JournalOptions()
        let move = PageChange.move([UUID()], to: .index(0))
        #expect(options.compactAfterFrames * move.scanCost(onPageOf: 32_000) <= ImportLimits.maxReplayScan)
    }
}
