// lnote new --engine journal, lnote compact, and usage errors, through the built binary.

import Foundation
import Testing

@Suite struct JournalCLITests {
    @Test func newJournalDocumentAndCompact() async throws {
        let dir = TempDir()
        let lib = dir.path + "/lib"
        let created = try await lnote(["new", "Ledger", "--engine", "journal", "--library", lib, "--json"])
        #expect(created.status == 0)
        let id = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])["id"] as? String
        let info = try await lnote(["info", "Ledger", "--library", lib, "--json"])
        #expect(info.stdout.contains("\"engine\" : \"journal\""))
        let compact = try await lnote(["compact", id!, "--library", lib, "--json"])
        #expect(compact.status == 0)
        #expect(compact.stdout.contains("\"compacted_pages\" : ["))
        #expect(try await lnote(["verify", id!, "--library", lib]).status == 0)

        let plain = try await lnote(["new", "Plain", "--library", lib])
        #expect(plain.status == 0)
        let nothing = try await lnote(["compact", "Plain", "--library", lib])
        #expect(nothing.status == 0 && nothing.stdout.contains("nothing to compact"))
    }

    @Test func usageErrors() async throws {
        let bad = try await lnote(["new", "X", "--engine", "paper"])
        #expect(bad.status == 64 && bad.stderr.contains("unknown engine 'paper'"))
        #expect(try await lnote(["compact"]).status == 64)
        #expect(try await lnoteDev(["bench", "journal", "--window", "0"]).status == 64)
    }
}
