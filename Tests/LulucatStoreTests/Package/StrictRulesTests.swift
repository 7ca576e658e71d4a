// The strict rules package-format.md promises: ids in exactly one canonical form wherever they are
// read, the package id equal to its folder, timestamps in exactly the documented form, and
// thumbnails written under the document's lock.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreThumbnails

@Suite struct StrictRulesTests {
    init() { Library.enableThumbnails() }
    let canonical = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"

    @Test func idsAreExactlyTheCanonicalForm() {
        #expect(UUID(strictString: canonical) != nil)
        for bad in [canonical.lowercased(), canonical + "\u{0}", canonical + "\u{0}junk", "{" + canonical + "}", " " + canonical,
                    String(canonical.dropLast()), canonical + "0", canonical.replacingOccurrences(of: "-", with: "_"),
                    "E621E1F8-C36C-495A-93FC-0C247A3E6E5G", ""] {
            #expect(UUID(strictString: bad) == nil, "\(bad.debugDescription)")
            #expect(!UUID.isCanonicalString(bad), "\(bad.debugDescription)")
        }
        #expect(DocumentPackage.id(fromDirectoryName: canonical.lowercased() + ".lnote") == nil)
        #expect(DocumentPackage.parseName(canonical + "\u{0}.content", extensions: ["content"]) == nil)
    }

    func documentJSON(id: String, page: String = "0B6C0C1A-8E61-4C4B-9A57-2B7F6E3A3C11") -> [UInt8] {
        Array("""
        {"codec":"compact","created":"2026-11-30T16:44:00.561Z","engine":"snapshot","format":"lulucat.document","formatVersion":1,\
        "id":"\(id)","modified":"2026-11-30T16:44:00.561Z","pages":[{"assets":[],"created":"2026-11-30T16:44:00.561Z",\
        "elementCount":0,"height":7920,"id":"\(page)","modified":"2026-11-30T16:44:00.561Z","width":6120}],"title":"T"}
        """.utf8)
    }

    @Test func aDocumentJSONWithALooseIdIsRefused() throws {
        _ = try PackageJSON.decodeDocument(documentJSON(id: canonical), path: "document.json")
        for bad in [canonical + "\\u0000junk", canonical.lowercased()] {
            #expect(throws: StoreError.self) { _ = try PackageJSON.decodeDocument(documentJSON(id: bad), path: "document.json") }
        }
        #expect(throws: StoreError.self) {
            _ = try PackageJSON.decodeDocument(documentJSON(id: canonical, page: "0b6c0c1a-8e61-4c4b-9a57-2b7f6e3a3c11"), path: "document.json")
        }
    }

    @Test func thePackageIdMustEqualItsFolder() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let a = try await library.createDocument(title: "A")
        let b = try await library.createDocument(title: "B")
        // B's folder with A's document.json.
        try FileManager.default.removeItem(atPath: b.documentPath)
        try FileManager.default.copyItem(atPath: a.documentPath, toPath: b.documentPath)
        await #expect { _ = try await library.open(b.id) } throws: { "\($0)".contains("names document \(a.id)") }
        #expect(DocumentVerifier().verify(b).contains { $0.severity == .error && $0.path == b.documentPath })
        #expect(throws: StoreError.self) { _ = try DocumentMetadata.read(b) }
    }

    @Test func timestampsAreExactlyTheDocumentedForm() {
        for good in ["2026-11-30T16:44:00.561Z", "2026-11-30T16:44:00Z", "2026-11-30T16:44:00.5Z", "2026-11-30T16:44:00.123456789Z", "2026-11-30T16:44:00.1234567890123Z",
                     "2026-11-30T18:44:00.561+02:00", "2026-11-30T02:44:00.561-14:00", "2024-02-29T00:00:00Z"] {
            #expect(ISO8601.date(good) != nil, "\(good)")
        }
        #expect(ISO8601.date("2026-11-30T18:44:00.561+02:00") == ISO8601.date("2026-11-30T16:44:00.561Z"))
        for bad in ["2026-11-30T16:44:00.561+99:99", "2026-11-30T16:44:00.561+14:01", "2026-11-30T16:44:00.561+02:60",
                    "2026-11-30t16:44:00.561Z", "2026-11-30T16:44:00.561z", "2026-02-30T16:44:00Z", "2025-02-29T00:00:00Z",
                    "2026-04-31T00:00:00Z", "2026-11-30T16:44:00.Z", "2026-11-30T24:00:00Z",
                    "2026-11-30T16:44:00.561Z\u{0}", "2026-11-30T16:44:00.561"] {
            #expect(ISO8601.date(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func thumbnailsTakeTheDocumentLock() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Locked")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let findings = ThumbnailWriter.rebuild(package, all: true)
        #expect(findings.contains { $0.severity == .error && $0.message.contains("in use") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.thumbnailsPath).isEmpty)
        try await session.close()
        #expect(ThumbnailWriter.rebuild(package, all: true).contains { $0.severity == .repaired })
    }
}
