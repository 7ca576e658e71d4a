// Salvage: a page whose rows cannot all be read keeps every row that still reads and checks.
// One bad row (a checksum that fails, a value out of range) or one damaged b-tree page costs what it
// held, not the whole page. docs/sqlite-engine.md §5.4.

import Foundation
import LulucatInk
import LulucatSQLite

extension SQLiteContentStore {
    /// What `salvagePage` could read of a damaged page.
    package struct SalvagedPage: Sendable, Equatable {
        /// Every element whose row reads and checks, in z-order.
        package var content: PageContent
        /// Rows that were found but refused (their checksum fails or a value cannot be right),
        /// with the element id as stored when it could be read.
        package var refusedRows: [(table: String, element: UUID?)]
        /// Whether the page's own row (its canvas size) was refused; the canvas is then US Letter.
        package var pageRowDamaged: Bool
        /// Whether a table's rows could not all be walked (SQLite found its b-tree damaged): rows
        /// behind the damage were read from the other end where possible, but some may be missing
        /// without a trace.
        package var unreadableRanges: Int

        package var lostCount: Int { refusedRows.count }
        /// Whether nothing was lost: the page read as `loadPage` would read it.
        package var isWhole: Bool { refusedRows.isEmpty && !pageRowDamaged && unreadableRanges == 0 }

        package static func == (a: SalvagedPage, b: SalvagedPage) -> Bool {
            a.content == b.content && a.pageRowDamaged == b.pageRowDamaged && a.unreadableRanges == b.unreadableRanges
                && a.refusedRows.map(\.table) == b.refusedRows.map(\.table) && a.refusedRows.map(\.element) == b.refusedRows.map(\.element)
        }
    }

    /// Reads every row of `page` that still reads and checks, row by row; never throws for a
    /// damaged row. The page's rows are listed twice, through the `(page_id, z)` index and by
    /// walking the table, each walk from the other end again when SQLite reports damage part way;
    /// then each row is read and checked on its own, so one damaged b-tree page costs the rows it
    /// holds.
    ///
    /// - Throws: `.pageNotFound` when the page has no row at all, or an error that is not damage
    ///   (`inUse`, I/O).
    package func salvagePage(_ page: UUID) throws(SQLiteEngineError) -> SalvagedPage {
        try guarded {
            try connection.transaction(.deferred) { () throws -> SalvagedPage in
                var result = SalvagedPage(content: PageContent(), refusedRows: [], pageRowDamaged: false, unreadableRanges: 0)
                do {
                    guard let size = try canvasSize(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
                    result.content.canvasSize = size
                } catch let error as SQLiteEngineError {
                    guard Self.isDamage(error) else { throw error }
                    if case .pageNotFound = error {
                        // The page row may be unreadable rather than absent: do its rows exist?
                        guard try hasRows(page) else { throw error }
                    }
                    result.pageRowDamaged = true
                } catch let error as SQLiteError {
                    guard Self.isDamage(SQLiteEngineError(error, file: path)) else { throw error }
                    result.pageRowDamaged = true
                }
                var rows: [(z: Int64, table: Int, element: Element)] = []
                let tables: [(String, String, (Statement) throws(SQLiteEngineError) -> (Int64, Element))] = [
                    ("strokes", Self.strokeColumns, { s throws(SQLiteEngineError) in try self.decodeStroke(s, page: page) }),
                    ("images", Self.imageColumns, { s throws(SQLiteEngineError) in try self.decodeImage(s, page: page) }),
                    ("unknown_elements", Self.unknownColumns, { s throws(SQLiteEngineError) in try self.decodeUnknown(s, page: page) }),
                ]
                for (index, (table, columns, decode)) in tables.enumerated() {
                    // Which rows: through the (page_id, z) index, and by a walk of the table itself
                    // (a damaged index must not hide rows); each walk from both ends.
                    var rowids = Set<Int64>()
                    var broken = 0
                    for (sql, bindPage) in [
                        ("SELECT rowid, 1 FROM \(table) INDEXED BY \(table)_by_z WHERE page_id = ?1 ORDER BY z", true),
                        ("SELECT rowid, page_id = ?1 FROM \(table) NOT INDEXED", true),
                    ] {
                        var walkBroken = false
                        for order in ["ASC", "DESC"] where order == "ASC" || walkBroken {
                            let ordered = sql.hasSuffix("ORDER BY z") ? sql + " " + order : sql + " ORDER BY rowid " + order
                            let s = try connection.prepare(ordered)
                            if bindPage { try s.bind(page.sqliteBytes, at: 1) }
                            while true {
                                let more: Bool
                                do { more = try s.step() } catch { if order == "ASC" { walkBroken = true }; break }
                                guard more else { break }
                                if s.int64(at: 1) == 1 { rowids.insert(s.int64(at: 0)) }
                            }
                        }
                        if walkBroken { broken += 1 }
                    }
                    if broken == 2 { result.unreadableRanges += 1 }  // both walks met damage: rows may be missing
                    // Each row on its own: a row that cannot be read or checked costs only itself.
                    let fetch = try connection.prepare("SELECT \(columns) FROM \(table) WHERE rowid = ?1")
                    for rowid in rowids.sorted() {
                        try fetch.bind(rowid, at: 1)
                        defer { try? fetch.reset() }
                        let found: Bool
                        do { found = try fetch.step() } catch { result.refusedRows.append((table, nil)); continue }
                        guard found else { continue }
                        do {
                            let (z, element) = try decode(fetch)
                            rows.append((z, index, element))
                        } catch {
                            let id = fetch.columnType(at: 1) == .blob && fetch.byteCount(at: 1) == 16 ? fetch.withBlob(at: 1) { UUID.read16($0) } : nil
                            result.refusedRows.append((table, id))
                        }
                    }
                }
                let ordered = rows.sorted { a, b in a.z != b.z ? a.z < b.z : a.table < b.table }
                result.content.elements = ordered.map(\.element)
                return result
            }
        }
    }

    /// Whether an error means the stored bytes are damaged (as opposed to busy, I/O, a bug).
    static func isDamage(_ error: SQLiteEngineError) -> Bool {
        switch error {
        case .corrupt, .checksumMismatch, .invalidRow, .pageNotFound: return true
        default: return false
        }
    }

    private func hasRows(_ page: UUID) throws -> Bool {
        for table in ["strokes", "images", "unknown_elements"] {
            let s = try connection.prepare("SELECT 1 FROM \(table) WHERE page_id = ?1 LIMIT 1")
            try s.bind(page.sqliteBytes, at: 1)
            if (try? s.step()) == true { return true }
        }
        return false
    }
}
