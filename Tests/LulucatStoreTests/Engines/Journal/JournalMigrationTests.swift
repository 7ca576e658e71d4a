// Migration to and from the journal engine: frames only in a journal are carried over, the
// journals go with the old form, and a crash after any step opens with all the data.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite

/// `richDocument` as a journal document whose last page holds five strokes only in its journal
/// (the session was killed after saving them); returns the expected hashes.
func journalDocumentWithFrames(_ library: Library) async throws -> (DocumentPackage, [UUID: String], UUID, UUID) {
    let (package, hashes, asset) = try await richDocument(library, engine: .journal)
    let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
    let page = await session.pageIDs()[2]
    for i in 0..<5 {
        try await session.append(makeStroke(300 + i, samples: 80), to: page)
        try await session.save()
    }
    var expected = hashes
    expected[page] = try await session.content(of: page).contentHash()
    await session.abandon()
    return (package, expected, asset, page)
}

func journalFiles(_ package: DocumentPackage) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: package.pagesPath)) ?? []).filter { $0.hasSuffix(".journal") }.count
}

@Suite struct JournalMigrationTests {
    init() { Library.enableSQLiteEngine() }
    @Test(arguments: [EngineKind.snapshot, .sqlite])
    func framesOnlyInTheJournalAreMigrated(to target: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, expected, asset, page) = try await journalDocumentWithFrames(library)
        #expect(try JournalFile.summary(package, page: page).frames == 5)
        let report = try EngineMigration().migrate(package, to: target)
        #expect(report.migrated && report.from == .journal && report.to == target)
        #expect(journalFiles(package) == 0)
        _ = try await expectContent(library, package, expected, engine: target)
        #expect(FileManager.default.fileExists(atPath: package.assetPath(asset, ext: "jpg")))
        #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error })

        // And back to the journal engine, where editing goes on.
        try EngineMigration().migrate(package, to: .journal)
        _ = try await expectContent(library, package, expected, engine: .journal)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        try await session.append(makeStroke(999), to: page)
        try await session.save()
        #expect(try JournalFile.summary(package, page: page).frames == 1)
        try await session.close()
    }

    /// A crash right after each step of journal -> snapshot: the document opens on the engine
    /// document.json names with every page whole.
    @Test func aCrashAfterAnyStepFromTheJournalLosesNothing() async throws {
        for step in MigrationStep.allCases {
            let tmp = TemporaryFolder()
            let library = Library(root: tmp.path)
            let (package, expected, _, _) = try await journalDocumentWithFrames(library)
            var migration = EngineMigration()
            migration.stopAfter = step
            #expect(throws: EngineMigration.Stopped(step: step)) { try migration.migrateStoppable(package, to: .snapshot) }
            let switched = MigrationStep.allCases.firstIndex(of: step)! >= MigrationStep.allCases.firstIndex(of: .switched)!
            let engine: EngineKind = switched ? .snapshot : .journal
            #expect(!DocumentVerifier().verify(package).contains { $0.severity == .error }, "step \(step.rawValue)")
            _ = try await expectContent(library, package, expected, engine: engine)
            if engine == .snapshot { #expect(journalFiles(package) == 0, "step \(step.rawValue)") }
            try EngineMigration().migrate(package, to: .snapshot)
            _ = try await expectContent(library, package, expected, engine: .snapshot)
        }
    }
}
