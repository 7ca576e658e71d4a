// `lnote remote add` and `lnote sync` run as a user would, through a folder remote and an S3
// bucket (OpenStack Swift's s3api, started by the tests): two libraries, the summary, --status,
// --json, and credentials refused on the command line.

import Foundation
import LulucatSyncTestSupport
import Testing

@Suite struct SyncCLITests {
    func run(_ args: [String]) async throws -> (status: Int32, out: String, err: String) {
        let r = try await lnote(args)
        return (r.status, r.stdout, r.stderr)
    }

    @Test func twoLibrariesSyncThroughAFolderFromTheCommandLine() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-sync-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b", remote = dir + "/remote"
        await #expect(try run(["new", "From A", "--library", a]).status == 0)
        await #expect(try run(["sync", "--library", a]).status == 1, "sync with no remote must fail")
        for lib in [a, b] { await #expect(try run(["remote", "add", remote, "--create", "--library", lib]).status == 0) }
        await #expect(try run(["remote", "--library", a]).out.contains(remote))
        let first = try await run(["sync", "--library", a])
        #expect(first.status == 0)
        #expect(first.out.contains("1 pushed"), "\(first.out)")
        // Standard error is a pipe here, not a terminal: progress is plain lines, no carriage return.
        #expect(first.err.contains("syncing 0/1 documents\n") && !first.err.contains("\r"), "\(first.err.debugDescription)")
        // The first line comes at once, before the remote answers anything.
        #expect(first.err.hasPrefix("syncing with \(remote)\n"), "\(first.err.debugDescription)")
        let second = try await run(["sync", "--library", b, "--json"])
        #expect(second.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(second.out.utf8)) as? [String: Any]
        #expect(json?["created"] as? Int == 1)
        await #expect(try run(["list", "--library", b]).out.contains("From A"))
        let status = try await run(["sync", "--status", "--library", b])
        #expect(status.out.contains("to push   0"), "\(status.out)")
        // --status --json is JSON, not ignored; --offline alone is refused.
        let statusJSON = try await run(["sync", "--status", "--json", "--library", b])
        let parsed = try JSONSerialization.jsonObject(with: Data(statusJSON.out.utf8)) as? [String: Any]
        #expect((parsed?["to_push"] as? [String])?.isEmpty == true && (parsed?["to_pull"] as? Int) == 0, "\(statusJSON.out)")
        #expect((parsed?["encrypted"] as? Bool) == false && parsed?["device"] is String, "\(statusJSON.out)")
        await #expect(try run(["sync", "--offline", "--library", b]).status == 64)
        await #expect(try run(["remote", "add", "https://user:secret@dav.example.org/", "--library", a]).status == 64)
    }

    /// `lnote remote add s3://…` with the keys in the environment (and only there): A pushes, B
    /// pulls, the idle round is one request; keys in the URL are a usage error; a wrong secret
    /// fails the sync (exit 1) naming the variable to check.
    @Test(.enabled(if: SwiftS3Server.isAvailable, Comment(rawValue: SwiftS3Server.notInstalled)))
    func twoLibrariesSyncThroughAnS3BucketFromTheCommandLine() async throws {
        let server = try await SwiftS3Server.shared()
        let bucket = try await server.makeBucket().bucket
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-s3-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b"
        let url = "s3://\(bucket)/My%20Notes?endpoint=\(server.endpoint.absoluteString)"
        let keys = ["AWS_ACCESS_KEY_ID": SwiftS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": SwiftS3Server.secretKey,
                    "AWS_SESSION_TOKEN": "", "LNOTE_NETRC": dir + "/no-netrc"]
        #expect(try await lnote(["new", "Through S3", "--library", a]).status == 0)
        for lib in [a, b] {
            let added = try await lnote(["remote", "add", url, "--library", lib], environment: keys)
            #expect(added.status == 0, "\(added.stderr)")
        }
        #expect(try await lnote(["remote", "--library", a]).stdout.contains(url))
        let push = try await lnote(["sync", "--library", a], environment: keys)
        #expect(push.status == 0 && push.stdout.contains("1 pushed"), "\(push.stdout) \(push.stderr)")
        let pull = try await lnote(["sync", "--library", b, "--json"], environment: keys)
        let json = try JSONSerialization.jsonObject(with: Data(pull.stdout.utf8)) as? [String: Any]
        #expect(pull.status == 0 && json?["created"] as? Int == 1, "\(pull.stdout) \(pull.stderr)")
        #expect(try await lnote(["list", "--library", b]).stdout.contains("Through S3"))
        let idle = try await lnote(["sync", "--library", b, "--json"], environment: keys)
        let idleJSON = try JSONSerialization.jsonObject(with: Data(idle.stdout.utf8)) as? [String: Any]
        #expect(idleJSON?["requests"] as? Int == 1, "\(idle.stdout)")

        let inURL = "s3://\(SwiftS3Server.accessKey.replacingOccurrences(of: ":", with: "%3A")):\(SwiftS3Server.secretKey)@\(bucket)/x"
        let refused = try await lnote(["remote", "add", inURL, "--library", a], environment: keys)
        #expect(refused.status == 64 && refused.stderr.contains("AWS_ACCESS_KEY_ID"), "\(refused.stderr)")
        var wrong = keys
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let denied = try await lnote(["sync", "--library", a], environment: wrong)
        #expect(denied.status == 1 && (denied.stdout + denied.stderr).contains("AWS_SECRET_ACCESS_KEY"), "\(denied.stdout) \(denied.stderr)")
    }

    /// `--deadline SECONDS` sets the round's deadline (0: none); a negative one, or one with
    /// `--status`, is a usage error. (A deadline met is HostileServerTests' business.)
    @Test func theRoundsDeadlineIsAnOption() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-sync-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", remote = dir + "/remote"
        await #expect(try run(["new", "Deadline", "--library", a]).status == 0)
        await #expect(try run(["remote", "add", remote, "--create", "--library", a]).status == 0)
        await #expect(try run(["sync", "--deadline", "-1", "--library", a]).status == 64)
        await #expect(try run(["sync", "--status", "--deadline", "5", "--library", a]).status == 64)
        let none = try await run(["sync", "--deadline", "0", "--library", a])
        #expect(none.status == 0 && none.out.contains("1 pushed"), "\(none.out) \(none.err)")
        await #expect(try run(["sync", "--deadline", "600", "--library", a]).status == 0)
    }

    /// `lnote sync --status` of a remote it cannot read fails (exit 1) with the cause in one
    /// sentence on standard error, in JSON mode too, never "to pull 0"; `--offline` still answers
    /// from what is known here. The causes: no credentials, wrong ones, a server error, a missing
    /// folder, no server at all.
    @Test func statusFailsWithTheCauseWhenTheRemoteCannotBeRead() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-status-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lib = dir + "/a"
        let server = try HostileServer()
        defer { server.stop() }
        let noNetrc = ["LNOTE_NETRC": dir + "/no-netrc"]
        await #expect(try run(["new", "Here", "--library", lib]).status == 0)
        #expect(try await lnote(["remote", "add", server.url.absoluteString, "--library", lib], environment: noNetrc).status == 0)
        let challenge = HostileServer.Behavior.answer(status: 401, body: [], headers: ["WWW-Authenticate": "Basic realm=\"notes\""])
        let cases: [(String, HostileServer.Behavior, [String: String], String)] = [
            ("no credentials", challenge, [:], "heads: the server asks for a user name and password and none were given (401)"),
            ("wrong credentials", challenge, ["LNOTE_REMOTE_USER": "ada", "LNOTE_REMOTE_PASSWORD": "wrong"],
             "heads: the server refused the user name or password (401)"),
            ("server error", .answer(status: 500, body: []), [:], "heads: the server failed with an error of its own (500)"),
            ("forbidden", .answer(status: 403, body: []), [:], "heads: the server forbids this request by its own rules (403 Forbidden"),
        ]
        for (label, behavior, env, words) in cases {
            server.clearRules()
            server.on("*", "", behavior)
            for json in [false, true] {
                let r = try await lnote(["sync", "--status", "--library", lib] + (json ? ["--json"] : []), environment: noNetrc.merging(env) { $1 })
                #expect(r.status == 1, "\(label) json \(json): \(r.status) \(r.stdout)")
                #expect(r.stdout.isEmpty, "\(label) json \(json): \(r.stdout)")
                #expect(r.stderr.hasPrefix("lnote sync: " + words), "\(label) json \(json): \(r.stderr)")
                #expect(r.stderr.split(separator: "\n").count == 1, "\(label): \(r.stderr)")
            }
            let offline = try await lnote(["sync", "--status", "--offline", "--library", lib], environment: noNetrc.merging(env) { $1 })
            #expect(offline.status == 0 && offline.stdout.contains("to push   1"), "\(label): \(offline.stdout) \(offline.stderr)")
        }
        // The remote's folder missing: named, for --status and for a sync (not "MKCOL answered 409").
        server.clearRules()
        server.on("PROPFIND", "", .answer(status: 404, body: []))
        server.on("MKCOL", "", .answer(status: 409, body: []))
        let folder = server.url.absoluteString
        let status = try await lnote(["sync", "--status", "--library", lib], environment: noNetrc)
        #expect(status.status == 1 && status.stderr == "lnote sync: the folder \(folder) does not exist on the server\n", "\(status.stderr)")
        let sync = try await lnote(["sync", "--library", lib], environment: noNetrc)
        #expect(sync.status == 1 && sync.stderr.hasSuffix("lnote sync: heads: the folder \(folder) does not exist on the server\n"),
                "\(sync.stderr)")
        // A server that never answers: the words, not "NSURLErrorDomain error -1001" (the round's
        // deadline here, to keep the test short; the silence limit is said the same way).
        server.clearRules()
        server.on("*", "", .silent)
        let silent = try await lnote(["sync", "--deadline", "2", "--library", lib], environment: noNetrc)
        #expect(silent.status == 1 && silent.stderr.hasSuffix("lnote sync: heads: the sync round took more than its deadline of 2 s\n"),
                "\(silent.stderr)")
        // No server at the address.
        server.stop()
        let nobody = try await lnote(["sync", "--status", "--json", "--library", lib], environment: noNetrc)
        #expect(nobody.status == 1 && nobody.stdout.isEmpty, "\(nobody.stdout)")
        #expect(nobody.stderr.contains("heads: no server answers at 127.0.0.1:\(server.port) (the connection was refused)"), "\(nobody.stderr)")
    }

    /// Progress names the bytes moved once anything has moved (a pull through a WebDAV server
    /// serving the folder another library pushed to), after a first line that comes at once.
    @Test func progressSaysTheBytesMoved() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-progress-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b", folder = dir + "/remote"
        await #expect(try run(["new", "Pulled", "--library", a]).status == 0)
        await #expect(try run(["remote", "add", folder, "--create", "--library", a]).status == 0)
        await #expect(try run(["sync", "--library", a]).status == 0)
        let server = try HostileServer(root: folder)
        defer { server.stop() }
        let noNetrc = ["LNOTE_NETRC": dir + "/no-netrc"]
        #expect(try await lnote(["remote", "add", server.url.absoluteString, "--library", b], environment: noNetrc).status == 0)
        let pull = try await lnote(["sync", "--library", b], environment: noNetrc)
        #expect(pull.status == 0 && pull.stdout.contains("1 pulled"), "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.hasPrefix("syncing with \(server.url.absoluteString)\n"), "\(pull.stderr.debugDescription)")
        let line = pull.stderr.split(separator: "\n").first { $0.hasPrefix("syncing 0/1 documents, ") }
        // The listing's request body went up, its reply and the head came down: "166 B sent, 741 B received".
        #expect(line.map { $0.contains(" B sent, ") && $0.hasSuffix(" B received") } == true,
                "\(pull.stderr.debugDescription)")
    }
}
