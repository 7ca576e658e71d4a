// `lnote bench`: the benchmarks, one subcommand each (codec now; save, sqlite, render later).

/// A benchmark `lnote bench NAME` runs. Each is a small command of its own.
protocol BenchSubcommand: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    init(arguments: [String]) throws
    func run() async throws
}

/// Every benchmark, in the order `lnote bench` lists them. Add a line here to add one.
let benchSubcommands: [any BenchSubcommand.Type] = [
    BenchCodec.self,
]

/// `lnote bench NAME [OPTIONS]`: dispatches to a benchmark by its first argument.
struct BenchCommand: Command {
    static let name = "bench"
    static let abstract = "Run a benchmark: " + benchSubcommands.map { $0.name }.joined(separator: ", ") + "."
    static var usage: String {
        "lnote bench NAME [OPTIONS]   (release build for figures)\n\nBenchmarks:\n"
            + benchSubcommands.map { "  " + $0.usage + "\n      " + $0.abstract }.joined(separator: "\n")
    }

    let subcommand: any BenchSubcommand

    init(arguments: [String]) throws {
        guard let name = arguments.first else {
            throw UsageError("name a benchmark: " + benchSubcommands.map { $0.name }.joined(separator: ", "))
        }
        guard let type = benchSubcommands.first(where: { $0.name == name }) else {
            throw UsageError("no benchmark named '\(name)'; there are: " + benchSubcommands.map { $0.name }.joined(separator: ", "))
        }
        subcommand = try type.init(arguments: Array(arguments.dropFirst()))
    }

    func run() async throws {
        try await subcommand.run()
    }
}
