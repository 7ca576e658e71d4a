// Reading: a page's elements in z-order, the page list, element counts and content hashes.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

extension SQLiteContentStore {
    /// The ids of the pages in the database, in the order they were first stored. The document's
    /// page order lives in `document.json`, not here.
    package func pageIDs() throws(SQLiteEngineError) -> [UUID] {
        try guarded {
            let s = try connection.prepare("SELECT id FROM pages ORDER BY key")
            var ids: [UUID] = []
            while try s.step() { ids.append(try RowReader(statement: s, file: path, table: "pages").uuid(0, "id")) }
            return ids
        }
    }

    /// Loads every element of a page, in z-order (the order the canvas draws them).
    ///
    /// - Throws: `.pageNotFound`, `.invalidRow` for a row that cannot be right, `.corrupt`.
    package func loadPage(_ page: UUID) throws(SQLiteEngineError) -> PageContent {
        try guarded {
            // One read transaction: the four queries see the same snapshot.
            try connection.transaction(.deferred) {
                guard let (key, size) = try pageRow(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
                var rows: [(z: Int64, element: Element)] = []
                func collect(_ sql: String, _ decode: (Statement) throws -> (Int64, Element)) throws {
                    let s = try connection.prepare(sql)
                    try s.bind(key, at: 1)
                    while try s.step() { rows.append(try decode(s)) }
                }
                try collect("SELECT \(Self.strokeColumns) FROM strokes WHERE page = ?1 ORDER BY z") { s throws(SQLiteEngineError) in try decodeStroke(s, page: page) }
                try collect("SELECT \(Self.imageColumns) FROM images WHERE page = ?1 ORDER BY z") { s throws(SQLiteEngineError) in try decodeImage(s, page: page) }
                try collect("SELECT \(Self.unknownColumns) FROM unknown_elements WHERE page = ?1 ORDER BY z") { s throws(SQLiteEngineError) in try decodeUnknown(s, page: page) }
                // z is unique within a table; across tables a damaged file could repeat one, so
                // the sort is stable on the table order above to stay deterministic.
                let ordered = rows.enumerated().sorted { a, b in
                    a.element.z != b.element.z ? a.element.z < b.element.z : a.offset < b.offset
                }
                return PageContent(canvasSize: size, elements: ordered.map(\.element.element))
            }
        }
    }

    /// The canvas size of a page, or nil when the page is not stored.
    func canvasSize(_ page: UUID) throws -> QuantizedSize? { try pageRow(page)?.size }

    /// The page's integer key (what its element rows name, schema 3) and its canvas size, its
    /// checksum checked; nil when the page is not stored.
    func pageRow(_ page: UUID) throws -> (key: Int64, size: QuantizedSize)? {
        let s = try connection.prepare("SELECT canvas_width, canvas_height, crc, key FROM pages WHERE id = ?1")
        try s.bind(page.sqliteBytes, at: 1)
        guard try s.step() else { return nil }
        let row = RowReader(statement: s, file: path, table: "pages")
        let size = QuantizedSize(width: try row.int(0, "canvas_width", as: Int32.self),
                                 height: try row.int(1, "canvas_height", as: Int32.self))
        guard try row.int(2, "crc", as: UInt32.self) == RowChecksum.page(id: page, width: size.width, height: size.height) else {
            throw SQLiteEngineError.checksumMismatch(file: path, table: "pages", page: page, element: nil)
        }
        guard size.width >= 0, size.height >= 0 else { throw row.invalid("page \(page) has a negative canvas size") }
        return (s.int64(at: 3), size)
    }

    /// The page's key without checking its row (salvage reads the elements of a page whose own row
    /// is damaged); nil when no row has this id.
    func pageKey(_ page: UUID) throws -> Int64? {
        let s = try connection.prepare("SELECT key FROM pages WHERE id = ?1")
        try s.bind(page.sqliteBytes, at: 1)
        guard try s.step() else { return nil }
        return s.int64(at: 0)
    }

    /// How many strokes, images and unknown elements a page holds (without reading them).
    package func elementCounts(_ page: UUID) throws(SQLiteEngineError) -> ElementCounts {
        try guarded {
            guard let (key, _) = try pageRow(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
            let s = try connection.prepare("""
                SELECT (SELECT count(*) FROM strokes WHERE page = ?1),
                       (SELECT count(*) FROM images WHERE page = ?1),
                       (SELECT count(*) FROM unknown_elements WHERE page = ?1)
                """)
            try s.bind(key, at: 1)
            try s.step()
            return ElementCounts(strokes: Int(s.int64(at: 0)), images: Int(s.int64(at: 1)), unknown: Int(s.int64(at: 2)))
        }
    }

    /// The engine-independent content hash of a page (`PageContent.contentHash()`).
    package func contentHash(_ page: UUID) throws(SQLiteEngineError) -> String {
        let content = try loadPage(page)
        return try guarded { try content.contentHash() }
    }
}

extension SQLiteContentStore {
    /// Lends each stroke's `samples` BLOB of a page to `body`, in z-order, without decoding or
    /// copying it (the buffer is valid only inside `body`). For benchmarks and bulk export.
    package func forEachStrokeBlob(_ page: UUID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws(SQLiteEngineError) {
        try guarded {
            guard let key = try pageKey(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
            let s = try connection.prepare("SELECT samples FROM strokes WHERE page = ?1 ORDER BY z")
            try s.bind(key, at: 1)
            while try s.step() { try s.withBlob(at: 0, body) }
        }
    }
}
