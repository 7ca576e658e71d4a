import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
import LulucatStoreTesting
@testable import LulucatStore

/// `DocumentJSONWriter` writes document.json's page list by hand and keeps each page's object
/// between writes: its bytes must be exactly JSONEncoder's (`PackageJSON.encode`) after any
/// sequence of changes.
@Suite struct DocumentJSONWriterTests {
    @Test func writesTheDocumentedExample() throws {
        var writer = DocumentJSONWriter()
        let bytes = writer.encode(PackageJSONTests.sample)
        #expect(bytes == PackageJSON.encode(PackageJSONTests.sample))
        // Exactly the example in docs/package-format.md.
        let docs = try String(contentsOfFile: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/package-format.md").path, encoding: .utf8)
        let start = try #require(docs.range(of: "```json\n"))
        let end = try #require(docs.range(of: "\n```", range: start.upperBound..<docs.endIndex))
        #expect(String(decoding: bytes, as: UTF8.self) == String(docs[start.upperBound..<end.lowerBound]) + "\n")
    }

    static func uuid(_ rng: inout SeededRandom) -> UUID {
        let a = rng.next(), b = rng.next()
        return withUnsafeBytes(of: (a, b)) { raw in
            UUID(uuid: raw.load(as: uuid_t.self))
        }
    }

    static func time(_ rng: inout SeededRandom) -> Date {
        // Mostly on the millisecond grid (what the store makes), sometimes not (truncated alike).
        let ms = Double(rng.next() % 8_000_000_000_000) - 1_000_000_000_000
        return Date(timeIntervalSince1970: (rng.next() % 4 == 0 ? ms + rng.unit() : ms) / 1000)
    }

    static func page(_ rng: inout SeededRandom) -> PageEntry {
        let sizes: [Int32] = [0, 1, 6120, 7920, Int32.max]
        let canvas = QuantizedSize(width: sizes[Int(rng.next() % 5)], height: Int32(rng.next() % 100_000))
        let assets = (0..<Int(rng.next() % 4)).map { _ in uuid(&rng) }.sortedByUUIDString()
        let counts = [0, 1, 99, 1_000_000, Int.max]
        return PageEntry(id: uuid(&rng), canvas: canvas, created: time(&rng), modified: time(&rng),
                         elementCount: counts[Int(rng.next() % 5)], assets: assets)
    }

    /// Titles with everything JSON escapes, and one that holds the text the writer looks for.
    static let titles = ["Lecture notes", "", "\"pages\" : [\n\n  ]", "tab\there \\ \"quoted\" /slash/",
                         "\u{0}\u{1}\u{1F}\u{7F} é 日本 🐈\u{2028}", String(repeating: "x", count: 4096)]

    @Test func randomChangesKeepTheBytesJSONEncoderWrites() throws {
        var rng = SeededRandom(seed: 34)
        for round in 0..<12 {
            var doc = DocumentMetadata(id: Self.uuid(&rng), title: Self.titles[round % Self.titles.count],
                                       created: Self.time(&rng), modified: Self.time(&rng),
                                       engine: [.snapshot, .journal, .sqlite][round % 3],
                                       codec: round % 2 == 0 ? .compact : .fixed16,
                                       pages: (0..<Int(rng.next() % 30)).map { _ in Self.page(&rng) })
            if round % 3 == 1 {
                // Keys whose order differs between a plain and a numeric comparison.
                doc.assetChecksums = Dictionary(uniqueKeysWithValues: (0..<5).map { _ in
                    (Self.uuid(&rng).uuidString, "crc32c:0000000\(rng.next() % 10)")
                })
            }
            var writer = DocumentJSONWriter()
            for _ in 0..<60 {
                let bytes = writer.encode(doc)
                #expect(bytes == PackageJSON.encode(doc))
                // And they read back as the document (a time off the millisecond grid as truncated).
                #expect(PackageJSON.encode(try PackageJSON.decodeDocument(bytes, path: "document.json")) == bytes)
                // One change, as a session makes them, then the next write.
                let n = doc.pages.count
                switch rng.next() % 7 {
                case 0: doc.pages.insert(Self.page(&rng), at: Int(rng.next() % UInt64(n + 1)))
                case 1 where n > 0: doc.pages.remove(at: Int(rng.next() % UInt64(n)))
                case 2 where n > 0: doc.pages.insert(doc.pages.remove(at: Int(rng.next() % UInt64(n))), at: Int(rng.next() % UInt64(n)))
                case 3 where n > 0:
                    let i = Int(rng.next() % UInt64(n))
                    doc.pages[i].elementCount = Int(rng.next() % 1000)
                    doc.pages[i].modified = Self.time(&rng)
                case 4 where n > 0:
                    let i = Int(rng.next() % UInt64(n))
                    doc.pages[i].assets = (doc.pages[i].assets + [Self.uuid(&rng)]).sortedByUUIDString()
                case 5 where n > 0:
                    let i = Int(rng.next() % UInt64(n))
                    doc.pages[i].width = Int32(rng.next() % 10_000)
                default:
                    doc.title = Self.titles[Int(rng.next() % UInt64(Self.titles.count))]
                    doc.modified = Self.time(&rng)
                }
            }
        }
    }

    /// Objects of pages no longer listed are dropped now and then; the bytes stay right across it.
    @Test func manyRemovalsAndAdditions() throws {
        var rng = SeededRandom(seed: 2)
        var doc = DocumentMetadata(id: Self.uuid(&rng), title: "t", created: Self.time(&rng), modified: Self.time(&rng),
                                   pages: (0..<100).map { _ in Self.page(&rng) })
        var writer = DocumentJSONWriter()
        for step in 0..<400 {
            if step % 2 == 0, !doc.pages.isEmpty { doc.pages.removeFirst() } else { doc.pages.append(Self.page(&rng)) }
            if step < 100 { doc.pages.removeAll { _ in rng.next() % 9 == 0 } }
            #expect(writer.encode(doc) == PackageJSON.encode(doc))
        }
        doc.pages = []
        #expect(writer.encode(doc) == PackageJSON.encode(doc))
    }

    /// A session's page-structure changes, edits, flushes and close leave document.json with the
    /// bytes JSONEncoder writes for the document the session holds.
    @Test func aSessionWritesTheBytesJSONEncoderWrites() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Pages \"quoted\"")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        func onDisk() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: package.documentPath))) }
        var added: [UUID] = []
        for k in 0..<6 { added.append(try await session.addPage(at: k % 2 == 0 ? nil : 0)) }
        #expect(try onDisk() == PackageJSON.encode(await session.document))
        try await session.movePage(added[2], to: 0)
        try await session.removePage(added[4])
        #expect(try onDisk() == PackageJSON.encode(await session.document))
        try await session.append(sampleStroke(), to: added[1])
        try await session.flush()
        #expect(try onDisk() == PackageJSON.encode(await session.document))
        try await session.rename(to: "Renamed")
        try await session.append(sampleStroke(seed: 1), to: added[0])
        let expected = await session.document
        try await session.close()
        #expect(try onDisk() == PackageJSON.encode(expected))
        #expect(try DocumentMetadata.read(package) == expected)
    }
}
