// `lnote restore-page`: a page file kept in recovered/ goes back into the document with every
// element whose own bytes still check, and the damaged remainder is counted, never invented.

import Foundation
import Testing

@Suite struct RestorePageCLITests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/InkML/crohme-large-integers.inkml").path

    func json(_ run: Run) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    @Test func aPageInRecoveredComesBackWholeOrAsMuchAsChecks() async throws {
        let dir = TempDir()
        let lib = dir.path + "/L"
        let made = try await json(lnote(["new", "Notes", "--library", lib, "--json"]))
        let doc = try #require(made["id"] as? String)
        let imported = try await json(lnote(["import", Self.fixture, "--into", doc, "--library", lib, "--json"]))
        let page = try #require(imported["page_id"] as? String)
        let strokes = try #require(imported["strokes"] as? Int)
        #expect(strokes == 4)
        // As repair leaves a page it moved aside: its file in recovered/, the page out of the list.
        let package = lib + "/" + doc + ".lnote"
        let recovered = package + "/recovered"
        try FileManager.default.createDirectory(atPath: recovered, withIntermediateDirectories: true)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: package + "/pages/" + page + ".content"))
        try bytes.write(to: URL(fileURLWithPath: recovered + "/" + page + ".content"))
        #expect(try await lnote(["page", "remove", doc, "2", "--yes", "--library", lib]).status == 0)

        let listed = try await json(lnote(["restore-page", doc, "--library", lib, "--json"]))
        #expect(listed["recovered_pages"] as? [String] == [page + ".content"])

        let whole = try await json(lnote(["restore-page", doc, page + ".content", "--library", lib, "--json"]))
        #expect(whole["page"] as? String == page)
        #expect(whole["page_number"] as? Int == 2)
        #expect(whole["restored"] as? Int == 4)
        #expect(whole["lost"] as? Int == 0)
        let pages = try await json(lnote(["pages", doc, "--library", lib, "--json"]))["pages"] as? [[String: Any]]
        #expect(pages?.count == 2)
        #expect(pages?.last?["elements"] as? Int == 4)
        #expect(try await lnote(["verify", doc, "--library", lib]).status == 0)

        // A damaged copy (8 bytes flipped in the middle of the elements, under a name repair gives
        // a second file): a new page id, the records that still check, the rest counted as lost.
        var damaged = [UInt8](bytes)
        let middle = damaged.count / 2
        for i in middle..<middle + 8 { damaged[i] ^= 0xA5 }
        try Data(damaged).write(to: URL(fileURLWithPath: recovered + "/" + page + ".content.second"))
        let part = try await json(lnote(["restore-page", doc, page + ".content.second", "--at", "1", "--library", lib, "--json"]))
        #expect(part["page"] as? String != page)
        #expect(part["page_number"] as? Int == 1)
        let restored = try #require(part["restored"] as? Int)
        #expect(restored < 4)
        #expect(part["lost"] as? Int == 4 - restored)
        #expect(try await lnote(["verify", doc, "--library", lib]).status == 0)
        // The original bytes stay where they were.
        #expect(FileManager.default.fileExists(atPath: recovered + "/" + page + ".content.second"))
    }

    @Test func aNameOutsideRecoveredIsRefused() async throws {
        let dir = TempDir()
        let lib = dir.path + "/L"
        let doc = try await #require(try json(lnote(["new", "Notes", "--library", lib, "--json"]))["id"] as? String)
        for bad in ["document.json", "../document.json", "not-a-uuid.content", "\(UUID().uuidString).journal"] {
            let run = try await lnote(["restore-page", doc, bad, "--library", lib])
            #expect(run.status != 0, "\(bad)")
            #expect(!run.stderr.isEmpty, "\(bad)")
        }
        let missing = try await lnote(["restore-page", doc, UUID().uuidString + ".content", "--library", lib])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("does not exist"))
    }
}
