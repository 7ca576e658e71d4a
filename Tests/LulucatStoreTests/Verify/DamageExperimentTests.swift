// Random damage on every engine's content files (a flipped run of 1-64 bytes, a zeroed 4 KiB block,
// a truncation), then what a user sees: verify, opening, the page. Counts silent corruption (an
// element read back that was never written), losses that nothing reported, and elements kept.
// Bounded and seeded; the figures are printed.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

@Suite struct DamageExperimentTests {
    init() { Library.enableSQLiteEngine() }
    enum Damage: CaseIterable { case flippedRun, zeroedBlock, truncation }

    struct Tally {
        var runs = 0, written = 0, recovered = 0
        var silentCorruption = 0, unreportedLoss = 0, lossRuns = 0
        var unreported: [String] = []
    }

    /// One document of `engine` with one page of 12 strokes, each saved on its own.
    private func document(_ library: Library, _ engine: EngineKind, seed: Int) async throws -> (DocumentPackage, UUID, [Element]) {
        let package = try await library.createDocument(title: "Damage \(seed)", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        for i in 0..<12 {
            try await session.append(sampleStroke(60 + i, seed: seed * 100 + i), to: page)
            try await session.save()
        }
        // Journal documents keep the strokes in the journal: leave it there (no compaction at close).
        if engine == .journal { await session.abandon() } else { try await session.close() }
        let elements = try DocumentSession.makeEngine(PackageReader.readDocument(package, fileSystem: PosixFileSystem()),
                                                      package: package, fileSystem: PosixFileSystem()).loadPage(page).elements
        return (package, page, elements)
    }

    private func contentFiles(_ package: DocumentPackage, _ engine: EngineKind, _ page: UUID) -> [String] {
        switch engine {
        case .snapshot: return [package.pagePath(page)]
        case .journal: return [package.journalPath(page)]
        case .sqlite: return [package.contentDatabasePath]
        }
    }

    private func damage(_ path: String, _ kind: Damage, _ random: inout SeededRandom) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 8 else { return }
        switch kind {
        case .flippedRun:
            let length = 1 + Int(random.next() % 64)
            let start = Int(random.next() % UInt64(bytes.count))
            for i in start..<min(bytes.count, start + length) { bytes[i] ^= UInt8(1 + random.next() % 255) }
        case .zeroedBlock:
            let blocks = max(1, (bytes.count + 4095) / 4096)
            let start = Int(random.next() % UInt64(blocks)) * 4096
            for i in start..<min(bytes.count, start + 4096) { bytes[i] = 0 }
        case .truncation:
            bytes.removeLast(1 + Int(random.next() % UInt64(bytes.count - 1)))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Damages one content file and reads the document back as an app would.
    private func run(_ engine: EngineKind, _ kind: Damage, seed: Int, random: inout SeededRandom, into tally: inout Tally) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, page, written) = try await document(library, engine, seed: seed)
        let files = contentFiles(package, engine, page)
        try damage(files[Int(random.next() % UInt64(files.count))], kind, &random)

        let verifyErrors = DocumentVerifier().verify(package).filter { $0.severity == .error }
        var loaded: [Element] = []
        var reported = !verifyErrors.isEmpty
        do {
            let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            do {
                loaded = try await session.content(of: page).elements
                if await session.openReport.contains(where: { $0.severity == .error }) { reported = true }
            } catch { reported = true }
            await session.abandon()
        } catch { reported = true }

        let original = Set(written)
        let kept = loaded.filter { original.contains($0) }.count
        tally.runs += 1
        tally.written += written.count
        tally.recovered += kept
        if loaded.contains(where: { !original.contains($0) }) { tally.silentCorruption += 1 }
        if kept < written.count {
            tally.lossRuns += 1
            if !reported {
                tally.unreportedLoss += 1
                tally.unreported.append("\(engine.rawValue) \(kind) seed \(seed): \(kept) of \(written.count) kept")
            }
        }
    }

    @Test func randomDamageIsNeverSilentAndEveryLossIsReported() async throws {
        var random = SeededRandom(seed: 0xDA3A6E)
        var lines: [String] = []
        var total = Tally()
        var unreported: [String] = []
        for engine in [EngineKind.snapshot, .journal, .sqlite] {
            var tally = Tally()
            for kind in Damage.allCases {
                for i in 0..<6 {
                    try await run(engine, kind, seed: i, random: &random, into: &tally)
                }
            }
            lines.append("\(engine.rawValue): \(tally.runs) runs, \(tally.recovered)/\(tally.written) elements kept, \(tally.lossRuns) runs lost some, \(tally.unreportedLoss) of them unreported, \(tally.silentCorruption) silent corruption")
            total.runs += tally.runs; total.written += tally.written; total.recovered += tally.recovered
            unreported += tally.unreported
            total.silentCorruption += tally.silentCorruption; total.unreportedLoss += tally.unreportedLoss; total.lossRuns += tally.lossRuns
        }
        print("damage experiments:\n  " + lines.joined(separator: "\n  "))
        if !unreported.isEmpty { print("  unreported: " + unreported.joined(separator: "; ")) }
        #expect(total.silentCorruption == 0, "\(lines)")
        #expect(unreported.filter { !$0.hasPrefix("journal") }.isEmpty, "\(unreported)")
        // A journal's end mark (format 2) makes zeros or a cut right after a valid frame, and damage
        // followed by a later save's end mark, reported errors; its ack marks and allocation claim
        // (format 3) do the same for the last frame cut, zeroed from inside it on, or changed
        // (docs/journal-format.md, Allocation claim and ack marks).
        #expect(unreported.filter { $0.hasPrefix("journal") }.isEmpty, "\(unreported)")
        // A damaged snapshot page keeps the elements whose records the damage did not touch (a
        // truncation costs the records after the cut, a zeroed block all of a small page's).
        #expect(total.recovered > total.written / 2, "\(lines)")
    }
}
