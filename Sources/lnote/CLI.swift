// The command table of `lnote`, its exit codes and its error conventions.

import Foundation

/// A subcommand of `lnote`: a value with a name, an abstract, and a run step.
protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    /// Parses the arguments after the command name; throws `UsageError` for bad usage.
    init(arguments: [String]) throws
    func run() async throws
}

/// Every subcommand, in the order `lnote help` lists them.
let commands: [any Command.Type] = [
    HelpCommand.self,
    DemoCommand.self,
    ListCommand.self,
    InfoCommand.self,
    NewCommand.self,
    VerifyCommand.self,
    RepairCommand.self,
    MigrateCommand.self,
    RenderCommand.self,
    ThumbnailsCommand.self,
    ExportCommand.self,
    ImportCommand.self,
    CompactCommand.self,
    RemoteCommand.self,
    SyncCommand.self,
    BenchCommand.self,
    CrashCheckCommand.self,
]

/// Bad command-line usage: exits 64 with the command's usage on stderr.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// A failure that has already been explained to the user; exits with `code`.
struct ExitCode: Error {
    var code: Int32
}

enum ExitStatus {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
}

/// Writes a line to standard error.
func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// A small option parser: `--flag`, `--key value`, `--key=value`, and positionals.
struct Arguments {
    private(set) var positionals: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []
    private var consumed: Set<String> = []

    /// - Parameters:
    ///   - valued: option names (without `--`) that take a value.
    ///   - flags: option names that take none.
    init(_ args: [String], valued: Set<String>, flags knownFlags: Set<String>) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" { positionals += args[(i + 1)...]; break }
            if a.hasPrefix("--") {
                var name = String(a.dropFirst(2))
                var value: String?
                if let eq = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valued.contains(name) {
                    if value == nil {
                        i += 1
                        guard i < args.count else { throw UsageError("--\(name) needs a value") }
                        value = args[i]
                    }
                    options[name, default: []].append(value!)
                } else if knownFlags.contains(name) {
                    guard value == nil else { throw UsageError("--\(name) takes no value") }
                    flags.insert(name)
                } else {
                    throw UsageError("unknown option --\(name)")
                }
            } else if a.hasPrefix("-") && a.count == 2 && valued.contains(String(a.dropFirst())) {
                i += 1
                guard i < args.count else { throw UsageError("\(a) needs a value") }
                options[String(a.dropFirst()), default: []].append(args[i])
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func int(_ name: String) throws -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("--\(name) takes a whole number, not '\(v)'") }
        return n
    }
    func double(_ name: String) throws -> Double? {
        guard let v = value(name) else { return nil }
        guard let n = Double(v) else { throw UsageError("--\(name) takes a number, not '\(v)'") }
        return n
    }
}
