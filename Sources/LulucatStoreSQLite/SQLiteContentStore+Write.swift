// Writing: every save is one transaction. Appending is an INSERT at the top of a sparse z-order;
// deleting, replacing (erase, transform) and reordering touch only the rows they name.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

extension SQLiteContentStore {
    /// One edit of a page's elements.
    package enum Change: Hashable, Sendable {
        /// New elements drawn on top, in this order.
        case append([Element])
        /// Removes these elements.
        case delete([UUID])
        /// Puts `with` where the element `id` was, in this order: one piece for a transform (the
        /// id may stay the same), several for an erase that split a stroke, none to remove it.
        case replace(UUID, with: [Element])
        /// Moves these elements, in this order, just below `before` (drawn before it), or to the
        /// top when `before` is nil.
        case move([UUID], before: UUID?)
        /// Moves these elements, kept in their current relative order, to `position` among the
        /// page's other elements (`PageChange.move`'s meaning; an index past the others is the
        /// top). Resolved against the rows as the save has left them so far, so no stored page is
        /// read: the index of `.index(i)` is found by walking the page's z values (no row read).
        case moveTo([UUID], ZPosition)
        case setCanvasSize(QuantizedSize)
    }

    /// One page's part of a save.
    package enum PageUpdate: Hashable, Sendable {
        /// Edits of a stored page.
        case changes(UUID, [Change])
        /// The whole content of a page, created when missing (a full rewrite).
        case replace(UUID, PageContent)
        case delete(UUID)
    }

    /// Distance between the z of appended elements, leaving room for 16 halvings between two
    /// neighbours before a page's z values must be renumbered.
    static let zStep: Int64 = 1 << 16

    /// Applies the updates of every dirty page in ONE transaction: all of them or none.
    ///
    /// - Throws: `.pageNotFound`, `.elementNotFound`, `.duplicateElement`, `.unencodable`, or a
    ///   database error; the database is then unchanged.
    package func save(_ updates: [PageUpdate]) throws(SQLiteEngineError) {
        let start = SaveBreakdown.now()
        lastSave = SaveBreakdown()
        var bodyEnd = start
        defer {
            let end = SaveBreakdown.now()
            lastSave.commit = end - bodyEnd
            lastSave.total = end - start
        }
        try guarded {
            try connection.transaction(.immediate) {
                defer { bodyEnd = SaveBreakdown.now() }
                let writer = try PageWriter(store: self)
                lastSave.prepare = SaveBreakdown.now() - start
                for update in updates {
                    switch update {
                    case let .changes(page, changes):
                        guard let (key, _) = try pageRow(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
                        for change in changes { try writer.apply(change, to: PageRef(id: page, key: key)) }
                    case let .replace(page, content):
                        try writer.replacePage(page, content)
                    case .delete(let page):
                        guard let (key, _) = try pageRow(page) else { throw SQLiteEngineError.pageNotFound(file: path, page: page) }
                        try writer.deleteRows(of: PageRef(id: page, key: key))
                        let s = try connection.prepare("DELETE FROM pages WHERE id = ?1")
                        try s.bind(page.sqliteBytes, at: 1)
                        try s.run()
                    }
                }
            }
        }
    }

    /// Applies one page's changes in one transaction.
    package func applyChanges(to page: UUID, _ changes: [Change]) throws(SQLiteEngineError) {
        try save([.changes(page, changes)])
    }

    /// Rewrites a page completely (creating it when missing) in one transaction.
    package func replacePage(_ page: UUID, with content: PageContent) throws(SQLiteEngineError) {
        try save([.replace(page, content)])
    }

    /// Removes a page and all its elements in one transaction.
    package func deletePage(_ page: UUID) throws(SQLiteEngineError) {
        try save([.delete(page)])
    }
}

/// A stored page: its id (which the row checksums cover) and its integer key (which its rows name).
private struct PageRef {
    var id: UUID
    var key: Int64
}

/// Where an element sits: its table and its z.
private struct Placement {
    enum Table: Int { case strokes = 0, images = 1, unknown = 2 }
    var table: Table
    var z: Int64
}

/// The statements of one save, prepared once and reused for every element of every page.
private final class PageWriter {
    let store: SQLiteContentStore
    var connection: Connection { store.connection }
    let insertStroke: Statement
    let insertImage: Statement
    let insertUnknown: Statement
    let below: Statement
    let above: Statement
    let top: Statement
    /// A stroke's row by its id, through `strokes_by_id` (schema 4; `strokeByIDQuery`).
    let strokeByID: Statement
    /// The z of the n-th element (OFFSET ?2) of the page among those with z > 0, in z order.
    let nth: Statement
    /// Each page's images and unknown elements by id (they have no index by id: a page holds few),
    /// read once a save from those rows and kept up to date by this writer's inserts, deletes and
    /// moves of them. Strokes are looked up through their index, which sees this save's rows.
    private var othersByPage: [Int64: [UUID: Placement]] = [:]

    init(store: SQLiteContentStore) throws {
        self.store = store
        let c = store.connection
        insertStroke = try c.prepare("INSERT INTO strokes (page, \(SQLiteContentStore.strokeColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
        insertImage = try c.prepare("INSERT INTO images (page, \(SQLiteContentStore.imageColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        insertUnknown = try c.prepare("INSERT INTO unknown_elements (page, \(SQLiteContentStore.unknownColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        below = try c.prepare("""
            SELECT max(m) FROM (SELECT max(z) AS m FROM strokes WHERE page = ?1 AND z < ?2
            UNION ALL SELECT max(z) FROM images WHERE page = ?1 AND z < ?2
            UNION ALL SELECT max(z) FROM unknown_elements WHERE page = ?1 AND z < ?2)
            """)
        above = try c.prepare("""
            SELECT min(m) FROM (SELECT min(z) AS m FROM strokes WHERE page = ?1 AND z > ?2
            UNION ALL SELECT min(z) FROM images WHERE page = ?1 AND z > ?2
            UNION ALL SELECT min(z) FROM unknown_elements WHERE page = ?1 AND z > ?2)
            """)
        top = try c.prepare("""
            SELECT max(m) FROM (SELECT max(z) AS m FROM strokes WHERE page = ?1
            UNION ALL SELECT max(z) FROM images WHERE page = ?1
            UNION ALL SELECT max(z) FROM unknown_elements WHERE page = ?1)
            """)
        strokeByID = try c.prepare(SQLiteContentStore.strokeByIDQuery)
        // A compound SELECT with ORDER BY merges its arms, each read in z order from its index, and
        // stops after OFFSET + 1 rows.
        nth = try c.prepare("""
            SELECT z FROM strokes WHERE page = ?1 AND z > 0
            UNION ALL SELECT z FROM images WHERE page = ?1 AND z > 0
            UNION ALL SELECT z FROM unknown_elements WHERE page = ?1 AND z > 0
            ORDER BY 1 LIMIT 1 OFFSET ?2
            """)
    }

    // MARK: Queries

    /// The page's images and unknown elements by id, read once a save (the first lookup of the page).
    private func others(_ page: PageRef) throws -> [UUID: Placement] {
        if let known = othersByPage[page.key] { return known }
        var map: [UUID: Placement] = [:]
        for table in [Placement.Table.images, .unknown] {
            let (name, column) = Self.tableAndID(table)
            let s = try connection.prepare("SELECT z, \(column) FROM \(name) WHERE page = ?1")
            try s.bind(page.key, at: 1)
            while try s.step() {
                let id = try RowReader(statement: s, file: store.path, table: name).uuid(1, column)
                // Two rows with one id (only a damaged or foreign file): the first in z-order is
                // the one the page shows (loadPage), so it is the one edits name.
                let z = s.int64(at: 0)
                if let seen = map[id], seen.z <= z { continue }
                map[id] = Placement(table: table, z: z)
            }
        }
        othersByPage[page.key] = map
        return map
    }

    /// Every row of the page as (z, table, id), in z order: only for renumbering, which rewrites
    /// every row of the page anyway.
    private func allRows(_ page: PageRef) throws -> [(z: Int64, table: Placement.Table, id: UUID)] {
        var rows: [(z: Int64, table: Placement.Table, id: UUID)] = []
        for table in [Placement.Table.strokes, .images, .unknown] {
            let (name, column) = Self.tableAndID(table)
            let s = try connection.prepare("SELECT z, \(column) FROM \(name) WHERE page = ?1")
            try s.bind(page.key, at: 1)
            while try s.step() {
                rows.append((s.int64(at: 0), table, try RowReader(statement: s, file: store.path, table: name).uuid(1, column)))
            }
        }
        rows.sort { ($0.z, $0.table.rawValue, $0.id.uuidString) < ($1.z, $1.table.rawValue, $1.id.uuidString) }
        return rows
    }

    /// Records an image or unknown element this writer inserted, deleted (nil) or moved, in the
    /// page's loaded map. (A stroke's row is found through its index, which needs no note.)
    private func note(_ id: UUID, _ placement: Placement?, table: Placement.Table, on page: PageRef) {
        guard table != .strokes, othersByPage[page.key] != nil else { return }
        othersByPage[page.key]![id] = placement
    }

    /// Where the element `id` is on the page: its stroke row through `strokes_by_id`, or its image
    /// or unknown element row; the lower z when (in a foreign file) both exist.
    func placement(of id: UUID, on page: PageRef) throws -> Placement? {
        let s = strokeByID
        try s.bind(page.key, at: 1)
        let bytes = id.sqliteBytes
        try s.bind(bytes, at: 2)
        try s.bind(Array(bytes[12...]), at: 3)
        var found: Placement?
        do {
            defer { try? s.reset() }
            while try s.step() {
                let z = s.int64(at: 0)
                if found.map({ z < $0.z }) ?? true { found = Placement(table: .strokes, z: z) }
            }
        }
        if let other = try others(page)[id], found.map({ other.z < $0.z }) ?? true { found = other }
        return found
    }

    /// The z of the page's element at `index` among those with z > 0 (the rows a move has not
    /// parked), in z order; nil past the last.
    func zOfElement(at index: Int, on page: PageRef) throws -> Int64? {
        try nth.bind(page.key, at: 1)
        try nth.bind(Int64(index), at: 2)
        defer { try? nth.reset() }
        guard try nth.step() else { return nil }
        return nth.int64(at: 0)
    }

    /// A nullable integer from a one-row aggregate.
    private func optionalInt(_ s: Statement, page: PageRef, z: Int64?) throws -> Int64? {
        try s.bind(page.key, at: 1)
        if let z { try s.bind(z, at: 2) }
        defer { try? s.reset() }
        try s.step()
        return s.isNull(at: 0) ? nil : s.int64(at: 0)
    }

    func topZ(_ page: PageRef) throws -> Int64? { try optionalInt(top, page: page, z: nil) }
    func zBelow(_ z: Int64, on page: PageRef) throws -> Int64? { try optionalInt(below, page: page, z: z) }
    func zAbove(_ z: Int64, on page: PageRef) throws -> Int64? { try optionalInt(above, page: page, z: z) }

    // MARK: Rows

    /// Inserts one element row. A stroke's samples are written in `codec`: fixed16 on the commit
    /// path of a session's save (a copy of the samples' memory, so a save costs its bytes and one
    /// sync), compact for a page written whole; `compactSamples()` recodes fixed16 rows later.
    func insert(_ element: Element, z: Int64, on ref: PageRef, codec: SampleCodecID = .fixed16) throws {
        let key = ref.key, page = ref.id
        defer { note(element.id, Placement(table: Self.table(of: element), z: z), table: Self.table(of: element), on: ref) }
        switch element {
        case .stroke(let stroke):
            let t0 = SQLiteContentStore.SaveBreakdown.now()
            try StrokeBlob.validate(stroke)
            let s = insertStroke
            try s.bind(key, at: 1)
            try s.bind(z, at: 2)
            try s.bind(stroke.id.sqliteBytes, at: 3)
            try s.bind(Int64(stroke.ink.tool.rawValue), at: 4)
            let c = stroke.ink.color
            try s.bind(Int64(c.r) << 24 | Int64(c.g) << 16 | Int64(c.b) << 8 | Int64(c.a), at: 5)
            try s.bind(Int64(stroke.ink.width), at: 6)
            try s.bind(Int64(stroke.channels.rawValue), at: 7)
            try s.bind(Int64(stroke.samples.count), at: 8)
            try s.bind(Int64(codec.rawValue), at: 10)
            // The BLOB is bound without a copy (SQLITE_STATIC): the bytes outlive the closure. Its
            // checksum is computed over the same bytes.
            try StrokeBlob.withBytes(of: stroke, codec: codec) { raw in
                try s.bind(RowChecksum.stored(fields: RowChecksum.stroke(stroke, page: page, codec: codec.rawValue, samples: raw), z: z), at: 11)
                let t1 = SQLiteContentStore.SaveBreakdown.now()
                store.lastSave.validateAndChecksum += t1 - t0
                try s.withBlob(raw, at: 9) { try s.run() }
                store.lastSave.insert += SQLiteContentStore.SaveBreakdown.now() - t1
            }
        case .image(let image):
            let s = insertImage
            try s.bind(key, at: 1)
            try s.bind(z, at: 2)
            try s.bind(image.id.sqliteBytes, at: 3)
            try s.bind(image.assetID.sqliteBytes, at: 4)
            try s.bind(Int64(image.frame.x), at: 5)
            try s.bind(Int64(image.frame.y), at: 6)
            try s.bind(Int64(image.frame.width), at: 7)
            try s.bind(Int64(image.frame.height), at: 8)
            try s.bind(Int64(image.rotation), at: 9)
            let fields = RowChecksum.image(page: page, id: image.id, asset: image.assetID, frame: image.frame, rotation: image.rotation)
            try s.bind(RowChecksum.stored(fields: fields, z: z), at: 10)
            try s.run()
        case .unknown(let unknown):
            let s = insertUnknown
            try s.bind(key, at: 1)
            try s.bind(z, at: 2)
            try s.bind(unknown.id.sqliteBytes, at: 3)
            try s.bind(Int64(unknown.kind), at: 4)
            try s.bind(unknown.payload, at: 5)
            let fields = unknown.payload.withUnsafeBytes { RowChecksum.unknown(page: page, kind: unknown.kind, payload: $0) }
            try s.bind(RowChecksum.stored(fields: fields, z: z), at: 6)
            try s.run()
        }
    }

    func delete(_ id: UUID, at placement: Placement, on page: PageRef) throws {
        let (name, _) = Self.tableAndID(placement.table)
        let s = try connection.prepare("DELETE FROM \(name) WHERE page = ?1 AND z = ?2")
        try s.bind(page.key, at: 1)
        try s.bind(placement.z, at: 2)
        try s.run()
        note(id, nil, table: placement.table, on: page)
    }

    /// Moves one row to `z`, carrying its checksum over from the old z (RowChecksum): the row's
    /// other bytes are not read, so a row that was damaged stays detectably damaged.
    func setZ(_ z: Int64, of id: UUID, on page: PageRef) throws {
        guard let from = try placement(of: id, on: page) else {
            throw SQLiteEngineError.elementNotFound(file: store.path, page: page.id, element: id)
        }
        try setZ(z, from: from, id: id, on: page)
    }

    /// Moves the row at `from` (the element `id`) to `z`.
    func setZ(_ z: Int64, from: Placement, id: UUID, on page: PageRef) throws {
        let (name, _) = Self.tableAndID(from.table)
        let read = try connection.prepare("SELECT crc FROM \(name) WHERE page = ?1 AND z = ?2")
        try read.bind(page.key, at: 1)
        try read.bind(from.z, at: 2)
        guard try read.step() else { throw SQLiteEngineError.elementNotFound(file: store.path, page: page.id, element: id) }
        let crc = RowChecksum.movingZ(UInt32(truncatingIfNeeded: read.int64(at: 0)), from: from.z, to: z)
        try read.reset()
        let s = try connection.prepare("UPDATE \(name) SET z = ?3, crc = ?4 WHERE page = ?1 AND z = ?2")
        try s.bind(page.key, at: 1)
        try s.bind(from.z, at: 2)
        try s.bind(z, at: 3)
        try s.bind(crc, at: 4)
        try s.run()
        note(id, Placement(table: from.table, z: z), table: from.table, on: page)
    }

    static func table(of element: Element) -> Placement.Table {
        switch element {
        case .stroke: return .strokes
        case .image: return .images
        case .unknown: return .unknown
        }
    }

    static func tableAndID(_ table: Placement.Table) -> (String, String) {
        switch table {
        case .strokes: return ("strokes", "stroke_id")
        case .images: return ("images", "image_id")
        case .unknown: return ("unknown_elements", "element_id")
        }
    }

    func deleteRows(of page: PageRef) throws {
        for table in ["strokes", "images", "unknown_elements"] {
            let s = try connection.prepare("DELETE FROM \(table) WHERE page = ?1")
            try s.bind(page.key, at: 1)
            try s.run()
        }
        othersByPage[page.key] = [:]
    }

    // MARK: z allocation

    /// `count` increasing z values strictly between `low` and `high` (above `low` when `high` is
    /// nil), or nil when the gap is too narrow.
    static func slots(_ count: Int, above low: Int64, below high: Int64?) -> [Int64]? {
        guard count > 0 else { return [] }
        guard let high else {
            return (1...count).map { low + SQLiteContentStore.zStep * Int64($0) }
        }
        let (gap, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow else { return nil }
        let step = gap / Int64(count + 1)
        guard step >= 1 else { return nil }
        return (1...count).map { low + step * Int64($0) }
    }

    /// Gives every element of the page the z `zStep * (i + 1)` in its current order. Rare: only
    /// when repeated inserts in one place used up a gap. Rows move through negative values so the
    /// unique (page, z) indexes never see two rows with one z.
    func renumber(_ page: PageRef) throws {
        let order = try allRows(page)
        for (i, row) in order.enumerated() {
            try setZ(-SQLiteContentStore.zStep * Int64(i + 1), from: Placement(table: row.table, z: row.z), id: row.id, on: page)
        }
        // Row by row (not one UPDATE ... SET z = -z) so each row's checksum follows its z.
        for (i, row) in order.enumerated() {
            try setZ(SQLiteContentStore.zStep * Int64(i + 1), from: Placement(table: row.table, z: -SQLiteContentStore.zStep * Int64(i + 1)),
                     id: row.id, on: page)
        }
    }

    // MARK: Changes

    func checkNew(_ elements: [Element], on page: PageRef) throws {
        var seen: Set<UUID> = []
        for element in elements {
            guard seen.insert(element.id).inserted, try placement(of: element.id, on: page) == nil else {
                throw SQLiteEngineError.duplicateElement(file: store.path, page: page.id, element: element.id)
            }
        }
    }

    func existing(_ id: UUID, on page: PageRef) throws -> Placement {
        guard let p = try placement(of: id, on: page) else {
            throw SQLiteEngineError.elementNotFound(file: store.path, page: page.id, element: id)
        }
        return p
    }

    /// The rows a move names, each once.
    private func movingRows(_ ids: [UUID], on page: PageRef) throws -> [(id: UUID, from: Placement)] {
        guard Set(ids).count == ids.count else {
            throw SQLiteEngineError.duplicateElement(file: store.path, page: page.id, element: ids.first { id in ids.filter { $0 == id }.count > 1 }!)
        }
        return try ids.map { (id: $0, from: try existing($0, on: page)) }
    }

    /// Moves `moving`, in this order, into the gap `bounds` gives once they are parked: parked at
    /// negative z first so the gap counts only the others; the page renumbered once if the gap is
    /// too narrow. Only the moved rows are written (but for that rare renumbering).
    private func move(_ moving: [(id: UUID, from: Placement)], on page: PageRef, bounds: () throws -> (Int64, Int64?)) throws {
        for (i, m) in moving.enumerated() { try setZ(-Int64(i + 1), from: m.from, id: m.id, on: page) }
        var (low, high) = try bounds()
        var z = Self.slots(moving.count, above: low, below: high)
        if z == nil {
            try renumberKeepingParked(page, parked: moving.count)
            (low, high) = try bounds()
            z = Self.slots(moving.count, above: low, below: high)
        }
        guard let z else { throw SQLiteEngineError.invalidChange("no room left in the z-order of page \(page.id)") }
        for (i, (m, z)) in zip(moving, z).enumerated() {
            try setZ(z, from: Placement(table: m.from.table, z: -Int64(i + 1)), id: m.id, on: page)
        }
    }

    func apply(_ change: SQLiteContentStore.Change, to page: PageRef) throws {
        switch change {
        case .append(let elements):
            try checkNew(elements, on: page)
            let z = Self.slots(elements.count, above: try topZ(page) ?? 0, below: nil)!
            for (element, z) in zip(elements, z) { try insert(element, z: z, on: page) }

        case .delete(let ids):
            for id in ids { try delete(id, at: try existing(id, on: page), on: page) }

        case let .replace(id, pieces):
            let old = try existing(id, on: page)
            try delete(id, at: old, on: page)
            try checkNew(pieces, on: page)
            if pieces.count == 1 {
                try insert(pieces[0], z: old.z, on: page)  // a transform keeps its place exactly
                return
            }
            try insertBetween(pieces, low: try zBelow(old.z, on: page) ?? 0, high: try zAbove(old.z, on: page), on: page,
                              retry: { [self] in (try zBelow(old.z, on: page) ?? 0, try zAbove(old.z, on: page)) })

        case let .move(ids, before):
            let moving = try movingRows(ids, on: page)
            if let before, ids.contains(before) {
                throw SQLiteEngineError.invalidChange("cannot move element \(before) below itself on page \(page.id)")
            }
            try move(moving, on: page) {
                guard let before else { return (max(try topZ(page) ?? 0, 0), nil) }
                let high = try existing(before, on: page).z
                return (max(try zBelow(high, on: page) ?? 0, 0), high)
            }

        case let .moveTo(ids, position):
            // The session moves the elements in their current relative order, not in `ids` order.
            let moving = try movingRows(ids, on: page).sorted { $0.from.z < $1.from.z }
            try move(moving, on: page) {
                // With the moved rows parked below zero, the others are the rows with z > 0.
                let high: Int64?
                switch position {
                case .front: high = nil
                case .back: high = try zAbove(0, on: page)
                case .index(let i): high = try zOfElement(at: max(i, 0), on: page)
                }
                guard let high else { return (max(try topZ(page) ?? 0, 0), nil) }
                return (max(try zBelow(high, on: page) ?? 0, 0), high)
            }

        case .setCanvasSize(let size):
            let s = try connection.prepare("UPDATE pages SET canvas_width = ?2, canvas_height = ?3, crc = ?4 WHERE id = ?1")
            try s.bind(page.id.sqliteBytes, at: 1)
            try s.bind(Int64(size.width), at: 2)
            try s.bind(Int64(size.height), at: 3)
            try s.bind(Int64(RowChecksum.page(id: page.id, width: size.width, height: size.height)), at: 4)
            try s.run()
        }
    }

    /// Inserts `pieces` between two z values, renumbering the page once if the gap is too narrow.
    private func insertBetween(_ pieces: [Element], low: Int64, high: Int64?, on page: PageRef,
                               retry: () throws -> (Int64, Int64?)) throws {
        var z = Self.slots(pieces.count, above: low, below: high)
        if z == nil {
            try renumber(page)
            let (low, high) = try retry()
            z = Self.slots(pieces.count, above: low, below: high)
        }
        guard let z else { throw SQLiteEngineError.invalidChange("no room left in the z-order of page \(page.id)") }
        for (element, z) in zip(pieces, z) { try insert(element, z: z, on: page) }
    }

    /// Renumbers the positive z values while `parked` rows sit at -1...-parked.
    private func renumberKeepingParked(_ page: PageRef, parked: Int) throws {
        // Renumbering moves rows through negative z below -parked, then flips them back.
        let order = try allRows(page).filter { $0.z > 0 }
        let base = Int64(parked) + 1
        for (i, row) in order.enumerated() {
            try setZ(-(base + SQLiteContentStore.zStep * Int64(i + 1)), from: Placement(table: row.table, z: row.z), id: row.id, on: page)
        }
        for (i, row) in order.enumerated() {
            try setZ(SQLiteContentStore.zStep * Int64(i + 1), from: Placement(table: row.table, z: -(base + SQLiteContentStore.zStep * Int64(i + 1))),
                     id: row.id, on: page)
        }
    }

    func replacePage(_ page: UUID, _ content: PageContent) throws {
        let upsert = try connection.prepare("""
            INSERT INTO pages (id, canvas_width, canvas_height, crc) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (id) DO UPDATE SET canvas_width = excluded.canvas_width, canvas_height = excluded.canvas_height,
                                           crc = excluded.crc
            """)
        try upsert.bind(page.sqliteBytes, at: 1)
        try upsert.bind(Int64(content.canvasSize.width), at: 2)
        try upsert.bind(Int64(content.canvasSize.height), at: 3)
        try upsert.bind(Int64(RowChecksum.page(id: page, width: content.canvasSize.width, height: content.canvasSize.height)), at: 4)
        try upsert.run()
        guard let key = try store.pageKey(page) else { throw SQLiteEngineError.pageNotFound(file: store.path, page: page) }
        let ref = PageRef(id: page, key: key)
        try deleteRows(of: ref)
        var seen: Set<UUID> = []
        for (i, element) in content.elements.enumerated() {
            guard seen.insert(element.id).inserted else {
                throw SQLiteEngineError.duplicateElement(file: store.path, page: page, element: element.id)
            }
            try insert(element, z: SQLiteContentStore.zStep * Int64(i + 1), on: ref, codec: .compact)
        }
    }
}
