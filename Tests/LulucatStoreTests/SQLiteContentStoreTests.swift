// The SQLite engine's content database: round trips, inserts that stay inserts, z-order through
// edits, one-file copies, damaged files, and a writer killed mid-transaction.

import Foundation
import Testing
import LulucatInk
import LulucatSQLite
@testable import LulucatStore

/// A fresh temporary directory per test, removed when the value goes away.
final class SQLiteTestDirectory {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("lulucat-store-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    var database: String { path(SQLiteContentStore.fileName) }
}

/// Deterministic strokes: a smooth wave whose values depend on `seed`.
func makeStroke(_ seed: Int, samples: Int = 40, channels: OptionalChannels = []) -> Stroke {
    let s = (0..<samples).map { i in
        Sample(x: Int32(seed * 100 + i * 7), y: Int32(2000 + (i * i + seed) % 300), radius: UInt16(10 + (i + seed) % 5),
               pressure: UInt16(400 + (i * 13 + seed) % 500), time: UInt32(i * 4))
    }
    func channel(_ k: Int) -> [UInt16] { (0..<samples).map { UInt16((($0 + 1) * k + seed) % 1500) } }
    return Stroke(ink: Ink(tool: Tool(rawValue: UInt8(seed % 5)), color: RGBA8(r: UInt8(seed % 256), g: 0x80, b: 0xFF, a: 0xC0),
                           width: UInt16(15 + seed)),
                  samples: s,
                  azimuth: channels.contains(.azimuth) ? channel(3) : nil,
                  altitude: channels.contains(.altitude) ? channel(5) : nil,
                  opacity: channels.contains(.opacity) ? channel(7) : nil)
}

func makeImage(_ seed: Int) -> ImageElement {
    ImageElement(assetID: UUID(), frame: QuantizedRect(x: Int32(seed), y: -5, width: 300, height: 200), rotation: -4500)
}

func makeUnknown(kind: UInt8) -> UnknownElement {
    let id = UUID()
    var payload = Data(withUnsafeBytes(of: id.uuid) { Array($0) })
    payload.append(contentsOf: [1, 2, 3, 0xFE])
    return try! UnknownElement(kind: kind, payload: payload)
}

func samplePage() -> PageContent {
    PageContent(canvasSize: .a4, elements: [
        .stroke(makeStroke(1)),
        .image(makeImage(2)),
        .stroke(makeStroke(3, channels: [.azimuth, .altitude])),
        .unknown(makeUnknown(kind: 9)),
        .stroke(makeStroke(5, samples: 0)),
        .stroke(makeStroke(6, channels: .all)),
        .stroke(makeStroke(7, samples: 1, channels: [.opacity])),
    ])
}

@Suite struct SQLiteContentStoreTests {
    @Test func pageRoundTripKeepsEverything() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID(), other = UUID()
        let content = samplePage()
        try store.replacePage(page, with: content)
        try store.replacePage(other, with: PageContent())
        #expect(try store.loadPage(page) == content)
        #expect(try store.loadPage(other) == PageContent())
        #expect(try store.pageIDs() == [page, other])
        #expect(try store.elementCounts(page) == ElementCounts(strokes: 5, images: 1, unknown: 1))
        #expect(try store.contentHash(page) == content.contentHash())
        #expect(try store.contentHash(page) != store.contentHash(other))
        try store.close()

        // Reopened from the file: the same content, the schema version and WAL mode kept.
        let reopened = try SQLiteContentStore(packageDirectory: dir.url, mode: .openExisting)
        #expect(try reopened.loadPage(page) == content)
        #expect(try reopened.connection.userVersion() == SQLiteContentStore.schemaVersion)
        #expect(try reopened.connection.journalMode() == .wal)
        #expect(try reopened.connection.pageSize() == 16_384)
        #expect(try reopened.integrityProblems() == [])
        try reopened.close()
    }

    @Test func replacePageRewritesAndDeletePageRemoves() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        try store.replacePage(page, with: samplePage())
        let smaller = PageContent(canvasSize: .letter, elements: [.stroke(makeStroke(42))])
        try store.replacePage(page, with: smaller)
        #expect(try store.loadPage(page) == smaller)
        try store.deletePage(page)
        #expect(try store.pageIDs() == [])
        #expect(throws: SQLiteEngineError.pageNotFound(file: dir.database, page: page)) { try store.loadPage(page) }
        #expect(try store.connection.scalarInt("SELECT (SELECT count(*) FROM strokes) + (SELECT count(*) FROM images)") == 0)
        try store.close()
    }

    @Test func appendIsOneInsertAndLeavesOtherRowsAlone() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        try store.replacePage(page, with: samplePage())
        let before = try rows(store)
        let changesBefore = try store.connection.scalarInt("SELECT total_changes()")
        let added = makeStroke(77, samples: 500)
        try store.applyChanges(to: page, [.append([.stroke(added)])])
        // Exactly one row written, and every earlier row keeps its rowid and z.
        #expect(try store.connection.scalarInt("SELECT total_changes()") - changesBefore == 1)
        let after = try rows(store)
        #expect(after.count == before.count + 1)
        #expect(Array(after.prefix(before.count)) == before)
        #expect(try store.loadPage(page).elements.last == .stroke(added))
        try store.close()
    }

    /// (rowid, z) of every stroke, in rowid order.
    private func rows(_ store: SQLiteContentStore) throws -> [[Int64]] {
        let s = try store.connection.prepare("SELECT rowid, z FROM strokes ORDER BY rowid")
        var out: [[Int64]] = []
        while try s.step() { out.append([s.int64(at: 0), s.int64(at: 1)]) }
        return out
    }

    @Test func orderIsKeptThroughDeletesReplacesAndMoves() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        var model = (0..<10).map { Element.stroke(makeStroke($0, samples: 5)) }
        try store.replacePage(page, with: PageContent(elements: model))
        func check() throws { #expect(try store.loadPage(page).elements.map(\.id) == model.map(\.id)) }

        // Delete two.
        let gone = [model[2].id, model[7].id]
        try store.applyChanges(to: page, [.delete(gone)])
        model.removeAll { gone.contains($0.id) }
        try check()

        // Erase splits element 3 into three pieces in its place.
        let pieces = (100..<103).map { Element.stroke(makeStroke($0, samples: 3)) }
        let split = model[3].id
        try store.applyChanges(to: page, [.replace(split, with: pieces)])
        model.replaceSubrange(3...3, with: pieces)
        try check()

        // A transform keeps the id and the place.
        var moved = makeStroke(5, samples: 5)
        moved.id = model[0].id
        moved.samples = moved.samples.map { var s = $0; s.x += 1000; return s }
        try store.applyChanges(to: page, [.replace(model[0].id, with: [.stroke(moved)])])
        model[0] = .stroke(moved)
        try check()
        #expect(try store.loadPage(page).elements[0] == .stroke(moved))

        // Move two elements below the second one, then one to the top.
        let selection = [model[6].id, model[4].id]
        try store.applyChanges(to: page, [.move(selection, before: model[1].id)])
        let picked = selection.map { id in model.first { $0.id == id }! }
        model.removeAll { selection.contains($0.id) }
        model.insert(contentsOf: picked, at: 1)
        try check()
        let first = model.removeFirst()
        try store.applyChanges(to: page, [.move([first.id], before: nil)])
        model.append(first)
        try check()

        // Appends after all that still go on top; an image and an unknown element share the order.
        let tail: [Element] = [.image(makeImage(1)), .unknown(makeUnknown(kind: 200)), .stroke(makeStroke(300))]
        try store.applyChanges(to: page, [.append(tail)])
        model += tail
        try check()
        #expect(try store.loadPage(page).elements == model)
        try store.close()
    }

    @Test func repeatedInsertsIntoOneGapRenumberThePage() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        var model: [Element] = [.stroke(makeStroke(0, samples: 2)), .image(makeImage(1)), .stroke(makeStroke(2, samples: 2))]
        try store.replacePage(page, with: PageContent(elements: model))
        // Each move halves the gap just above element 0; 16 halvings exhaust a zStep gap.
        for i in 0..<40 {
            let last = model.removeLast()
            try store.applyChanges(to: page, [.move([last.id], before: model[1].id)])
            model.insert(last, at: 1)
            if i % 7 == 0 {
                // An erase in the crowded place splits element 1 into two pieces.
                let pieces: [Element] = [.stroke(makeStroke(1000 + i, samples: 2)), .image(makeImage(i))]
                try store.applyChanges(to: page, [.replace(model[1].id, with: pieces)])
                model.replaceSubrange(1...1, with: pieces)
            }
            #expect(try store.loadPage(page).elements.map(\.id) == model.map(\.id))
        }
        #expect(try store.connection.scalarInt("SELECT min(z) FROM strokes") > 0)
        try store.close()
    }

    @Test func badChangesThrowAndLeaveThePageUnchanged() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let page = UUID()
        let content = samplePage()
        try store.replacePage(page, with: content)
        let missing = UUID()
        let file = dir.database
        // The first change applies, the second fails: the transaction takes neither.
        #expect(throws: SQLiteEngineError.elementNotFound(file: file, page: page, element: missing)) {
            try store.applyChanges(to: page, [.delete([content.elements[0].id]), .delete([missing])])
        }
        #expect(throws: SQLiteEngineError.duplicateElement(file: file, page: page, element: content.elements[1].id)) {
            try store.applyChanges(to: page, [.append([content.elements[1]])])
        }
        #expect(throws: SQLiteEngineError.pageNotFound(file: file, page: missing)) {
            try store.applyChanges(to: missing, [.append([.stroke(makeStroke(1))])])
        }
        var bad = makeStroke(9)
        bad.azimuth = [1, 2]
        #expect(throws: SQLiteEngineError.self) { try store.applyChanges(to: page, [.append([.stroke(bad)])]) }
        #expect(try store.loadPage(page) == content)
        try store.close()
    }

    @Test func savingSeveralPagesIsOneTransaction() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        let a = UUID(), b = UUID()
        let stroke = makeStroke(1), content = samplePage()
        try store.replacePage(a, with: PageContent())
        #expect(throws: SQLiteEngineError.self) {
            try store.save([.changes(a, [.append([.stroke(stroke)])]), .changes(b, [.setCanvasSize(.a4)])])
        }
        #expect(try store.loadPage(a) == PageContent())
        try store.save([.changes(a, [.append([.stroke(stroke)]), .setCanvasSize(.a4)]), .replace(b, content)])
        #expect(try store.loadPage(a) == PageContent(canvasSize: .a4, elements: [.stroke(stroke)]))
        #expect(try store.loadPage(b) == content)
        try store.close()
    }

    @Test func theDatabaseFileAloneHoldsEverythingAfterACheckpoint() throws {
        let dir = SQLiteTestDirectory()
        let store = try SQLiteContentStore(packageDirectory: dir.url)
        var pages: [UUID: PageContent] = [:]
        for i in 0..<3 {
            let content = PageContent(elements: (0..<20).map { .stroke(makeStroke(i * 100 + $0, samples: 3_400)) })
            let id = UUID()
            try store.replacePage(id, with: content)
            pages[id] = content
        }
        #expect((fileSize(dir.database + "-wal") ?? 0) > 1_000_000)
        try store.checkpointTruncate()
        #expect(fileSize(dir.database + "-wal") == 0)

        // Copy only content.sqlite elsewhere while the store is still open, and read it all back.
        let elsewhere = SQLiteTestDirectory()
        try FileManager.default.copyItem(atPath: dir.database, toPath: elsewhere.database)
        let copy = try SQLiteContentStore(packageDirectory: elsewhere.url, mode: .openExisting)
        #expect(Set(try copy.pageIDs()) == Set(pages.keys))
        for (id, content) in pages { #expect(try copy.loadPage(id) == content) }
        try copy.close()

        // The backup API gives the same one-file copy.
        try store.backup(to: elsewhere.path("backup.sqlite"))
        let backup = try SQLiteContentStore(path: elsewhere.path("backup.sqlite"), mode: .openExisting)
        for (id, content) in pages { #expect(try backup.loadPage(id) == content) }
        try backup.close()
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: dir.database + "-wal") || fileSize(dir.database + "-wal") == 0)
    }
}

func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
}
