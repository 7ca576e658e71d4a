// Schema version 4 (docs/sqlite-engine.md §3): strokes are found by id through `strokes_by_id`, so a
// save touches only the rows it names; a move keeps its ZPosition and is resolved against the rows
// (no stored page read); a version-3 file (written without the index) is read as it is by a
// reader and migrated by a writer.

import Foundation
import LulucatHandwriting
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreSQLite

@Suite struct SQLiteStrokeIndexTests {
    init() { Library.enableSQLiteEngine() }

    /// A page of `n` strokes, then every row's stroke_id made unreadable (1 byte instead of 16) but
    /// those of `keep`: a save that read the page's ids (as schema 3 did) would fail on them.
    private func pageWithUnreadableIDs(_ store: SQLiteContentStore, page: UUID, strokes n: Int, keep: [Int]) throws -> [Stroke] {
        let strokes = (0..<n).map { makeStroke($0, samples: 3) }
        try store.replacePage(page, with: PageContent(elements: strokes.map { .stroke($0) }))
        let kept = keep.map { "x'" + strokes[$0].id.sqliteBytes.map { String(format: "%02x", $0) }.joined() + "'" }.joined(separator: ",")
        try store.connection.execute("UPDATE strokes SET stroke_id = x'00' WHERE stroke_id NOT IN (\(kept))")
        return strokes
    }

    /// An append, an erase, a transform and moves of one stroke read no other row's id: every
    /// other row's id is unreadable, and each save still succeeds, touching only its own rows.
    @Test func aSaveTouchesOnlyTheRowsItNames() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        let strokes = try pageWithUnreadableIDs(store, page: page, strokes: 200, keep: [57, 120])
        let before = try store.connection.scalarInt("SELECT total_changes()")

        let added = makeStroke(1_000, samples: 4)
        try store.applyChanges(to: page, [.append([.stroke(added)])])
        #expect(try store.connection.scalarInt("SELECT total_changes()") == before + 1)

        // Erase: stroke 57 split into two pieces between its neighbours.
        let pieces = [makeStroke(2_000, samples: 2), makeStroke(2_001, samples: 2)]
        var mark = try store.connection.scalarInt("SELECT total_changes()")
        try store.applyChanges(to: page, [.replace(strokes[57].id, with: pieces.map { .stroke($0) })])
        #expect(try store.connection.scalarInt("SELECT total_changes()") == mark + 3)
        // Moves of one stroke: to the back, to index 100, to the front; each writes its row twice
        // (parked, then placed).
        for position in [ZPosition.back, .index(100), .front] {
            mark = try store.connection.scalarInt("SELECT total_changes()")
            try store.applyChanges(to: page, [.moveTo([strokes[120].id], position)])
            #expect(try store.connection.scalarInt("SELECT total_changes()") == mark + 2)
        }
        // A new id is still checked against the page: the kept strokes and the pieces.
        #expect(throws: SQLiteEngineError.duplicateElement(file: dir.database, page: page, element: pieces[1].id)) {
            try store.applyChanges(to: page, [.append([.stroke(pieces[1])])])
        }
        // The lookup goes through strokes_by_id (a plan that walked the page's rows would read the
        // unreadable ids without failing: SQL compares them).
        do {
            let plan = try store.connection.prepare("EXPLAIN QUERY PLAN " + SQLiteContentStore.strokeByIDQuery)
            var details: [String] = []
            while try plan.step() { details.append(plan.string(at: 3) ?? "") }
            #expect(details == ["SEARCH strokes USING INDEX strokes_by_id (page=? AND <expr>=?)"])
        }
        let z = { (id: UUID) throws -> Int64 in
            let s = try store.connection.prepare("SELECT z FROM strokes WHERE stroke_id = ?1")
            try s.bind(id.sqliteBytes, at: 1)
            _ = try s.step()
            return s.int64(at: 0)
        }
        #expect(try z(strokes[120].id) > z(added.id))  // on top, above the appended stroke
        #expect(try z(pieces[0].id) < z(pieces[1].id))
        try store.close()
    }

    /// `moveTo` means what `PageChange.move` means on the page model: random moves (front, back, an
    /// index, several elements at once, images among the strokes), with saves of several changes,
    /// down to the renumbering of a crowded gap, read back equal to the model.
    @Test(arguments: [1, 2, 3])
    func movesByPositionMatchThePageModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        var model = PageContent(elements: (0..<30).map { i in i % 7 == 3 ? .image(makeImage(i)) : .stroke(makeStroke(i, samples: 2)) })
        try store.replacePage(page, with: model)
        for round in 0..<60 {
            var changes: [PageChange] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let count = model.elements.count
                let k = Int.random(in: 1...3, using: &rng)
                let ids = Array(model.elements.map(\.id).shuffled(using: &rng).prefix(k))
                let position: ZPosition
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: position = .front
                case 1: position = .back
                // Index 1 again and again: the gap there runs out and the page is renumbered.
                case 2: position = .index(round % 2 == 0 ? 1 : count - k)
                default: position = .index(Int.random(in: 0...(count - k), using: &rng))
                }
                let change = PageChange.move(ids, to: position)
                try model.apply(change)
                changes.append(change)
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    let stroke = PageChange.append([.stroke(makeStroke(10_000 + round, samples: 2))])
                    try model.apply(stroke)
                    changes.append(stroke)
                }
            }
            try store.applyChanges(to: page, SQLiteChangeTranslation.translate(changes))
            #expect(try store.loadPage(page).elements.map(\.id) == model.elements.map(\.id), "round \(round)")
        }
        #expect(try store.loadPage(page) == model)
        #expect(try store.integrityProblems() == [])
        try store.close()
    }

    /// A version-3 file: this build's file with `strokes_by_id` dropped and `user_version` 3, the
    /// tables version 3 wrote. A reader reads it as it is, without a byte changed; a writer
    /// migrates it to version 4 (the index built), and it reads the same.
    @Test func aVersionThreeDatabaseIsReadAsItIsAndMigratedByAWriter() throws {
        let dir = SQLiteTestDirectory()
        let page = UUID()
        let content = samplePage()
        do {
            let store = try SQLiteContentStore(packageDirectory: dir.url)
            try store.replacePage(page, with: content)
            try store.connection.execute("DROP INDEX strokes_by_id; PRAGMA user_version = 3")
            try store.close()
        }
        let bytes = try #require(readBytes(dir.database))

        let reader = try SQLiteContentStore(path: dir.database, mode: .openExisting, readOnly: true)
        #expect(!reader.keepsFileUnchanged)  // read in the file, not in an in-memory copy
        #expect(try reader.loadPage(page) == content)
        #expect(try reader.connection.userVersion() == 3)
        reader.closeWithoutCheckpoint()
        #expect(readBytes(dir.database) == bytes)

        let writer = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try writer.connection.userVersion() == 4)
        #expect(try writer.connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'strokes_by_id'") == 1)
        #expect(try writer.loadPage(page) == content)
        #expect(try writer.integrityProblems() == [])
        // Edits use the index built by the migration.
        let added = makeStroke(77)
        try writer.applyChanges(to: page, [.append([.stroke(added)]), .delete([content.elements[0].id])])
        #expect(throws: SQLiteEngineError.duplicateElement(file: dir.database, page: page, element: added.id)) {
            try writer.applyChanges(to: page, [.append([.stroke(added)])])
        }
        var expected = content
        expected.elements.removeFirst()
        expected.elements.append(.stroke(added))
        #expect(try writer.loadPage(page) == expected)
        try writer.close()
    }

    /// A foreign file with one stroke id twice on a page (not UNIQUE, so it opens): edits name the
    /// lower z, as the page shows it first.
    @Test func anIDTwiceOnAPageEditsTheLowerZ() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        let a = makeStroke(1), b = makeStroke(2)
        try store.replacePage(page, with: PageContent(elements: [.stroke(a), .stroke(b)]))
        // b's row copied above everything under a's id (its checksum is then wrong, but the
        // edit below reads no row of it).
        try store.connection.execute("""
            INSERT INTO strokes (page, z, stroke_id, tool, rgba, width, channels, sample_count, codec, crc, samples)
            SELECT page, z + 1000000, (SELECT stroke_id FROM strokes WHERE z = 65536), tool, rgba, width, channels,
                   sample_count, codec, crc, samples FROM strokes WHERE z = 131072
            """)
        try store.applyChanges(to: page, [.delete([a.id])])
        #expect(try store.connection.scalarInt("SELECT count(*) FROM strokes WHERE z = 65536") == 0)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM strokes") == 2)
        try store.close()
    }
}
