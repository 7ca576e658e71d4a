// Schema version 3 (docs/sqlite-engine.md §3): a version-2 database, generated here from the
// version-2 migrations exactly as a version-2 build wrote it, opens migrated in place with every row
// kept (an orphan row too) and its checksums still checked; a new database is the small version-3
// file.

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreSQLite

@Suite struct SQLiteSchemaMigrationTests {
    init() { Library.enableSQLiteEngine() }
    /// Writes a version-2 file at `path`: `content` on `page` (strokes in both codecs), and one
    /// stroke whose page_id names no page row.
    private func writeVersionTwo(_ path: String, page: UUID, content: PageContent, orphanPage: UUID, orphan: Stroke) throws {
        let db = try Connection(path: path)
        try db.execute("PRAGMA page_size = 16384; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL")
        try db.execute(SQLiteContentStore.migrations[0])
        try db.execute(SQLiteContentStore.migrations[1])
        try db.setUserVersion(2)
        // In a function of its own, so that every statement is finalized before the close.
        func fill() throws {
        let p = try db.prepare("INSERT INTO pages (id, canvas_width, canvas_height, crc) VALUES (?1, ?2, ?3, ?4)")
        try p.bind(page.sqliteBytes, at: 1)
        try p.bind(Int64(content.canvasSize.width), at: 2)
        try p.bind(Int64(content.canvasSize.height), at: 3)
        try p.bind(Int64(RowChecksum.page(id: page, width: content.canvasSize.width, height: content.canvasSize.height)), at: 4)
        try p.run()
        func insertStroke(_ s: Stroke, page: UUID, z: Int64, codec: SampleCodecID) throws {
            let q = try db.prepare("""
                INSERT INTO strokes (page_id, z, stroke_id, tool, rgba, width, channels, sample_count, samples, codec, crc)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """)
            let c = s.ink.color
            let blob = codec == .fixed16 ? StrokeBlob.encode(s) : StrokeBlob.encodeCompact(s)
            try q.bind(page.sqliteBytes, at: 1); try q.bind(z, at: 2); try q.bind(s.id.sqliteBytes, at: 3)
            try q.bind(Int64(s.ink.tool.rawValue), at: 4)
            try q.bind(Int64(c.r) << 24 | Int64(c.g) << 16 | Int64(c.b) << 8 | Int64(c.a), at: 5)
            try q.bind(Int64(s.ink.width), at: 6); try q.bind(Int64(s.channels.rawValue), at: 7)
            try q.bind(Int64(s.samples.count), at: 8); try q.bind(blob, at: 9); try q.bind(Int64(codec.rawValue), at: 10)
            let fields = blob.withUnsafeBytes { RowChecksum.stroke(s, page: page, codec: codec.rawValue, samples: $0) }
            try q.bind(RowChecksum.stored(fields: fields, z: z), at: 11)
            try q.run()
        }
        for (i, element) in content.elements.enumerated() {
            let z = SQLiteContentStore.zStep * Int64(i + 1)
            switch element {
            case .stroke(let s):
                try insertStroke(s, page: page, z: z, codec: i % 2 == 0 ? .fixed16 : .compact)
            case .image(let m):
                let q = try db.prepare("INSERT INTO images (page_id, z, image_id, asset_id, x, y, width, height, rotation, crc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
                try q.bind(page.sqliteBytes, at: 1); try q.bind(z, at: 2)
                try q.bind(m.id.sqliteBytes, at: 3); try q.bind(m.assetID.sqliteBytes, at: 4)
                try q.bind(Int64(m.frame.x), at: 5); try q.bind(Int64(m.frame.y), at: 6)
                try q.bind(Int64(m.frame.width), at: 7); try q.bind(Int64(m.frame.height), at: 8)
                try q.bind(Int64(m.rotation), at: 9)
                let fields = RowChecksum.image(page: page, id: m.id, asset: m.assetID, frame: m.frame, rotation: m.rotation)
                try q.bind(RowChecksum.stored(fields: fields, z: z), at: 10)
                try q.run()
            case .unknown(let u):
                let q = try db.prepare("INSERT INTO unknown_elements (page_id, z, element_id, kind, payload, crc) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                try q.bind(page.sqliteBytes, at: 1); try q.bind(z, at: 2)
                try q.bind(u.id.sqliteBytes, at: 3); try q.bind(Int64(u.kind), at: 4); try q.bind(u.payload, at: 5)
                let fields = u.payload.withUnsafeBytes { RowChecksum.unknown(page: page, kind: u.kind, payload: $0) }
                try q.bind(RowChecksum.stored(fields: fields, z: z), at: 6)
                try q.run()
            }
        }
        try insertStroke(orphan, page: orphanPage, z: SQLiteContentStore.zStep, codec: .compact)
        }
        try fill()
        _ = try db.checkpoint(.truncate)
        try db.close()
    }

    private func objects(_ store: SQLiteContentStore) throws -> [String] {
        let s = try store.connection.prepare("SELECT type || ':' || name FROM sqlite_master ORDER BY 1")
        var out: [String] = []
        while try s.step() { out.append(s.string(at: 0) ?? "") }
        return out
    }

    private func count(_ store: SQLiteContentStore, _ sql: String) throws -> Int64 {
        let s = try store.connection.prepare(sql)
        try s.step()
        return s.int64(at: 0)
    }

    @Test func aVersionTwoDatabaseIsMigratedInPlaceKeepingEveryRow() throws {
        let dir = SQLiteTestDirectory()
        let page = UUID(), orphanPage = UUID()
        let content = samplePage()
        let orphan = makeStroke(40)
        try writeVersionTwo(dir.database, page: page, content: content, orphanPage: orphanPage, orphan: orphan)
        let store = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try store.connection.userVersion() == 4)
        #expect(try objects(store) == ["index:sqlite_autoindex_pages_1", "index:strokes_by_id", "index:strokes_by_z", "index:strokes_fixed16",
                                        "table:images", "table:pages", "table:strokes", "table:unknown_elements"])
        #expect(try store.loadPage(page) == content)
        #expect(try store.integrityProblems() == [])
        // The orphan row keeps a page of its own, whose row (crc 0) reads as damaged: salvage keeps
        // the stroke, checked by its own checksum, which covers the page id it named.
        #expect(try store.pageIDs() == [page, orphanPage])
        #expect(throws: SQLiteEngineError.checksumMismatch(file: store.path, table: "pages", page: orphanPage, element: nil)) {
            try store.loadPage(orphanPage)
        }
        let salvaged = try store.salvagePage(orphanPage)
        #expect(salvaged.content.elements == [.stroke(orphan)])
        #expect(salvaged.pageRowDamaged && salvaged.refusedRows.isEmpty)
        // Checksums came over unchanged and are still checked.
        try store.connection.execute("UPDATE strokes SET width = width + 1 WHERE z = 65536")
        #expect(throws: SQLiteEngineError.self) { try store.loadPage(page) }
        try store.connection.execute("UPDATE strokes SET width = width - 1 WHERE z = 65536")
        // Edits work on the migrated rows; at close the fixed16 rows are recoded.
        let added = makeStroke(41)
        try store.applyChanges(to: page, [.append([.stroke(added)]), .delete([content.elements[1].id])])
        var expected = content
        expected.elements.remove(at: 1)
        expected.elements.append(.stroke(added))
        #expect(try store.loadPage(page) == expected)
        try store.close()
        let reopened = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try reopened.loadPage(page) == expected)
        #expect(try count(reopened, "SELECT count(*) FROM strokes WHERE codec = 0") == 0)
        // The file keeps its 16 KiB pages (SQLite cannot change them in WAL mode).
        #expect(try reopened.connection.pageSize() == 16_384)
        try reopened.close()
    }

    /// A new database is version 4 with 4 KiB pages: 10 pages when empty (9 in version 3, before
    /// `strokes_by_id`).
    @Test func aNewDatabaseIsSmall() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        try store.replacePage(UUID(), with: PageContent())
        try store.close()
        let size = try FileManager.default.attributesOfItem(atPath: dir.database)[.size] as! Int
        #expect(size == 10 * 4_096)
    }

    /// The columns of every table and the columns of every index, as SQLite reports them; the
    /// declared type INT is INTEGER's synonym (the same affinity; STRICT accepts both).
    private func shape(_ db: Connection) throws -> [String] {
        var out: [String] = []
        let objects = try db.prepare("SELECT type, name, tbl_name FROM sqlite_master ORDER BY type, name")
        var list: [(String, String, String)] = []
        while try objects.step() { list.append((objects.string(at: 0) ?? "", objects.string(at: 1) ?? "", objects.string(at: 2) ?? "")) }
        for (type, name, table) in list {
            if type == "table" {
                let c = try db.prepare("SELECT cid, name, type, pk FROM pragma_table_info(?1)")
                try c.bind(name, at: 1)
                while try c.step() {
                    let declared = (c.string(at: 2) ?? "") == "INT" ? "INTEGER" : (c.string(at: 2) ?? "")
                    out.append("\(name).\(c.int64(at: 0)) \(c.string(at: 1) ?? "") \(declared) pk\(c.int64(at: 3))")
                }
                let w = try db.prepare("SELECT wr, strict FROM pragma_table_list WHERE name = ?1")
                try w.bind(name, at: 1)
                while try w.step() { out.append("\(name) without-rowid \(w.int64(at: 0)) strict \(w.int64(at: 1))") }
            } else {
                let c = try db.prepare("SELECT seqno, name FROM pragma_index_info(?1)")
                try c.bind(name, at: 1)
                while try c.step() { out.append("\(name) on \(table) \(c.int64(at: 0)) \(c.string(at: 1) ?? "")") }
                let u = try db.prepare("SELECT \"unique\", partial FROM pragma_index_list(?1) WHERE name = ?2")
                try u.bind(table, at: 1); try u.bind(name, at: 2)
                while try u.step() { out.append("\(name) unique \(u.int64(at: 0)) partial \(u.int64(at: 1))") }
            }
        }
        return out
    }

    /// A new database gets version 4 in one step, in short text: the same tables, columns, types,
    /// keys and indexes as a file that went through every migration, in fewer pages of a 1 KiB-page
    /// file (11 pages empty, against 13 with the migrations' text).
    @Test func aNewDatabaseHasTheMigratedSchemaInPageOne() throws {
        let dir = SQLiteTestDirectory()
        func make(_ name: String, _ statements: [String]) throws -> Connection {
            let db = try Connection(path: dir.url.path + "/" + name)
            try db.execute("PRAGMA page_size = 1024; PRAGMA auto_vacuum = INCREMENTAL")
            for sql in statements { try db.execute(sql) }
            return db
        }
        let short = try make("short.sqlite", [SQLiteContentStore.currentSchema])
        let migrated = try make("migrated.sqlite", SQLiteContentStore.migrations)
        let shortShape = try shape(short)
        #expect(shortShape == (try shape(migrated)))
        #expect(shortShape.count == 46)
        // Version 4's strokes_by_id: one more b-tree, and its row no longer fits in page 1 with the
        // others at 1 KiB (version 3: 9 pages, 650 bytes of text), so sqlite_schema takes 3 pages.
        #expect(try short.scalarInt("PRAGMA page_count") == 11)
        try migrated.execute("VACUUM")  // as prepareSchema does after migrating: the dropped tables' pages go
        #expect(try migrated.scalarInt("PRAGMA page_count") == 13)
        #expect(try short.scalarInt("SELECT sum(length(sql)) FROM sqlite_master") <= 720)

        // What a store creates is that schema, at version 4, and it checks at the next open.
        let storeDir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: storeDir.url)
        let page = UUID()
        try store.replacePage(page, with: samplePage())
        #expect(try store.connection.userVersion() == 4)
        #expect(try shape(store.connection) == shortShape)
        // No NOT NULL: a NULL in any column of a row is a damaged row to the reader.
        try store.connection.execute("UPDATE strokes SET tool = NULL WHERE z = (SELECT min(z) FROM strokes)")
        #expect(throws: SQLiteEngineError.self) { try store.loadPage(page) }
        try store.close()
        let reopened = try SQLiteContentStore(packageDirectory: storeDir.url, mode: .openExisting)
        #expect(try reopened.pageIDs() == [page])
        try reopened.close()
    }
}
