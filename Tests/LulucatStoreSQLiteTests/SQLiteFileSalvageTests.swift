// Salvage page by page from a damaged content.sqlite (docs/sqlite-engine.md §5.5): a damaged header
// costs nothing but the header, and 8 bytes flipped every 4 KiB cost exactly the rows whose bytes
// they hit. Where each stroke's row lies is found independently of the salvage code: by searching
// the undamaged file for the stroke's id and, just after it, its compact samples.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite

@Suite struct SQLiteFileSalvageTests {
    init() { Library.enableSQLiteEngine() }
    let noAutosave = SessionOptions(autosaveDelay: nil, thumbnails: nil)

    /// A closed SQLite document: two pages of `strokes` strokes each (recoded compact at close).
    private func document(_ library: Library, strokes: Int) async throws -> (DocumentPackage, [UUID: PageContent]) {
        let package = try await library.createDocument(title: "Salvage", engine: .sqlite)
        let session = try await library.open(package.id, options: noAutosave)
        let first = await session.pageIDs()[0]
        let second = try await session.addPage()
        for (p, page) in [first, second].enumerated() {
            try await session.append((0..<strokes).map { .stroke(sampleStroke(200 + 37 * ($0 % 5), seed: 1_000 * p + $0)) }, to: page)
        }
        try await session.save()
        var contents: [UUID: PageContent] = [:]
        for page in [first, second] { contents[page] = try await session.content(of: page) }
        try await session.close()
        return (package, contents)
    }

    private func read(_ path: String) -> [UInt8] { [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }

    private func find(_ needle: [UInt8], in bytes: [UInt8], from: Int = 0, to: Int? = nil) -> [Int] {
        guard let first = needle.first else { return [] }
        var hits: [Int] = []
        let end = min(to ?? bytes.count, bytes.count) - needle.count
        var i = from
        while i <= end {
            if bytes[i] == first, Array(bytes[i..<(i + needle.count)]) == needle { hits.append(i) }
            i += 1
        }
        return hits
    }

    /// The byte range of each stroke's row in `bytes`: from 32 bytes before its id (the cell's
    /// sizes, record header, page key and z) to the end of its compact samples just after it.
    private func rowSpans(_ contents: [UUID: PageContent], in bytes: [UInt8]) -> [UUID: Range<Int>] {
        var spans: [UUID: Range<Int>] = [:]
        for content in contents.values {
            for element in content.elements {
                guard case .stroke(let stroke) = element else { continue }
                let blob = StrokeBlob.encodeCompact(stroke)
                for at in find(stroke.id.sqliteBytes, in: bytes) {
                    // tool, rgba, width, channels, sample_count, codec, crc: at most 27 bytes.
                    if let start = find(blob, in: bytes, from: at + 16, to: at + 16 + 28 + blob.count).first {
                        spans[stroke.id] = max(0, at - 32)..<(start + blob.count)
                    }
                }
            }
        }
        return spans
    }

    private func xor(_ path: String, at offsets: [Int], count: Int) throws -> Set<Int> {
        var bytes = read(path)
        var touched = Set<Int>()
        for offset in offsets {
            for i in offset..<min(offset + count, bytes.count) { bytes[i] ^= 0xFF; touched.insert(i) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return touched
    }

    @Test func aDamagedHeaderCostsNothingButTheHeader() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 30)
        _ = try xor(package.contentDatabasePath, at: [0], count: 100)
        // The page size is found without the header (its 4,096 is damaged with it).
        #expect(SQLiteFileSalvage(bytes: read(package.contentDatabasePath), knownPages: []).pageSize == 4_096)
        let damaged = read(package.contentDatabasePath)
        await #expect(throws: StoreError.self) { _ = try await library.open(package.id, options: noAutosave) }

        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.message.contains("SQLite cannot open the database") })
        #expect(findings.contains { $0.message.contains("rebuilt") })
        let recoveredCopy = read(package.recoveredPath + "/content.sqlite.1")
        let keptAside = recoveredCopy == damaged  // compared outside #expect: a diff of 100 KB is slow
        #expect(keptAside, "recovered/content.sqlite.1 has \(recoveredCopy.count) bytes, the damaged file \(damaged.count)")
        let session = try await library.open(package.id, options: noAutosave)
        var salvaged = 0
        for (page, content) in contents {
            // Every stroke, in its order; the canvas from the page's own row.
            let now = try await session.content(of: page)
            #expect(now.canvasSize == content.canvasSize)
            #expect(now.elements.map(\.id) == content.elements.map(\.id),
                    "\(now.elements.count) elements, \(content.elements.count) written; extra \(Set(now.elements.map(\.id)).subtracting(content.elements.map(\.id)).count), missing \(Set(content.elements.map(\.id)).subtracting(now.elements.map(\.id)).count); first difference at \(Array(zip(now.elements, content.elements)).firstIndex { $0.0.id != $0.1.id } ?? -1)")
            #expect(now == content)
            salvaged += now.elements.count
        }
        #expect(await !session.openReport.contains { $0.severity == .error })
        await session.abandon()
        #expect(DocumentVerifier().verify(package).filter { $0.severity == .error }.isEmpty)
        print("damaged header: \(salvaged) of \(contents.values.map(\.elements.count).reduce(0, +)) strokes salvaged")
    }

    @Test func eightBytesFlippedEvery4KiBCostOnlyTheRowsTheyHit() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let (package, contents) = try await document(library, strokes: 60)
        let path = package.contentDatabasePath
        let original = read(path)
        let spans = rowSpans(contents, in: original)
        let total = contents.values.map(\.elements.count).reduce(0, +)
        #expect(spans.count == total)  // every stroke's row was found in the file, once placed
        let touched = try xor(path, at: Array(stride(from: 1_000, to: original.count, by: 4_096)), count: 8)
        let untouched = Set(spans.filter { _, span in !span.contains { touched.contains($0) } }.keys)
        let damaged = read(path)

        let findings = try DocumentRepair().repair(package)
        #expect(findings.contains { $0.message.contains("rebuilt") })
        let recoveredCopy = read(package.recoveredPath + "/content.sqlite.1")
        let keptAside = recoveredCopy == damaged  // compared outside #expect: a diff of 100 KB is slow
        #expect(keptAside, "recovered/content.sqlite.1 has \(recoveredCopy.count) bytes, the damaged file \(damaged.count)")
        let session = try await library.open(package.id, options: noAutosave)
        var recovered = 0
        for (page, content) in contents {
            let now = try await session.content(of: page)
            let kept = Set(now.elements.map(\.id))
            // Every row the damage did not touch is back; nothing else is there; each is exact and
            // in its order.
            #expect(kept.isSuperset(of: untouched.intersection(content.elements.map(\.id))))
            #expect(now.elements == content.elements.filter { kept.contains($0.id) })
            recovered += now.elements.count
        }
        await session.abandon()
        // The loss is reported, per page, with its count.
        let lost = total - recovered
        let reported = findings.compactMap { f -> Int? in
            guard let r = f.message.range(of: #"salvaged, (\d+) lost"#, options: .regularExpression) else { return nil }
            return Int(f.message[r].split(separator: " ")[1])
        }.reduce(0, +)
        #expect(reported == lost)
        print("8 bytes flipped every 4 KiB (\(touched.count / 8) runs in \(original.count) bytes): \(recovered) of \(total) strokes salvaged, \(untouched.count) untouched by the damage, \(lost) lost and reported")
        #expect(recovered >= untouched.count)
    }
}
