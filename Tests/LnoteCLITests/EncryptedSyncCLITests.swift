// `lnote remote add URL --encrypt`, `lnote sync` and `lnote remote passphrase` run as a user would,
// through a folder remote, the passphrase from the environment (scripts): two libraries converge,
// a wrong passphrase is refused with nothing kept, a rewrap changes which passphrase joins, and the
// passphrase is written nowhere.

import Foundation
import Testing

@Suite struct EncryptedSyncCLITests {
    func files(_ root: String) -> [String: Data] {
        var out: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return out }
        while let rel = walker.nextObject() as? String {
            if let d = FileManager.default.contents(atPath: root + "/" + rel) { out[rel] = d }
        }
        return out
    }

    @Test func encryptedRemoteFromTheCommandLine() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-enc-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b", c = dir + "/c", remote = dir + "/remote"
        let phrase = ["LNOTE_PASSPHRASE": "tr0ub4dor & 3 plus some"]
        #expect(try await lnote(["new", "Letters to nobody", "--library", a]).status == 0)
        // A weak passphrase makes no key (exit 1, said why), unless --weak-passphrase says so.
        let weak = try await lnote(["remote", "add", dir + "/weak", "--create", "--encrypt", "--library", a], environment: ["LNOTE_PASSPHRASE": "abc"])
        #expect(weak.status == 1 && weak.stderr.contains("too weak"), "\(weak.stderr)")
        #expect(!FileManager.default.fileExists(atPath: a + "/.sync/library.key"))
        #expect(try await lnote(["remote", "add", dir + "/weak", "--weak-passphrase", "--library", a]).status == 64, "only with --encrypt")
        let allowed = try await lnote(["remote", "add", dir + "/weak", "--create", "--encrypt", "--weak-passphrase", "--library", c],
                                environment: ["LNOTE_PASSPHRASE": "abc"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        try? FileManager.default.removeItem(atPath: c)
        let added = try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", a], environment: phrase)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("new library key"), "\(added.stdout)")
        let joined = try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", b], environment: phrase)
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.stdout.contains("joined"), "\(joined.stdout)")
        #expect(try await lnote(["remote", "--library", a]).stdout.contains("(encrypted)"))
        #expect(try await lnote(["sync", "--library", a]).status == 0)
        let pulled = try await lnote(["sync", "--library", b, "--json"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try await lnote(["list", "--library", b]).stdout.contains("Letters to nobody"))
        #expect(try await lnote(["sync", "--status", "--library", b]).stdout.contains("to push   0"))

        // A wrong passphrase: refused, exit 1, no key kept, no remote set.
        let wrong = try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", c], environment: ["LNOTE_PASSPHRASE": "tr0ub4dor & 3"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("wrong passphrase"), "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: c + "/.sync/library.key"))
        #expect(try await lnote(["remote", "--library", c]).stdout.contains("No remote set"))

        // The passphrase changes; the old one no longer joins, the new one does, b keeps syncing.
        let changed = try await lnote(["remote", "passphrase", "--library", a],
                                environment: phrase.merging(["LNOTE_NEW_PASSPHRASE": "a new passphrase"]) { x, _ in x })
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", c], environment: phrase).status == 1)
        #expect(try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", c], environment: ["LNOTE_PASSPHRASE": "a new passphrase"]).status == 0)
        #expect(try await lnote(["sync", "--library", c]).status == 0)
        #expect(try await lnote(["list", "--library", c]).stdout.contains("Letters to nobody"))
        #expect(try await lnote(["sync", "--library", b]).status == 0)

        // Neither passphrase is anywhere on disk, here or on the remote; the key file is 0600.
        for (path, data) in files(dir) {
            for p in ["tr0ub4dor", "a new passphrase"] { #expect(data.range(of: Data(p.utf8)) == nil, "\(p) in \(path)") }
        }
        let mode = try FileManager.default.attributesOfItem(atPath: a + "/.sync/library.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // --encrypt goes with add only; the passphrase is never an argument.
        #expect(try await lnote(["remote", "--encrypt", "--library", a]).status == 64)
        #expect(try await lnote(["remote", "add", remote, "--create", "--encrypt", "secret", "--library", a]).status == 64)
    }

    /// On a terminal (a pseudo-terminal from util-linux `script`), the passphrase is asked with
    /// echo off: what the terminal shows holds the prompt and not the passphrase, and the
    /// passphrase typed is the one that was used (another library joins with it).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux script for a terminal"))
    func thePassphraseIsAskedOnTheTerminalWithoutEcho() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-tty-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = dir + "/a", b = dir + "/b", remote = dir + "/remote"
        let secret = "typed on a terminal 42"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-q", "-e", "-c", "'\(try lnoteURL().path)' remote add '\(remote)' --create --encrypt --library '\(a)'", "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        env["LNOTE_PASSPHRASE"] = nil
        p.environment = env
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = output
        try p.run()
        // Wait for the prompt (shown once echo is off), then type.
        var shown = Data()
        let deadline = Date().addingTimeInterval(120)
        while !String(decoding: shown, as: UTF8.self).contains("Passphrase"), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            shown.append(chunk)
        }
        #expect(String(decoding: shown, as: UTF8.self).contains("Passphrase of the encrypted remote: "))
        input.fileHandleForWriting.write(Data((secret + "\n").utf8))
        shown.append(output.fileHandleForReading.readDataToEndOfFile())
        p.waitUntilExit()
        let text = String(decoding: shown, as: UTF8.self)
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(!text.contains(secret), "the passphrase was echoed: \(text)")
        #expect(text.contains("new library key"), "\(text)")
        #expect(try await lnote(["remote", "add", remote, "--create", "--encrypt", "--library", b], environment: ["LNOTE_PASSPHRASE": secret]).status == 0)
    }
}
