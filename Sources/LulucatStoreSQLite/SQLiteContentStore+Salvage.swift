// Salvage: a page whose rows cannot all be read keeps every row that still reads and checks.
// One bad row (a checksum that fails, a value out of range) or one damaged b-tree page costs what it
// held, not the whole page. docs/sqlite-engine.md §5.4.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

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
        /// The z of each element of `content`, in the same order (for merging with what a raw
        /// pass over the file finds, SQLiteFileSalvage).
        package var zOrder: [Int64] = []

        package var lostCount: Int { refusedRows.count }
        /// Whether nothing was lost: the page read as `loadPage` would read it.
        package var isWhole: Bool { refusedRows.isEmpty && !pageRowDamaged && unreadableRanges == 0 }

        /// A page SQLite could not even find the rows of (its b-trees are damaged there): what a
        /// raw pass finds is all there is.
        package static let unreachable = SalvagedPage(content: PageContent(), refusedRows: [], pageRowDamaged: true, unreadableRanges: 1)

        /// Adds the rows a raw pass over the file's bytes found for this page (`SQLiteFileSalvage`)
        /// that SQL salvage did not reach, in z-order; the page's canvas from its row when SQL
        /// could not check it. A refused row whose element the raw pass found is no longer lost; one
        /// whose id could not be read stays lost unless the page now holds `listed` elements (its
        /// count in document.json). Returns how many elements were added.
        @discardableResult
        package mutating func merge(_ found: SQLiteFileSalvage.Page, listed: Int?) -> Int {
            var have = Set(content.elements.map(\.id))
            var rows = Array(zip(zOrder, content.elements)).map { (z: $0.0, element: $0.1) }
            var added: Set<UUID> = []
            for (z, element) in found.elements where have.insert(element.id).inserted {
                rows.append((z, element))
                added.insert(element.id)
            }
            if pageRowDamaged, let canvas = found.canvas {
                content.canvasSize = canvas
                pageRowDamaged = false
            }
            guard !added.isEmpty else { return 0 }
            rows.sort { $0.z < $1.z }
            content.elements = rows.map(\.element)
            zOrder = rows.map(\.z)
            let listed = listed ?? Int.max
            refusedRows.removeAll { row in row.element.map(added.contains) ?? (rows.count >= listed) }
            if refusedRows.isEmpty, rows.count >= listed { unreadableRanges = 0 }
            return added.count
        }

        package static func == (a: SalvagedPage, b: SalvagedPage) -> Bool {
            a.content == b.content && a.pageRowDamaged == b.pageRowDamaged && a.unreadableRanges == b.unreadableRanges
                && a.refusedRows.map(\.table) == b.refusedRows.map(\.table) && a.refusedRows.map(\.element) == b.refusedRows.map(\.element)
        }
    }

    /// Reads every row of `page` that still reads and checks, row by row; never throws for a
    /// damaged row. The page's rows are listed twice, through the `(page, z)` index and by
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
                        guard let key = try pageKey(page), try hasRows(key) else { throw error }
                    }
                    result.pageRowDamaged = true
                } catch let error as SQLiteError {
                    guard Self.isDamage(SQLiteEngineError(error, file: path)) else { throw error }
                    result.pageRowDamaged = true
                }
                // The key its rows name, read without checking the page's row (which may be the
                // damaged one).
                guard let key = try pageKey(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
                var rows: [(z: Int64, table: Int, element: Element)] = []
                let tables: [(String, String, (Statement) throws(SQLiteEngineError) -> (Int64, Element))] = [
                    ("strokes", Self.strokeColumns, { s throws(SQLiteEngineError) in try self.decodeStroke(s, page: page) }),
                    ("images", Self.imageColumns, { s throws(SQLiteEngineError) in try self.decodeImage(s, page: page) }),
                    ("unknown_elements", Self.unknownColumns, { s throws(SQLiteEngineError) in try self.decodeUnknown(s, page: page) }),
                ]
                for (index, (table, columns, decode)) in tables.enumerated() {
                    // Which rows. strokes (a rowid table): through the (page, z) index and by a
                    // walk of the table itself (a damaged index must not hide rows), each row then
                    // fetched by rowid. images and unknown_elements (WITHOUT ROWID, keyed by
                    // (page, z)): a walk of the table, each row fetched by its key. Each walk from
                    // both ends when SQLite stops part way.
                    let byRowid = table == "strokes"
                    var locators = Set<Int64>()
                    var broken = 0
                    let walks = byRowid
                        ? ["SELECT rowid, 1 FROM strokes INDEXED BY strokes_by_z WHERE page = ?1 ORDER BY z",
                           "SELECT rowid, page = ?1 FROM strokes NOT INDEXED ORDER BY rowid"]
                        : ["SELECT z, page = ?1 FROM \(table) ORDER BY page, z"]
                    for sql in walks {
                        var walkBroken = false
                        for order in ["ASC", "DESC"] where order == "ASC" || walkBroken {
                            let s = try connection.prepare(sql + " " + order)
                            try s.bind(key, at: 1)
                            while true {
                                let more: Bool
                                do { more = try s.step() } catch { if order == "ASC" { walkBroken = true }; break }
                                guard more else { break }
                                if s.int64(at: 1) == 1 { locators.insert(s.int64(at: 0)) }
                            }
                        }
                        if walkBroken { broken += 1 }
                    }
                    if broken == walks.count { result.unreadableRanges += broken > 0 ? 1 : 0 }  // every walk met damage: rows may be missing
                    // Each row on its own: a row that cannot be read or checked costs only itself.
                    let fetch = try connection.prepare(byRowid ? "SELECT \(columns) FROM strokes WHERE rowid = ?2"
                                                               : "SELECT \(columns) FROM \(table) WHERE page = ?1 AND z = ?2")
                    for locator in locators.sorted() {
                        try fetch.bind(key, at: 1)
                        try fetch.bind(locator, at: 2)
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
                result.zOrder = ordered.map(\.z)
                return result
            }
        }
    }

    /// Whether an error means the stored bytes are damaged (as opposed to busy, I/O, a bug).
    /// (See also `SalvagedPage.merge`: what a raw pass over the file adds to a page.)
    static func isDamage(_ error: SQLiteEngineError) -> Bool {
        switch error {
        case .corrupt, .checksumMismatch, .invalidRow, .pageNotFound: return true
        default: return false
        }
    }

    private func hasRows(_ key: Int64) throws -> Bool {
        for table in ["strokes", "images", "unknown_elements"] {
            let s = try connection.prepare("SELECT 1 FROM \(table) WHERE page = ?1 LIMIT 1")
            try s.bind(key, at: 1)
            if (try? s.step()) == true { return true }
        }
        return false
    }
}
