import Foundation
import Testing
import LulucatInk
@testable import LulucatStore

@Suite struct PackageJSONTests {
    static let docID = UUID(uuidString: "085F9CDF-6F69-4475-930F-98A491574F23")!
    static let pageID = UUID(uuidString: "F09FE6EE-B6E3-4281-9005-76454E437951")!
    static let t = ISO8601.date("2026-11-30T16:44:00.561Z")!

    static var sample: DocumentMetadata {
        DocumentMetadata(id: docID, title: "Lecture notes", created: t, modified: t,
                         pages: [PageEntry(id: pageID, canvas: .letter, created: t, modified: t, elementCount: 0)])
    }

    @Test func documentJSONGoldenBytes() throws {
        let text = String(decoding: PackageJSON.encode(PackageJSONTests.sample), as: UTF8.self)
        // Exactly the example in docs/package-format.md.
        let docs = try String(contentsOfFile: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/package-format.md").path, encoding: .utf8)
        let start = try #require(docs.range(of: "```json\n"))
        let end = try #require(docs.range(of: "\n```", range: start.upperBound..<docs.endIndex))
        #expect(text == String(docs[start.upperBound..<end.lowerBound]) + "\n")
        let back = try PackageJSON.decodeDocument(Array(text.utf8), path: "document.json")
        #expect(back == PackageJSONTests.sample)
    }

    @Test func manifestRoundTripsAndDerivesFromDocument() throws {
        let m = Manifest(PackageJSONTests.sample)
        #expect(m.pageCount == 1 && m.coverPageID == PackageJSONTests.pageID)
        let bytes = PackageJSON.encode(m)
        #expect(try PackageJSON.decodeManifest(bytes, path: "manifest.json") == m)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"format\" : \"lulucat.manifest\""))
    }

    @Test func badDocumentsAreRejectedWithReasons() throws {
        func reject(_ json: String, _ expected: String) {
            do {
                _ = try PackageJSON.decodeDocument(Array(json.utf8), path: "d.json")
                Issue.record("accepted: \(json)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        var good = String(decoding: PackageJSON.encode(PackageJSONTests.sample), as: UTF8.self)
        reject("", "not valid JSON")
        reject("[]", "not valid JSON")
        reject("{}", "\"format\" is missing")
        reject(good.replacingOccurrences(of: "lulucat.document", with: "other"), "expected 'lulucat.document'")
        reject(good.replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 0"), "formatVersion")
        reject(good.replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 2"), "newer")
        reject(good.replacingOccurrences(of: "\"engine\" : \"snapshot\"", with: "\"engine\" : \"tape\""), "engine")
        reject(good.replacingOccurrences(of: "\"codec\" : \"compact\"", with: "\"codec\" : \"zip\""), "codec")
        reject(good.replacingOccurrences(of: "\"width\" : 6120", with: "\"width\" : -1"), "negative")
        reject(good.replacingOccurrences(of: "2026-11-30T16:44:00.561Z", with: "yesterday"), "ISO 8601")
        reject(good.replacingOccurrences(of: PackageJSONTests.docID.uuidString, with: "../../etc"), "id")
        // A page listed twice.
        var twice = PackageJSONTests.sample
        twice.pages.append(twice.pages[0])
        good = String(decoding: PackageJSON.encode(twice), as: UTF8.self)
        reject(good, "listed twice")
    }

    @Test func everyTruncationOfDocumentJSONIsAnErrorNeverACrash() {
        let bytes = PackageJSON.encode(PackageJSONTests.sample)
        for n in 0..<bytes.count - 2 {
            #expect(throws: StoreError.self) { try PackageJSON.decodeDocument(Array(bytes[..<n]), path: "d.json") }
        }
    }
}
