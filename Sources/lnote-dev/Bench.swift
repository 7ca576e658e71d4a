// lnote-dev bench: the benchmarks, each a subcommand; release builds only give honest figures.

import Foundation

struct BenchCommand: Command {
    static let name = "bench"
    static let abstract = "Run a benchmark: codec, save, pages, journal, sqlite, render, migrate, inkml, crypto, events, import, salvage, sync, sync-hostile, library, history."
    static let usage = "lnote-dev bench codec|save|pages|journal|sqlite|render|migrate|inkml|crypto|events|import|salvage|sync|sync-hostile|library|history [--json] [OPTIONS]\n\n"
        + SaveBench.help + "\n\n" + JournalBench.help + "\n\n" + HistoryBench.help
    static let benches: [(String, @Sendable ([String]) async throws -> Void)] = [
        ("codec", { try await BenchCodec(arguments: $0).run() }),
        ("save", SaveBench.run),
        ("pages", PagesBench.run),
        ("journal", JournalBench.run),
        ("sqlite", { try await SQLiteBench.run(arguments: $0) }),
        ("render", { try await RenderBench.run(arguments: $0) }),
        ("migrate", { try await MigrateBench.run(arguments: $0) }),
        ("inkml", { try await InkMLBench.run(arguments: $0) }),
        ("crypto", { try await CryptoBench.run(arguments: $0) }),
        ("events", EventsBench.run),
        ("import", { try await ImportBench.run(arguments: $0) }),
        ("salvage", { try await SalvageBench.run(arguments: $0) }),
        ("sync", { try await SyncBench.run(arguments: $0) }),
        ("sync-hostile", { try await SyncHostileBench.run(arguments: $0) }),
        ("_sync-hostile-case", { try await SyncHostileBench.child(arguments: $0) }),
        ("library", { try await LibraryBench.run(arguments: $0) }),
        ("history", { try await HistoryBench.run(arguments: $0) }),
        ("_open", SaveBench.openProbe),
    ]
    let name: String
    let rest: [String]
    init(arguments: [String]) throws {
        guard let first = arguments.first else { throw UsageError("name a benchmark: \(BenchCommand.benches.map(\.0).filter { !$0.hasPrefix("_") }.joined(separator: ", "))") }
        guard BenchCommand.benches.contains(where: { $0.0 == first }) else { throw UsageError("no benchmark named '\(first)'") }
        name = first
        rest = Array(arguments.dropFirst())
    }
    func run() async throws {
        try await BenchCommand.benches.first { $0.0 == name }!.1(rest)
    }
}

/// CPU time of the calling thread (user + system) in seconds: what a step costs apart from
/// waiting for the disk or for other processes on a shared machine.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Seconds taken by `body`, on the monotonic clock.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return seconds(clock.now - start)
}

func measureAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return seconds(clock.now - start)
}

/// A `Duration` in seconds.
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

/// Peak and current resident memory of this process in MB, from /proc (nil elsewhere).
func residentMemoryMB() -> (peak: Double, current: Double)? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    func field(_ name: String) -> Double? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return line.split(separator: " ").compactMap { Double($0) }.first.map { $0 / 1024 }
    }
    guard let peak = field("VmHWM"), let current = field("VmRSS") else { return nil }
    return (peak, current)
}
