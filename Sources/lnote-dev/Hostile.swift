// lnote-dev hostile: the long hostile run (docs/export-format.md, "Hostile inputs"). Each input is
// written to <dir>/input before it is tried, so a crash leaves it behind; a watchdog ends the run
// when one input takes longer than --timeout seconds (a hang).

import Foundation
import LulucatInterchangeTesting

struct HostileCommand: Command {
    static let name = "hostile"
    static let abstract = "Import mutated InkML, archives, pages, journals and metadata; check no crash, hang or outside write."
    static let usage = "lnote-dev hostile [--runs N] [--seed S] [--timeout SECONDS] [--dir DIR] [--json]"

    var runs: Int
    var seed: UInt64
    var timeout: Int
    var dir: String?
    var json: Bool

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: ["runs", "seed", "timeout", "dir"], flags: ["json"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        runs = try a.int("runs", in: 1...100_000_000) ?? 1000
        seed = UInt64(try a.int("seed", in: 0...Int.max) ?? 1)
        timeout = try a.int("timeout", in: 1...3600) ?? 60
        dir = a.value("dir")
        json = a.flag("json")
    }

    struct Figures: Encodable {
        var runs: Int
        var seed: UInt64
        var accepted: Int
        var refused: Int
        var failures: Int
        var byKind: [String: Int]
        var seconds: Double
        var examples: [String]
    }

    func run() async throws {
        let base = (dir ?? NSTemporaryDirectory()) + "/lnote-hostile-" + UUID().uuidString
        let outside = base + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outside + "/bystander.txt", contents: Data("untouched".utf8))
        let started = Date()
        let watch = Watchdog(seconds: timeout, inputPath: base + "/input")
        var f = Figures(runs: 0, seed: seed, accepted: 0, refused: 0, failures: 0, byKind: [:], seconds: 0, examples: [])
        if !json { print("hostile run: seed \(seed), \(runs) inputs; each is written to \(base)/input before it is tried") }
        for i in 0..<runs {
            let input = HostileRun.input(seed: seed, index: i)
            _ = FileManager.default.createFile(atPath: base + "/input", contents: Data(input.bytes))
            watch.start("input \(i) (\(input.kind.rawValue): \(input.how))")
            let outcome = await HostileRun.check(input, folder: base, outside: outside)
            watch.stop()
            f.runs += 1
            f.byKind[input.kind.rawValue, default: 0] += 1
            if outcome.accepted { f.accepted += 1 } else { f.refused += 1 }
            if let problem = outcome.problem {
                f.failures += 1
                let line = "input \(i) (--seed \(seed), \(input.kind.rawValue): \(input.how)): \(problem)"
                if f.examples.count < 20 { f.examples.append(line) }
                printError("hostile: " + line)
                try? FileManager.default.copyItem(atPath: base + "/input", toPath: base + "/failure-\(i)")
            }
            if !json && (i + 1) % 500 == 0 { print("  \(i + 1) inputs, \(f.failures) failures"); fflush(nil) }
        }
        f.seconds = Date().timeIntervalSince(started)
        if f.failures == 0 { try? FileManager.default.removeItem(atPath: base) }
        if json {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys]
            e.keyEncodingStrategy = .convertToSnakeCase
            print(String(decoding: try e.encode(f), as: UTF8.self))
        } else {
            print("kinds: " + f.byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            print("\(f.runs) inputs: \(f.accepted) imported, \(f.refused) refused, \(f.failures) failures (crash, hang, outside write, leftover or bad outcome); \(Int(f.seconds)) s")
            if f.failures > 0 { print("failing inputs kept in \(base)") }
        }
        if f.failures > 0 { throw ExitCode(code: ExitStatus.failure) }
    }
}

/// Ends the process (status 3) when the input being tried takes longer than its limit: a hang.
final class Watchdog: @unchecked Sendable {
    private let lock = NSLock()
    private var current: (String, Date)?
    init(seconds: Int, inputPath: String) {
        let thread = Thread { [self] in
            while true {
                sleep(1)
                let c = lock.withLock { current }
                if let (what, since) = c, Date().timeIntervalSince(since) > Double(seconds) {
                    printError("hostile: \(what) has run for more than \(seconds) s: a hang; the input is \(inputPath)")
                    exit(3)
                }
            }
        }
        thread.start()
    }
    func start(_ what: String) { lock.withLock { current = (what, Date()) } }
    func stop() { lock.withLock { current = nil } }
}
