// lnote migrate: one document and the whole library, both ways, with progress; verify names a
// damaged content.sqlite.

import Foundation
import Testing

@Suite struct MigrateCLITests {
    @Test func migrateBothWaysThenVerifyNamesADamagedDatabase() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        for title in ["One", "Two"] { #expect(try await lnote(["new", title, "--library", lib]).status == 0) }
        let usage = try await lnote(["migrate", "One", "--library", lib])
        #expect(usage.status == 64 && usage.stderr.contains("--engine"))
        #expect(try await lnote(["migrate", "One", "--engine", "paper", "--library", lib]).status == 64)

        let all = try await lnote(["migrate", "--all", "--engine", "sqlite", "--library", lib])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.contains("[1/2]") && all.stdout.contains("[2/2]") && all.stdout.contains("snapshot -> sqlite"))
        let verified = try await lnote(["verify", "--library", lib])
        #expect(verified.status == 0 && verified.stdout.contains("0 errors"), "\(verified.stdout)")

        let json = try await lnote(["migrate", "Two", "--engine", "snapshot", "--library", lib, "--json"])
        #expect(json.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let doc = (report["documents"] as! [[String: Any]])[0]
        #expect(doc["from"] as? String == "sqlite" && doc["to"] as? String == "snapshot" && doc["migrated"] as? Bool == true)

        // One is a SQLite document: it exports as one file with content.sqlite, imports, renders.
        let info = try JSONSerialization.jsonObject(with: Data(try await lnote(["info", "One", "--library", lib, "--json"]).stdout.utf8)) as! [String: Any]
        #expect(info["engine"] as? String == "sqlite")
        let archive = tmp.path + "/one.zip"
        let exported = try await lnote(["export", "One", "-o", archive, "--library", lib])
        #expect(exported.status == 0, "\(exported.stderr)")
        let zipped = String(decoding: try Data(contentsOf: URL(fileURLWithPath: archive)), as: UTF8.self)
        #expect(zipped.contains("content.sqlite") && !zipped.contains("content.sqlite-"))
        let imported = try await lnote(["import", archive, "--title", "One again", "--library", tmp.path + "/other", "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try await lnote(["verify", "--library", tmp.path + "/other"]).status == 0)
        let rendered = try await lnote(["render", "One", "-o", tmp.path + "/one.svg", "--library", lib])
        #expect(rendered.status == 0, "\(rendered.stderr)")

        // Damage its database: verify names the file and exits 1.
        let database = lib + "/" + (info["id"] as! String) + ".lnote/content.sqlite"
        try Data(repeating: 0x42, count: 50_000).write(to: URL(fileURLWithPath: database))
        let bad = try await lnote(["verify", "One", "--library", lib])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("error: " + database) && bad.stdout.contains("corrupt"), "\(bad.stdout)")
        let refused = try await lnote(["migrate", "One", "--engine", "snapshot", "--library", lib])
        #expect(refused.status == 1 && refused.stderr.contains("content.sqlite"))
    }
}
