// lnote-dev bench migrate: how long a verified migration of a realistic document takes each way
// (write the new form, read it back and hash every page, switch, remove the old form).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreMaintenance
import LulucatHandwriting

enum MigrateBench {
    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["pages", "strokes", "dir"], flags: ["json"])
        let pages = try args.int("pages") ?? 20
        let strokes = try args.int("strokes") ?? 1000
        guard pages > 0, strokes > 0 else { throw UsageError("--pages and --strokes must be positive") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-migrate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        let library = Library(root: base + "/library")
        let package = try await library.createDocument(title: "Migration bench")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, maxLoadedPages: 2, thumbnails: nil))
        var ids = await session.pageIDs()
        for _ in 1..<pages { ids.append(try await session.addPage()) }
        var samples = 0
        for (i, id) in ids.enumerated() {
            let content = HandwritingGenerator(seed: 2026 + UInt64(i)).page(strokes: strokes, canvas: .letter)
            samples += content.sampleCount
            try await session.append(content.elements, to: id)
            try await session.save()
        }
        try await session.close()
        say("Built a \(pages)-page snapshot document, \(strokes) strokes a page, \(samples) samples.")

        func folderBytes(_ path: String) -> Int {
            let e = FileManager.default.enumerator(atPath: path)
            var total = 0
            while let name = e?.nextObject() as? String {
                total += ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? Int) ?? 0
            }
            return total
        }
        let snapshotBytes = folderBytes(package.pagesPath)
        let toSQLite = try EngineMigration().migrate(package, to: .sqlite)
        let sqliteBytes = (try? FileManager.default.attributesOfItem(atPath: package.contentDatabasePath))?[.size] as? Int ?? 0
        let toSnapshot = try EngineMigration().migrate(package, to: .snapshot)
        let result: [String: Any] = [
            "pages": pages, "strokes_per_page": strokes, "samples": samples,
            "snapshot_to_sqlite_s": r(toSQLite.seconds), "sqlite_to_snapshot_s": r(toSnapshot.seconds),
            "snapshot_pages_bytes": snapshotBytes, "sqlite_file_bytes": sqliteBytes,
            "elements": toSQLite.elements,
        ]
        if json { printJSON(result) } else {
            print("""
              snapshot -> sqlite      \(r(toSQLite.seconds)) s   (\(r(toSQLite.seconds / Double(pages) * 1000, 1)) ms a page, verified)
              sqlite -> snapshot      \(r(toSnapshot.seconds)) s   (\(r(toSnapshot.seconds / Double(pages) * 1000, 1)) ms a page, verified)
              snapshot pages on disk  \(snapshotBytes) bytes; content.sqlite \(sqliteBytes) bytes
            """)
        }
    }
}
