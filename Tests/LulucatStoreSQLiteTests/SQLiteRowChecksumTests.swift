// Schema version 2's row checksums: the exact bytes they cover, every kind of row refused when one
// of its bytes changes (through SQL and in the file itself), edits that keep them right, and a
// version-1 database migrated with its rows checksummed.

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
import LulucatSQLite
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreSQLite

/// A Python function that inserts a version-2 stroke row with its checksum (codec fixed16), for the
/// tests that use Python's sqlite3 as a foreign writer. CRC32C in pure Python, as the doc defines it.
let pythonStrokeRowWriter = """
    import struct
    _T = []
    for _i in range(256):
        _c = _i
        for _ in range(8): _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _T.append(_c)
    def crc32c(data, crc=0):
        crc ^= 0xFFFFFFFF
        for b in data: crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF
    def insert_stroke(db, page, z, sid, blob):
        n = len(blob) // 16
        fields = crc32c(b"S" + page + sid + struct.pack("<BIHBBI", 0, 255, 20, 0, 0, n) + blob)
        crc = fields ^ crc32c(struct.pack("<q", z))
        db.execute("INSERT INTO strokes (page, z, stroke_id, tool, rgba, width, channels, sample_count, samples, codec, crc) VALUES ((SELECT key FROM pages WHERE id = ?),?,?,0,255,20,0,?,?,0,?)",
                   (page, z, sid, n, blob, crc))

    """

@Suite struct SQLiteRowChecksumTests {
    init() { Library.enableSQLiteEngine() }
    private func storeWithSamplePage(_ dir: SQLiteTestDirectory) throws -> (SQLiteContentStore, UUID, PageContent) {
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        let content = samplePage()
        try store.replacePage(page, with: content)
        return (store, page, content)
    }

    private func storedCRC(_ store: SQLiteContentStore, _ sql: String) throws -> Int64 {
        let s = try store.connection.prepare(sql)
        #expect(try s.step())
        return s.int64(at: 0)
    }

    /// The checksum of each kind of row, recomputed here from the layout docs/sqlite-engine.md §3.2
    /// gives, byte by byte (not through RowChecksum).
    @Test func theChecksumCoversTheDocumentedBytes() throws {
        let dir = SQLiteTestDirectory()
        let (store, page, content) = try storeWithSamplePage(dir)
        defer { try? store.close() }
        func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        func zPart(_ z: Int64) -> UInt32 { CRC32C.checksum(le(z)) }
        let pageBytes = page.sqliteBytes

        // pages: "P", id, canvas width, canvas height (Int32 LE); no z.
        let size = content.canvasSize
        #expect(try storedCRC(store, "SELECT crc FROM pages") ==
                Int64(CRC32C.checksum([0x50] + pageBytes + le(size.width) + le(size.height))))

        // strokes: "S", page id, stroke id, tool, rgba, width, channels, codec, sample count, samples.
        let stroke = content.strokes[1]  // the one with azimuth and altitude
        let c = stroke.ink.color
        let rgba = UInt32(c.r) << 24 | UInt32(c.g) << 16 | UInt32(c.b) << 8 | UInt32(c.a)
        var strokeBytes: [UInt8] = [0x53] + pageBytes + stroke.id.sqliteBytes + [stroke.ink.tool.rawValue] + le(rgba)
        // A page written whole stores compact samples (codec 1)...
        strokeBytes += le(stroke.ink.width) + [stroke.channels.rawValue, 1] + le(UInt32(stroke.samples.count))
        strokeBytes += StrokeBlob.encodeCompact(stroke)
        let z = SQLiteContentStore.zStep * 3
        #expect(try storedCRC(store, "SELECT crc FROM strokes WHERE z = \(z)") == Int64(CRC32C.checksum(strokeBytes) ^ zPart(z)))
        // ...an appended one fixed16 (codec 0), until compactSamples recodes it.
        let appended = makeStroke(77, channels: [.opacity])
        try store.applyChanges(to: page, [.append([.stroke(appended)])])
        let za = SQLiteContentStore.zStep * Int64(content.elements.count + 1)
        let a = appended.ink.color
        var appendedBytes: [UInt8] = [0x53] + pageBytes + appended.id.sqliteBytes + [appended.ink.tool.rawValue]
        appendedBytes += le(UInt32(a.r) << 24 | UInt32(a.g) << 16 | UInt32(a.b) << 8 | UInt32(a.a)) + le(appended.ink.width)
        appendedBytes += [appended.channels.rawValue, 0] + le(UInt32(appended.samples.count)) + StrokeBlob.encode(appended)
        #expect(try storedCRC(store, "SELECT crc FROM strokes WHERE z = \(za)") == Int64(CRC32C.checksum(appendedBytes) ^ zPart(za)))
        try store.applyChanges(to: page, [.delete([appended.id])])

        // images: "I", page id, image id, asset id, x, y, width, height, rotation (Int32 LE).
        let image = content.images[0]
        let imageBytes: [UInt8] = [0x49] + pageBytes + image.id.sqliteBytes + image.assetID.sqliteBytes
            + le(image.frame.x) + le(image.frame.y) + le(image.frame.width) + le(image.frame.height) + le(image.rotation)
        #expect(try storedCRC(store, "SELECT crc FROM images") == Int64(CRC32C.checksum(imageBytes) ^ zPart(SQLiteContentStore.zStep * 2)))

        // unknown elements: "U", page id, kind, payload (which starts with the element id).
        guard case .unknown(let unknown) = content.elements[3] else { Issue.record("sample page changed"); return }
        let unknownBytes: [UInt8] = [0x55] + pageBytes + [unknown.kind] + [UInt8](unknown.payload)
        #expect(try storedCRC(store, "SELECT crc FROM unknown_elements") == Int64(CRC32C.checksum(unknownBytes) ^ zPart(SQLiteContentStore.zStep * 4)))
        #expect(try store.loadPage(page) == content)
    }

    /// Every column of every kind of content row, changed through SQL as a foreign or buggy writer
    /// would, is caught by the checksum and named with its page and element.
    @Test func aChangedFieldOfAnyRowIsAChecksumMismatchNamingPageAndElement() throws {
        let edits: [(String, String, Int?)] = [
            ("UPDATE strokes SET width = width + 1 WHERE z = 65536", "strokes", 0),
            ("UPDATE strokes SET rgba = (rgba | 1) - (rgba & 1) WHERE z = 65536", "strokes", 0),
            ("UPDATE strokes SET tool = (tool + 1) % 5 WHERE z = 196608", "strokes", 2),
            ("UPDATE strokes SET z = 65537 WHERE z = 65536", "strokes", 0),
            ("UPDATE strokes SET samples = CAST(substr(samples, 1, 20) || iif(substr(samples, 21, 1) = x'00', x'01', x'00') || substr(samples, 22) AS BLOB) WHERE z = 65536", "strokes", 0),
            ("UPDATE strokes SET crc = (crc | 4) - (crc & 4) WHERE z = 196608", "strokes", 2),
            ("UPDATE strokes SET stroke_id = randomblob(16) WHERE z = 65536", "strokes", nil),
            ("UPDATE images SET x = x + 10", "images", 1),
            ("UPDATE images SET rotation = 0", "images", 1),
            ("UPDATE images SET asset_id = randomblob(16)", "images", 1),
            ("UPDATE unknown_elements SET payload = CAST(substr(payload, 1, 17) || x'EE' || substr(payload, 19) AS BLOB)", "unknown_elements", 3),
            ("UPDATE unknown_elements SET kind = 10", "unknown_elements", 3),
            ("UPDATE pages SET canvas_width = canvas_width + 1", "pages", nil),
        ]
        for (sql, table, index) in edits {
            let dir = SQLiteTestDirectory()
            let (store, page, content) = try storeWithSamplePage(dir)
            try store.connection.execute(sql)
            let error = #expect(throws: SQLiteEngineError.self, "\(sql)") { try store.loadPage(page) }
            guard case let .checksumMismatch(file, t, p, element, _) = error else {
                Issue.record("\(sql): got \(String(describing: error))"); try store.close(); continue
            }
            #expect(file == dir.database)
            #expect(t == table, "\(sql)")
            #expect(p == page, "\(sql)")
            if let index { #expect(element == content.elements[index].id, "\(sql)") }
            if table == "pages" { #expect(element == nil) }
            #expect(error?.description.contains(page.uuidString) == true)
            try store.close()
        }
    }

    /// The bytes of the file itself: runs of flipped bytes inside a stroke's samples BLOB (where
    /// SQLite itself checks nothing) are never read back as a valid page. Seeded, bounded.
    @Test func flippedBytesInsideABlobInTheFileAreNeverReadBackAsValid() throws {
        var random = SeededRandom(seed: 0x15C)
        var detected = 0
        for trial in 0..<40 {
            let dir = SQLiteTestDirectory()
            let store = try SQLiteContentStore(packageDirectory: dir.url)
            let page = UUID()
            let strokes = (0..<6).map { makeStroke($0 + trial * 10, samples: 1_500) }
            let content = PageContent(elements: strokes.map { .stroke($0) })
            try store.replacePage(page, with: content)
            try store.close()
            // Find a stroke's samples in the file (its first 64 bytes are unique to it) and flip a
            // run of 1...64 bytes inside its BLOB.
            var file = try Data(contentsOf: URL(fileURLWithPath: dir.database))
            let victim = strokes[Int(random.next() % 6)]
            let blob = Data(StrokeBlob.encodeCompact(victim))  // a page written whole is compact
            guard let found = file.range(of: blob.prefix(64)) else { Issue.record("BLOB not found in the file"); continue }
            // Stay inside the BLOB (a compact one is a few hundred bytes, within its row's cell).
            let length = 1 + Int(random.next() % 64)
            let start = found.lowerBound + Int(random.next() % UInt64(max(1, blob.count - length)))
            for i in start..<min(start + length, file.count) { file[i] ^= UInt8(1 + random.next() % 255) }
            try file.write(to: URL(fileURLWithPath: dir.database))

            let reopened = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
            do {
                _ = try reopened.loadPage(page)
                Issue.record("trial \(trial): a page with damaged samples was read back as valid")
            } catch {
                guard case let .checksumMismatch(_, table, p, element, _) = error else {
                    Issue.record("trial \(trial): got \(error)"); try? reopened.close(); continue
                }
                #expect(table == "strokes")
                #expect(p == page)
                #expect(element == victim.id)
                detected += 1
            }
            try? reopened.close()
        }
        #expect(detected == 40)
    }

    /// Moves, reorders down to renumbering, erases that split a stroke, transforms, a canvas
    /// resize: every edit that changes a row leaves its checksum right.
    @Test func editsKeepEveryChecksumRight() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        var content = PageContent(elements: (0..<4).map { .stroke(makeStroke($0)) } + [.image(makeImage(9))])
        try store.replacePage(page, with: content)
        let ids = content.elements.map(\.id)
        // Moving the top element below the second one, 20 times, uses up the gap: renumbering.
        for _ in 0..<20 {
            let top = content.elements.last!.id
            try store.applyChanges(to: page, [.move([top], before: content.elements[1].id)])
            content.elements.insert(content.elements.removeLast(), at: 1)
        }
        try store.applyChanges(to: page, [.move([ids[0]], before: nil)])
        content.elements.append(content.elements.removeFirst())
        let pieces = [Element.stroke(makeStroke(40)), .stroke(makeStroke(41))]
        let at = content.elements.firstIndex { $0.id == ids[2] }!
        try store.applyChanges(to: page, [.replace(ids[2], with: pieces), .setCanvasSize(.a4)])
        content.elements.replaceSubrange(at...at, with: pieces)
        content.canvasSize = .a4
        #expect(try store.loadPage(page) == content)
        try store.close()
        let reopened = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try reopened.loadPage(page) == content)
        try reopened.close()
    }

    /// A database written by a version-1 build (no crc or codec column) opens: the migration adds
    /// both columns and checksums every row in one transaction; the content reads back unchanged.
    @Test func aVersionOneDatabaseIsMigratedWithItsRowsChecksummed() throws {
        let dir = SQLiteTestDirectory()
        let page = UUID()
        let content = samplePage()
        let db = try Connection(path: dir.database)
        func writeVersionOne() throws {
            try db.execute("PRAGMA page_size = 16384; PRAGMA journal_mode = WAL")
            try db.execute(SQLiteContentStore.migrations[0])
            try db.setUserVersion(1)
            let p = try db.prepare("INSERT INTO pages VALUES (?1, ?2, ?3)")
            try p.bind(page.sqliteBytes, at: 1)
            try p.bind(Int64(content.canvasSize.width), at: 2)
            try p.bind(Int64(content.canvasSize.height), at: 3)
            try p.run()
            for (i, element) in content.elements.enumerated() {
                let z = SQLiteContentStore.zStep * Int64(i + 1)
                switch element {
                case .stroke(let s):
                    let q = try db.prepare("INSERT INTO strokes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
                    let c = s.ink.color
                    for (k, v) in [page.sqliteBytes, s.id.sqliteBytes].enumerated() { try q.bind(v, at: [1, 3][k]) }
                    try q.bind(z, at: 2)
                    try q.bind(Int64(s.ink.tool.rawValue), at: 4)
                    try q.bind(Int64(c.r) << 24 | Int64(c.g) << 16 | Int64(c.b) << 8 | Int64(c.a), at: 5)
                    try q.bind(Int64(s.ink.width), at: 6)
                    try q.bind(Int64(s.channels.rawValue), at: 7)
                    try q.bind(Int64(s.samples.count), at: 8)
                    try q.bind(StrokeBlob.encode(s), at: 9)
                    try q.run()
                case .image(let m):
                    let q = try db.prepare("INSERT INTO images VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
                    try q.bind(page.sqliteBytes, at: 1); try q.bind(z, at: 2)
                    try q.bind(m.id.sqliteBytes, at: 3); try q.bind(m.assetID.sqliteBytes, at: 4)
                    try q.bind(Int64(m.frame.x), at: 5); try q.bind(Int64(m.frame.y), at: 6)
                    try q.bind(Int64(m.frame.width), at: 7); try q.bind(Int64(m.frame.height), at: 8)
                    try q.bind(Int64(m.rotation), at: 9)
                    try q.run()
                case .unknown(let u):
                    let q = try db.prepare("INSERT INTO unknown_elements VALUES (?1, ?2, ?3, ?4, ?5)")
                    try q.bind(page.sqliteBytes, at: 1); try q.bind(z, at: 2)
                    try q.bind(u.id.sqliteBytes, at: 3); try q.bind(Int64(u.kind), at: 4); try q.bind(u.payload, at: 5)
                    try q.run()
                }
            }
        }
        try writeVersionOne()
        try db.close()
        let store = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try store.connection.userVersion() == SQLiteContentStore.schemaVersion)
        #expect(try store.loadPage(page) == content)
        #expect(try store.integrityProblems() == [])
        // From now on the old rows are checked too.
        try store.connection.execute("UPDATE strokes SET width = width + 1 WHERE z = 65536")
        #expect(throws: SQLiteEngineError.self) { try store.loadPage(page) }
        try store.close()
    }

    /// `lnote verify` reads every page: a damaged row is an error naming the page and the element.
    @Test func verifyReportsADamagedRowWithPageAndElement() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Checked", engine: .sqlite)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let strokes = (0..<3).map { sampleStroke(200, seed: $0) }
        for s in strokes { try await session.append(s, to: page) }
        try await session.close()
        #expect(DocumentVerifier().verify(package).isEmpty)
        let db = try Connection(path: package.contentDatabasePath)
        try db.execute("UPDATE strokes SET samples = CAST(substr(samples, 1, 99) || iif(substr(samples, 100, 1) = x'7F', x'01', x'7F') || substr(samples, 101) AS BLOB) WHERE z = 131072")
        try db.close()
        let errors = DocumentVerifier().verify(package).filter { $0.severity == .error }
        // The damaged row, named with page and element, and the count it cost.
        #expect(errors.count == 2)
        #expect(errors.contains { $0.message.contains(page.uuidString) && $0.message.contains(strokes[1].id.uuidString)
                && $0.message.contains("checksum") && $0.message.contains("2 elements salvaged; 1 lost") })
        #expect(errors.contains { $0.message.contains("holds 2 elements but document.json says 3") })
    }
}

/// The compact column codec: a save writes fixed16 rows, `compactSamples` (at idle and close)
/// recodes them losslessly and gives the freed pages back; fixed16 rows stay readable.
@Suite struct SQLiteCompactSamplesTests {
    init() { Library.enableSQLiteEngine() }
    private func codecs(_ store: SQLiteContentStore) throws -> [Int64] {
        let s = try store.connection.prepare("SELECT codec FROM strokes ORDER BY z")
        var out: [Int64] = []
        while try s.step() { out.append(s.int64(at: 0)) }
        return out
    }

    @Test func appendedRowsAreRecodedLosslesslyAndTheFileShrinks() throws {
        let dir = SQLiteTestDirectory()
        var configuration = SQLiteContentStore.Configuration()
        configuration.compactsAtClose = false
        let store = try SQLiteContentStore(packageDirectory: dir.url, configuration: configuration)
        let page = UUID()
        try store.replacePage(page, with: PageContent())
        let strokes = (0..<20).map { makeStroke($0, samples: 3_400, channels: $0 % 3 == 0 ? [.azimuth] : []) }
        try store.applyChanges(to: page, [.append(strokes.map { .stroke($0) })])
        #expect(try codecs(store) == Array(repeating: 0, count: 20))
        try store.checkpointTruncate()
        let before = fileSize(dir.database) ?? 0
        #expect(before > 20 * 3_400 * 16)

        // A damaged fixed16 row is left exactly as it is: recoding would give it a valid checksum.
        try store.connection.execute("UPDATE strokes SET width = width + 1 WHERE z = 65536 * 5")
        #expect(try store.compactSamples() == 19)
        #expect(try codecs(store) == (0..<20).map { $0 == 4 ? 0 : 1 })
        #expect(throws: SQLiteEngineError.self) { try store.loadPage(page) }
        try store.connection.execute("UPDATE strokes SET width = width - 1 WHERE z = 65536 * 5")
        #expect(try store.loadPage(page) == PageContent(elements: strokes.map { .stroke($0) }))
        #expect(try store.compactSamples() == 1)
        #expect(try store.compactSamples() == 0)
        #expect(try store.freePageCount() == 0)
        try store.checkpointTruncate()
        let after = fileSize(dir.database) ?? 0
        // 16 KiB pages: the 14 tables and indexes alone take 229,376 bytes of the file.
        #expect(after * 3 < before, "\(before) -> \(after) bytes")
        try store.close()
        let reopened = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try reopened.loadPage(page) == PageContent(elements: strokes.map { .stroke($0) }))
        #expect(try reopened.integrityProblems() == [])
        try reopened.close()
    }

    /// Through a session: its saves are fixed16 rows; closing the document leaves only compact rows.
    @Test func aClosedDocumentHoldsOnlyCompactRows() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Small", engine: .sqlite)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let strokes = (0..<5).map { sampleStroke(400, seed: $0) }
        for s in strokes { try await session.append(s, to: page) }
        try await session.save()
        let open = try SQLiteContentStore(path: package.contentDatabasePath, mode: .openExisting)
        #expect(try codecs(open) == Array(repeating: 0, count: 5))
        open.closeWithoutCheckpoint()
        try await session.close()
        let closed = try SQLiteContentStore(path: package.contentDatabasePath, mode: .openExisting)
        #expect(try codecs(closed) == Array(repeating: 1, count: 5))
        #expect(try closed.loadPage(page).strokes == strokes)
        closed.closeWithoutCheckpoint()
        #expect(DocumentVerifier().verify(package).isEmpty)
    }
}
