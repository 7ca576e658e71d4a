// Runs the built `lnote` binary and checks its output and exit codes.

import Foundation
import Testing
import LulucatStoreTesting

/// The `lnote` (or `lnote-dev`) executable next to the test bundle.
func lnoteURL(_ tool: String = "lnote") throws -> URL {
    var candidates: [URL] = []
    let exe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    candidates.append(exe.appendingPathComponent(tool))
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(tool))
    candidates.append(Bundle.main.bundleURL.appendingPathComponent(tool))
    for c in candidates where FileManager.default.isExecutableFile(atPath: c.path) { return c }
    throw CLIError.notFound(candidates.map(\.path))
}

enum CLIError: Error { case notFound([String]) }

/// Runs the developers' tool, `lnote-dev` (benchmarks, the crash checker).
@discardableResult
func lnoteDev(_ args: [String], environment: [String: String] = [:]) async throws -> Run {
    try await lnote(args, environment: environment, tool: "lnote-dev")
}

struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

@discardableResult
func lnote(_ args: [String], environment: [String: String] = [:], tool: String = "lnote") async throws -> Run {
    try await runProgram(try lnoteURL(tool), args, environment: environment)
}

/// Runs a program to its end: its status and what it wrote. The wait is on a thread of its own
/// (`offThePool`): the CLI tests run hundreds of programs, and a wait on a thread of Swift's
/// cooperative pool would stall the rest of the test run meanwhile.
func runProgram(_ executable: URL, _ args: [String], environment: [String: String] = [:], removing: [String] = [],
                in directory: String? = nil) async throws -> Run {
    try await offThePool { try runProgramBlocking(executable, args, environment: environment, removing: removing, in: directory) }
}

/// `runProgram`, holding the calling thread until the program ends.
func runProgramBlocking(_ executable: URL, _ args: [String], environment: [String: String] = [:], removing: [String] = [],
                        in directory: String? = nil) throws -> Run {
    let p = Process()
    p.executableURL = executable
    p.arguments = args
    var env = ProcessInfo.processInfo.environment
    for k in removing { env[k] = nil }
    for (k, v) in environment { env[k] = v }
    p.environment = env
    if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    // stderr drained beside stdout: a program that fills one pipe while we read the other waits forever.
    let e = LockedBox<Data>(Data())
    let drained = DispatchSemaphore(value: 0)
    DispatchQueue.global().async { e.value = err.fileHandleForReading.readDataToEndOfFile(); drained.signal() }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    drained.wait()
    p.waitUntilExit()
    return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e.value, as: UTF8.self))
}

/// A value shared between two threads, behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
}

final class TempDir: @unchecked Sendable {
    let path = NSTemporaryDirectory() + "lnote-cli-" + UUID().uuidString
    init() { try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct CLITests {
    @Test func helpAndUsageErrors() async throws {
        let help = try await lnote(["help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Commands:") && help.stdout.contains("verify"))
        let unknown = try await lnote(["frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown command"))
        let badOption = try await lnote(["list", "--nope"])
        #expect(badOption.status == 64)
        #expect(badOption.stderr.contains("--nope") && badOption.stderr.contains("usage:"))
        let commandHelp = try await lnote(["verify", "--help"])
        #expect(commandHelp.status == 0 && commandHelp.stdout.contains("lnote verify"))
    }

    @Test func newListInfoVerify() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let created = try await lnote(["new", "Groceries", "--library", lib])
        #expect(created.status == 0, "\(created.stderr)")
        let list = try await lnote(["list", "--json"], environment: ["LNOTE_LIBRARY": lib])
        #expect(list.status == 0)
        let entries = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as! [[String: Any]]
        #expect(entries.count == 1)
        #expect(entries[0]["title"] as? String == "Groceries")
        #expect(entries[0]["page_count"] as? Int == 1)
        let id = entries[0]["id"] as! String

        let info = try await lnote(["info", String(id.prefix(8)), "--library", lib, "--json"])
        #expect(info.status == 0)
        let obj = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as! [String: Any]
        #expect(obj["engine"] as? String == "snapshot")
        #expect((obj["pages"] as? [Any])?.count == 1)

        let ok = try await lnote(["verify", "--library", lib])
        #expect(ok.status == 0 && ok.stdout.contains("1 document checked: 0 errors, 0 warnings"), "\(ok.stdout)")
        // Counts agree with their nouns: one page of no elements.
        let shown = try await lnote(["info", String(id.prefix(8)), "--library", lib])
        #expect(shown.stdout.contains("  pages     1, ") && shown.stdout.contains("  0 elements  ") && !shown.stdout.contains(" 1 bytes"),
                "\(shown.stdout)")

        // Damage a page: verify names it and exits 1.
        let package = lib + "/" + id + ".lnote"
        let pages = try FileManager.default.contentsOfDirectory(atPath: package + "/pages")
        let page = package + "/pages/" + pages.first { $0.hasSuffix(".content") }!
        var bytes = try Data(contentsOf: URL(fileURLWithPath: page))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: page))
        let bad = try await lnote(["verify", id, "--library", lib, "--json"])
        #expect(bad.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(bad.stdout.utf8)) as! [String: Any]
        #expect(report["ok"] as? Bool == false)
        #expect(bad.stdout.contains("CRC32C"))
        // In words: the page by its number, its file named once (at the head of the finding).
        let pageID = String(page.split(separator: "/").last!.prefix(36))
        let said = try await lnote(["verify", id, "--library", lib])
        #expect(said.status == 1 && said.stdout.contains(": page 1 cannot be read: ") && said.stdout.components(separatedBy: pageID).count == 2,
                "\(said.stdout)")
        let drawn = try await lnote(["render", id, "--page", "1", "-o", tmp.path + "/p.png", "--library", lib])
        #expect(drawn.status == 1 && drawn.stderr.hasPrefix("lnote render: page 1 cannot be read: ") && !drawn.stderr.contains(pageID), "\(drawn.stderr)")

        let missing = try await lnote(["info", "no-such-document", "--library", lib])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no document"))
    }

    @Test func demoBuildsAVerifiedLibrary() async throws {
        let tmp = TempDir()
        let run = try await lnote(["demo", "--library", tmp.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("4 documents"))
        #expect(run.stdout.contains("Autosave wrote"))
        let verify = try await lnote(["verify", "--library", tmp.path])
        #expect(verify.status == 0, "\(verify.stdout)")
    }
}
