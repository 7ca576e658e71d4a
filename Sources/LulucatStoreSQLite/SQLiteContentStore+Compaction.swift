// Keeping the database small: a session's save writes each stroke's samples as fixed16 (a copy of
// their memory: the commit costs its bytes and one sync), and when the document is idle or closes
// those rows are recoded in the compact codec and the pages they freed are given back to the file
// system. docs/sqlite-engine.md §3.1 and §3.3.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

extension SQLiteContentStore {
    /// Recodes every stroke still stored as fixed16 in the compact codec (lossless: the decoded
    /// samples are equal), in one transaction, then releases the freed pages
    /// (`incremental_vacuum`). A row whose checksum fails is left exactly as it is: recoding it
    /// would give damaged samples a valid checksum.
    ///
    /// - Returns: how many rows were recoded.
    /// - Throws: a database error; the transaction is then rolled back and nothing changed.
    @discardableResult
    package func compactSamples() throws(SQLiteEngineError) -> Int {
        let recoded = try guarded { () throws -> Int in
            try connection.transaction(.immediate) { () throws -> Int in
                // The partial index holds exactly the fixed16 rows: finding them reads no samples.
                let find = try connection.prepare("SELECT s.rowid, p.id, p.key FROM strokes AS s INDEXED BY strokes_fixed16 JOIN pages AS p ON p.key = s.page WHERE s.codec = 0")
                var rows: [(Int64, UUID, Int64)] = []
                while try find.step() {
                    guard find.byteCount(at: 1) == 16 else { continue }
                    rows.append((find.int64(at: 0), find.withBlob(at: 1) { UUID.read16($0) }, find.int64(at: 2)))
                }
                guard !rows.isEmpty else { return 0 }
                let read = try connection.prepare("SELECT \(Self.strokeColumns) FROM strokes WHERE rowid = ?1")
                // Each recoded row is deleted and inserted again (a new rowid, at the end of the
                // table): the rows of one recoding land together on full pages and the pages the
                // fixed16 rows held are left empty, so incremental_vacuum gives them back. An
                // UPDATE in place would leave every page with a few small rows in it.
                let remove = try connection.prepare("DELETE FROM strokes WHERE rowid = ?1")
                let write = try connection.prepare("""
                    INSERT INTO strokes (page, z, stroke_id, tool, rgba, width, channels, sample_count, codec, crc, samples)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                    """)
                var count = 0
                for (rowid, page, key) in rows {
                    try read.bind(rowid, at: 1)
                    guard try read.step() else { try read.reset(); continue }
                    let decoded = try? decodeStroke(read, page: page)
                    try read.reset()
                    guard let (z, element) = decoded, case .stroke(let stroke) = element else { continue }
                    let blob = StrokeBlob.encodeCompact(stroke)
                    let fields = blob.withUnsafeBytes {
                        RowChecksum.stroke(stroke, page: page, codec: SampleCodecID.compact.rawValue, samples: $0)
                    }
                    try remove.bind(rowid, at: 1)
                    try remove.run()
                    let c = stroke.ink.color
                    try write.bind(key, at: 1)
                    try write.bind(z, at: 2)
                    try write.bind(stroke.id.sqliteBytes, at: 3)
                    try write.bind(Int64(stroke.ink.tool.rawValue), at: 4)
                    try write.bind(Int64(c.r) << 24 | Int64(c.g) << 16 | Int64(c.b) << 8 | Int64(c.a), at: 5)
                    try write.bind(Int64(stroke.ink.width), at: 6)
                    try write.bind(Int64(stroke.channels.rawValue), at: 7)
                    try write.bind(Int64(stroke.samples.count), at: 8)
                    try write.bind(Int64(SampleCodecID.compact.rawValue), at: 9)
                    try write.bind(RowChecksum.stored(fields: fields, z: z), at: 10)
                    try write.bind(blob, at: 11)
                    try write.run()
                    count += 1
                }
                return count
            }
        }
        if recoded > 0 { try releaseFreePages() }
        return recoded
    }

    /// Gives the database's free pages back to the file system (the file shrinks at the next
    /// checkpoint). Only for a database created with `auto_vacuum = INCREMENTAL`, as every
    /// database of schema 2 is.
    package func releaseFreePages() throws(SQLiteEngineError) {
        try guarded { try connection.execute("PRAGMA incremental_vacuum") }
    }

    /// How many pages of the database file are free (on SQLite's freelist).
    package func freePageCount() throws(SQLiteEngineError) -> Int {
        try guarded {
            let s = try connection.prepare("PRAGMA freelist_count")
            try s.step()
            return Int(s.int64(at: 0))
        }
    }

    /// The bytes of each page's rows, for `lnote info`: per row its values as the checksum covers
    /// them (§3.2, ids and BLOBs included) but the 16 bytes of the page id (a row stores the page's
    /// integer key, counted as 1), plus 8 for z and 4 for the crc; SQLite's own record and
    /// b-tree overhead is not counted (the file's size is the document's total).
    package func storedBytes() throws(SQLiteEngineError) -> [UUID: Int] {
        try guarded {
            var bytes: [UUID: Int] = [:]
            for sql in [
                "SELECT p.id, sum(length(samples) + 42) FROM strokes JOIN pages AS p ON p.key = page GROUP BY page",
                "SELECT p.id, count(*) * 65 FROM images JOIN pages AS p ON p.key = page GROUP BY page",
                "SELECT p.id, sum(length(payload) + 14) FROM unknown_elements JOIN pages AS p ON p.key = page GROUP BY page",
                "SELECT id, 29 FROM pages",
            ] {
                let s = try connection.prepare(sql)
                while try s.step() {
                    guard s.byteCount(at: 0) == 16 else { continue }
                    bytes[s.withBlob(at: 0) { UUID.read16($0) }, default: 0] += Int(s.int64(at: 1))
                }
            }
            return bytes
        }
    }
}

extension SQLiteContentStore {
    /// A database at most this large (at its current page size, after compaction) is rewritten
    /// with `smallPageSize`-byte pages by `usesSmallPagesIfSmall()` (docs/sqlite-engine.md §3.3):
    /// 64 KiB, 16 pages of 4 KiB, of which 9 are the empty schema's fixed pages.
    static let smallDatabaseBytes = 64 << 10
    /// The page size of a small migrated document: its fixed pages cost 9 KiB instead of 36 KiB.
    static let smallPageSize = 1_024

    /// Rewrites a small database with 1 KiB pages (one VACUUM, out of WAL mode and back: SQLite
    /// cannot change the page size of a WAL database). Called by a migration into SQLite only,
    /// on its staging file, before the rename (a crash leaves a stale temporary, removed at the
    /// next attempt); a new document keeps its 4 KiB pages, so a document that grows from empty
    /// is not multiplied into 1 KiB frames. Returns the page size the file has afterwards.
    @discardableResult
    func usesSmallPagesIfSmall() throws(SQLiteEngineError) -> Int {
        guard configuration.journalMode == .wal, !isReadOnly else { return try guarded { Int(try connection.pageSize()) } }
        // The rows as close() would leave them: the decision is on the size at rest (a migration's
        // rows are fixed16 until recoded). Not an error when it cannot run, as in close().
        if configuration.compactsAtClose { _ = try? compactSamples() }
        return try guarded {
            let pageSize = Int(try connection.pageSize())
            let used = try connection.scalarInt("PRAGMA page_count") - (try connection.scalarInt("PRAGMA freelist_count"))
            guard pageSize > Self.smallPageSize, Int(used) * pageSize <= Self.smallDatabaseBytes else { return pageSize }
            _ = try connection.checkpoint(.truncate)
            try connection.setJournalMode(.delete)
            try connection.setPageSize(Self.smallPageSize)
            try connection.execute("VACUUM")
            try connection.setJournalMode(.wal)
            return Int(try connection.pageSize())
        }
    }
}
