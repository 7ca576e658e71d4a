// ReadOnlySession, the rest of issue 13 item 7: a SQLite document on a read-only volume, a SQLite
// database of schema 1 that a reader must not upgrade, and reading while a writer saves (every
// read a consistent page, never torn).
//
// Tests run as root, where chmod does not stop a write: the read-only volume is the
// `ReadOnlyVolume` double (every call that would change something fails with EROFS), through
// which the SQLite engine's I/O goes too (SQLiteFileSystemVFS).

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
import LulucatStoreTesting
@testable import LulucatStore
@testable import LulucatStoreSQLite

@Suite struct ReadOnlySessionSQLiteTests {
    init() { Library.enableSQLiteEngine() }
    let noAutosave = SessionOptions(autosaveDelay: nil, thumbnails: nil)

    /// Every file under `path` with its bytes.
    func tree(_ path: String) -> [String: Data] {
        var out: [String: Data] = [:]
        for name in FileManager.default.subpaths(atPath: path) ?? [] {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDir), !isDir.boolValue {
                out[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
            }
        }
        return out
    }

    @Test func aSQLiteDocumentReadsOnAReadOnlyVolume() async throws {
        let tmp = TemporaryFolder()
        let writable = Library(root: tmp.path)
        let package = try await writable.createDocument(title: "On a CD", engine: .sqlite)
        let writer = try await writable.open(package.id, options: noAutosave)
        let page = await writer.pageIDs()[0]
        let second = try await writer.addPage()
        let strokes = (0..<8).map { sampleStroke(30, seed: $0) }
        for s in strokes { try await writer.append(s, to: page) }
        let other = sampleStroke(12, seed: 99)
        try await writer.append(other, to: second)
        try await writer.close()
        let before = tree(package.path)

        let volume = Library(root: tmp.path, fileSystem: ReadOnlyVolume())
        // A session for writing cannot start there...
        await #expect(throws: StoreError.self) { _ = try await volume.open(package.id, options: noAutosave) }
        // ...a reader can, and reads every page.
        let reader = try await volume.openReadOnly(package.id)
        #expect(await reader.engineKind == .sqlite)
        #expect(try await reader.content(of: page).elements == strokes.map { .stroke($0) })
        #expect(try await reader.content(of: second).elements == [.stroke(other)])
        await reader.close()
        #expect(tree(package.path) == before)
    }

    /// Replaces a SQLite document's database by one of schema 1 (as a version-1 build wrote it:
    /// no crc or codec column, 16 KiB pages) holding `strokes` on `page`.
    func writeSchemaOne(_ package: DocumentPackage, page: UUID, canvas: QuantizedSize, strokes: [Stroke]) throws {
        let path = package.contentDatabasePath
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let db = try Connection(path: path)
        // The statements live in this function only: all finalized before the close.
        func fill() throws {
        try db.execute("PRAGMA page_size = 16384; PRAGMA journal_mode = WAL")
        try db.execute(SQLiteContentStore.migrations[0])
        try db.setUserVersion(1)
        let p = try db.prepare("INSERT INTO pages VALUES (?1, ?2, ?3)")
        try p.bind(page.sqliteBytes, at: 1)
        try p.bind(Int64(canvas.width), at: 2)
        try p.bind(Int64(canvas.height), at: 3)
        try p.run()
        for (i, s) in strokes.enumerated() {
            let q = try db.prepare("INSERT INTO strokes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
            let c = s.ink.color
            try q.bind(page.sqliteBytes, at: 1)
            try q.bind(SQLiteContentStore.zStep * Int64(i + 1), at: 2)
            try q.bind(s.id.sqliteBytes, at: 3)
            try q.bind(Int64(s.ink.tool.rawValue), at: 4)
            try q.bind(Int64(c.r) << 24 | Int64(c.g) << 16 | Int64(c.b) << 8 | Int64(c.a), at: 5)
            try q.bind(Int64(s.ink.width), at: 6)
            try q.bind(Int64(s.channels.rawValue), at: 7)
            try q.bind(Int64(s.samples.count), at: 8)
            try q.bind(StrokeBlob.encode(s), at: 9)
            try q.run()
        }
        }
        try fill()
        try db.execute("PRAGMA journal_mode = DELETE")  // one file, as a closed document is
        try db.close()
    }

    func userVersion(_ path: String) throws -> Int64 {
        let db = try Connection(path: path, flags: [.readOnly])
        defer { try? db.close() }
        return try db.userVersion()
    }

    @Test(arguments: [false, true])
    func aReaderDoesNotUpgradeASchemaOneDatabase(onReadOnlyVolume: Bool) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Old", engine: .sqlite)
        let session = try await library.open(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        let strokes = (0..<6).map { sampleStroke(25, seed: $0) }
        for s in strokes { try await session.append(s, to: page) }
        let canvas = try await session.content(of: page).canvasSize
        try await session.close()
        try writeSchemaOne(package, page: page, canvas: canvas, strokes: strokes)
        #expect(try userVersion(package.contentDatabasePath) == 1)
        let before = tree(package.path)

        let place = onReadOnlyVolume ? Library(root: tmp.path, fileSystem: ReadOnlyVolume()) : library
        let reader = try await place.openReadOnly(package.id)
        #expect(try await reader.content(of: page).elements == strokes.map { .stroke($0) })
        try await reader.reload()
        #expect(try await reader.content(of: page).strokes.count == strokes.count)
        await reader.close()
        // Not a byte changed: still schema 1, no WAL left, the same files.
        #expect(try userVersion(package.contentDatabasePath) == 1)
        #expect(tree(package.path) == before)

        // A session for writing upgrades it, as before (the reader's copy was its own).
        if !onReadOnlyVolume {
            let writer = try await library.open(package.id, options: noAutosave)
            #expect(try await writer.content(of: page).elements == strokes.map { .stroke($0) })
            try await writer.close()
            #expect(try userVersion(package.contentDatabasePath) == SQLiteContentStore.schemaVersion)
        }
    }

    /// `lnote verify` (DocumentVerifier) opens the database as a reader does: a schema-1 database is
    /// checked in an in-memory copy and left byte for byte as it was (it used to be upgraded in
    /// place), and what verify reports is still right: clean when the database agrees with
    /// document.json, an element-count error when it holds one stroke fewer.
    @Test(arguments: [false, true])
    func verifyLeavesASchemaOneDatabaseUnchanged(oneStrokeMissing: Bool) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Old", engine: .sqlite)
        let session = try await library.open(package.id, options: noAutosave)
        let page = await session.pageIDs()[0]
        let strokes = (0..<6).map { sampleStroke(25, seed: $0) }
        for s in strokes { try await session.append(s, to: page) }
        let canvas = try await session.content(of: page).canvasSize
        try await session.close()
        try writeSchemaOne(package, page: page, canvas: canvas, strokes: oneStrokeMissing ? Array(strokes.dropLast()) : strokes)
        #expect(try userVersion(package.contentDatabasePath) == 1)
        let before = tree(package.path)
        #expect(before["content.sqlite"] != nil)

        let findings = DocumentVerifier().verify(package)
        let errors = findings.filter { $0.severity == .error }
        if oneStrokeMissing {
            #expect(errors.count == 1, "\(findings)")
            #expect(errors.first?.message.contains("holds 5 elements but document.json says 6") == true, "\(findings)")
        } else {
            #expect(errors.isEmpty, "\(findings)")
        }
        // Not a byte changed: still schema 1, no WAL or journal left, the same files.
        #expect(try userVersion(package.contentDatabasePath) == 1)
        #expect(tree(package.path) == before)
    }

    /// A writer saves batches of strokes while a reader of its own library reads the page in a
    /// bounded loop: every read is exactly the strokes of some save (a prefix of what the writer
    /// appends, a whole number of batches), never torn, never going back.
    @Test(arguments: EngineKind.allCases)
    func readingWhileAnotherLibraryWritesSeesWholeSavesOnly(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let writing = Library(root: tmp.path)
        let package = try await writing.createDocument(title: "Live", engine: engine)
        let writer = try await writing.open(package.id, options: noAutosave)
        let page = await writer.pageIDs()[0]
        let batch = 3, saves = 60
        let all = (0..<(batch * saves)).map { sampleStroke(20, seed: $0) }
        try await writer.append(Array(all[0..<batch]).map { .stroke($0) }, to: page)
        try await writer.save()

        // Another Library instance, with its own file system value: as another process would.
        let reading = Library(root: tmp.path, fileSystem: PosixFileSystem())
        let reader = try await reading.openReadOnly(package.id)
        // Halfway the writer waits (600 s at most) until the reader has read that save: under a
        // parallel run the writer task could otherwise make every save before the first read.
        let half = saves / 2, heldFlag = tmp.path + "/reader-was-here"
        let writing1 = Task {
            for n in 1..<saves {
                try await writer.append(Array(all[(n * batch)..<((n + 1) * batch)]).map { .stroke($0) }, to: page)
                try await writer.save()
                if n + 1 == half {
                    let until = Date().addingTimeInterval(600)
                    while !FileManager.default.fileExists(atPath: heldFlag), Date() < until { try await Task.sleep(for: .milliseconds(5)) }
                }
            }
        }
        var lastCount = 0
        var reads = 0
        var distinct = Set<Int>()
        let deadline = Date().addingTimeInterval(600)
        // Bounded in time and reads; ends once the reader has seen the writer's last save.
        while Date() < deadline, reads < 1_000_000 {
            let elements = try await reader.content(of: page).elements
            reads += 1
            #expect(elements.count % batch == 0, "a torn read of \(elements.count) elements")
            #expect(elements.count >= lastCount, "went back from \(lastCount) to \(elements.count)")
            #expect(elements == all.prefix(elements.count).map { .stroke($0) }, "read \(reads) is not a prefix of what was saved")
            lastCount = elements.count
            distinct.insert(elements.count)
            if lastCount >= half * batch, !FileManager.default.fileExists(atPath: heldFlag) {
                #expect(FileManager.default.createFile(atPath: heldFlag, contents: nil), "the flag for the writer could not be made")
            }
            if lastCount == all.count { break }
            try await Task.sleep(for: .milliseconds(1))  // the writer gets its turn on a loaded machine
        }
        try await writing1.value
        #expect(try await reader.content(of: page).elements == all.map { .stroke($0) })
        #expect(distinct.count >= 2 && distinct.contains(half * batch), "the reader saw only \(distinct) (the loop did not overlap the writer)")
        await reader.close()
        try await writer.close()
    }
}
