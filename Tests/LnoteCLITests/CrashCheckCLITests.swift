// `lnote-dev crashcheck`: its table, its exact last line, its JSON, and its usage errors.

import Foundation
import Testing

@Suite("lnote-dev crashcheck")
struct CrashCheckCLITests {
    @Test("one flow: a table, then exactly 'crash states: N checked, 0 violations'")
    func oneFlow() async throws {
        let r = try await lnoteDev(["crashcheck", "--flow", "delete"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("flow") == true)
        #expect(lines.contains { $0.hasPrefix("delete ") })
        let last = try #require(lines.last)
        let parts = last.split(separator: " ")
        #expect(parts.count == 6 && last.hasPrefix("crash states: ") && last.hasSuffix(" checked, 0 violations"), "\(last)")
        #expect((Int(parts[2]) ?? 0) > 100)
    }

    @Test("--json gives the figures per flow and in total")
    func json() async throws {
        let r = try await lnoteDev(["crashcheck", "--flow", "delete", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect((object["crash_states_checked"] as? Int ?? 0) > 100)
        #expect(object["crash_state_violations"] as? Int == 0)
        #expect(object["fault_violations"] as? Int == 0)
        #expect((object["fault_runs"] as? Int ?? 0) > 0)
        #expect((object["flows"] as? [Any])?.count == 1)
        // Progress goes to standard error, one line a flow, even though no terminal is attached.
        #expect(r.stderr.contains("crashcheck: delete done (1 of 1)"), "\(r.stderr)")
        #expect(!r.stdout.contains("crashStatesChecked"), "snake_case keys only")
    }

    @Test("a client crash in a sync round is a flow of its own: every crash point recovered by the next rounds")
    func syncFlow() async throws {
        let r = try await lnoteDev(["crashcheck", "--flow", "sync round (snapshot)"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let row = try #require(lines.first { $0.hasPrefix("sync round (snapshot) ") })
        let columns = row.dropFirst("sync round (snapshot)".count).split(separator: " ").compactMap { Int($0) }
        #expect(columns.count == 7 && columns[0] > 10 && columns[2] > 10 && columns[3] == 0, "\(row)")
        #expect(lines.last?.hasSuffix(" checked, 0 violations") == true, "\(lines.last ?? "")")
    }

    @Test("an unknown flow or argument is a usage error")
    func usage() async throws {
        #expect(try await lnoteDev(["crashcheck", "--flow", "nope"]).status == 64)
        #expect(try await lnoteDev(["crashcheck", "extra"]).status == 64)
    }
}
