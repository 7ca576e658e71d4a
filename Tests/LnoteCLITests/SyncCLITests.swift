// `lnote remote add` and `lnote sync` run as a user would, through a folder remote: two
// libraries, the summary, --status, --json, and credentials refused on the command line.

import Foundation
import Testing

@Suite struct SyncCLITests {
    func run(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let r = try lnote(args)
        return (r.status, r.stdout, r.stderr)
    }

    @Test func twoLibrariesSyncThroughAFolderFromTheCommandLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-sync-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b", remote = dir + "/remote"
        #expect(try run(["new", "From A", "--library", a]).status == 0)
        #expect(try run(["sync", "--library", a]).status == 1, "sync with no remote must fail")
        for lib in [a, b] { #expect(try run(["remote", "add", remote, "--create", "--library", lib]).status == 0) }
        #expect(try run(["remote", "--library", a]).out.contains(remote))
        let first = try run(["sync", "--library", a])
        #expect(first.status == 0)
        #expect(first.out.contains("1 pushed"), "\(first.out)")
        // Standard error is a pipe here, not a terminal: progress is plain lines, no carriage return.
        #expect(first.err.contains("syncing 0/1 documents\n") && !first.err.contains("\r"), "\(first.err.debugDescription)")
        let second = try run(["sync", "--library", b, "--json"])
        #expect(second.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(second.out.utf8)) as? [String: Any]
        #expect(json?["created"] as? Int == 1)
        #expect(try run(["list", "--library", b]).out.contains("From A"))
        let status = try run(["sync", "--status", "--library", b])
        #expect(status.out.contains("to push   0"), "\(status.out)")
        // --status --json is JSON, not ignored; --offline alone is refused.
        let statusJSON = try run(["sync", "--status", "--json", "--library", b])
        let parsed = try JSONSerialization.jsonObject(with: Data(statusJSON.out.utf8)) as? [String: Any]
        #expect((parsed?["to_push"] as? [String])?.isEmpty == true && (parsed?["to_pull"] as? Int) == 0, "\(statusJSON.out)")
        #expect((parsed?["encrypted"] as? Bool) == false && parsed?["device"] is String, "\(statusJSON.out)")
        #expect(try run(["sync", "--offline", "--library", b]).status == 64)
        #expect(try run(["remote", "add", "https://user:secret@dav.example.org/", "--library", a]).status == 64)
    }

    /// `--deadline SECONDS` sets the round's deadline (0: none); a negative one, or one with
    /// `--status`, is a usage error. (A deadline met is HostileServerTests' business.)
    @Test func theRoundsDeadlineIsAnOption() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-sync-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", remote = dir + "/remote"
        #expect(try run(["new", "Deadline", "--library", a]).status == 0)
        #expect(try run(["remote", "add", remote, "--create", "--library", a]).status == 0)
        #expect(try run(["sync", "--deadline", "-1", "--library", a]).status == 64)
        #expect(try run(["sync", "--status", "--deadline", "5", "--library", a]).status == 64)
        let none = try run(["sync", "--deadline", "0", "--library", a])
        #expect(none.status == 0 && none.out.contains("1 pushed"), "\(none.out) \(none.err)")
        #expect(try run(["sync", "--deadline", "600", "--library", a]).status == 0)
    }
}
