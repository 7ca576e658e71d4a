// What `lnote` and `lnote-dev` share: the command protocol, the option parser, exit codes and the
// dispatch of a command line to a command (swift-argument-parser's conventions: usage errors exit 64,
// other failures 1, help to stdout, errors to stderr).

import Foundation

/// A subcommand of a tool: a value with a name, an abstract, and a run step.
package protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    /// Parses the arguments after the command name; throws `UsageError` for bad usage.
    /// The options the command takes, for its help, its parser and shell completion.
    static var options: [OptionSpec] { get }
    /// Command lines that show the command at work, for its help.
    static var examples: [String] { get }
    /// The words a command takes first to say what to do (`page add`), for shell completion.
    static var actions: [String] { get }
    init(arguments: [String]) throws
    func run() async throws
}

extension Command {
    /// No options listed (the command parses its own, as lnote-dev's benches do).
    package static var options: [OptionSpec] { [] }
    /// No examples.
    package static var examples: [String] { [] }
    /// No action words.
    package static var actions: [String] { [] }
}

/// One option of a command, as its help lists it and its parser accepts it: `--name VALUE`
/// (a valued option, also `--name=VALUE`), or `--name` alone (a flag).
package struct OptionSpec: Sendable, Equatable {
    /// The long name, without `--`.
    package var name: String
    /// A one-letter name used as `-x VALUE` (valued options only).
    package var short: String?
    /// The value's placeholder in help (`DIR`, `N`); nil for a flag.
    package var value: String?
    /// What the option does, in one sentence.
    package var help: String
    /// What happens without the option, when that is worth saying.
    package var defaultValue: String?

    /// An option that takes a value.
    package static func valued(_ name: String, _ value: String, short: String? = nil, default defaultValue: String? = nil,
                               _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, value: value, help: help, defaultValue: defaultValue)
    }

    /// An option that takes no value.
    package static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: nil, value: nil, help: help, defaultValue: nil)
    }

    /// How help names the option: `-o, --output FILE`, `--json`.
    package var synopsis: String {
        (short.map { "-\($0), " } ?? "") + "--" + name + (value.map { " " + $0 } ?? "")
    }
}

/// A command's whole help: its usage, what it does, its options with their defaults, examples.
package func helpText(_ type: any Command.Type) -> String {
    var text = "\(type.usage)\n\n\(type.abstract)"
    let options = type.options
    do {
        let rows = options.map { ($0.synopsis, $0.help + ($0.defaultValue.map { " (default: \($0))" } ?? "")) }
            + [("-h, --help", "Show this help.")]
        let width = min(26, (rows.map { $0.0.count }.max() ?? 0) + 2)
        text += "\n\nOptions:"
        for (synopsis, help) in rows {
            text += synopsis.count + 2 > width
                ? "\n  " + synopsis + "\n  " + String(repeating: " ", count: width) + help
                : "\n  " + synopsis.padding(toLength: width, withPad: " ", startingAt: 0) + help
        }
    }
    if !type.examples.isEmpty {
        text += "\n\nExamples:" + type.examples.map { "\n  " + $0 }.joined()
    }
    return text
}

/// Bad command-line usage: exits 64 with the command's usage on stderr.
package struct UsageError: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// A failure that has already been explained to the user; exits with `code`.
package struct ExitCode: Error {
    package var code: Int32
    package init(code: Int32) { self.code = code }
}

package enum ExitStatus {
    package static let ok: Int32 = 0
    package static let failure: Int32 = 1
    package static let usage: Int32 = 64
}

/// Writes a line to standard error.
package func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// A small option parser: `--flag`, `--key value`, `--key=value`, and positionals.
package struct Arguments {
    package private(set) var positionals: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []
    private var consumed: Set<String> = []

    /// - Parameters:
    ///   - valued: option names (without `--`) that take a value.
    ///   - flags: option names that take none.
    package init(_ args: [String], valued: Set<String>, flags knownFlags: Set<String>) throws {
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

    /// Parses `args` against a command's option table (`Command.options`).
    package init(_ args: [String], options table: [OptionSpec]) throws {
        var valued = Set<String>(), flags = Set<String>()
        for o in table {
            if o.value == nil { flags.insert(o.name) } else { valued.insert(o.name) }
            if let short = o.short { valued.insert(short) }
        }
        try self.init(args, valued: valued, flags: flags)
    }

    package func value(_ name: String) -> String? { options[name]?.last }
    package func values(_ name: String) -> [String] { options[name] ?? [] }
    package func flag(_ name: String) -> Bool { flags.contains(name) }

    package func int(_ name: String) throws -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("--\(name) takes a whole number, not '\(v)'") }
        return n
    }
    /// A whole number that must lie in `range` (command-line numbers never reach a trapping conversion).
    package func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let n = try int(name) else { return nil }
        guard range.contains(n) else { throw UsageError("--\(name) must be in \(range.lowerBound)...\(range.upperBound), not \(n)") }
        return n
    }
    package func double(_ name: String) throws -> Double? {
        guard let v = value(name) else { return nil }
        guard let n = Double(v), n.isFinite else { throw UsageError("--\(name) takes a number, not '\(v)'") }
        return n
    }
}

/// Prints a value as pretty JSON with sorted keys.
/// `shown` turns the JSON text into what is safe to print (lnote escapes terminal controls).
package func printJSON(_ value: Any, shown: (String) -> String = { $0 }) {
    let data = try! JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    print(shown(String(decoding: data, as: UTF8.self)))
}

/// One JSON object written as `printJSON` writes it (JSONSerialization with `.prettyPrinted`,
/// `.sortedKeys`, `.withoutEscapingSlashes`), for output written piece by piece instead of built
/// whole: keys are added in sorted order by the caller, values are strings or literal JSON text.
package struct PrettyJSONObject {
    private let pad: String
    private var body = ""

    /// An object nested `indent` levels deep (its members two spaces further in).
    package init(indent: Int) { pad = String(repeating: "  ", count: indent) }

    /// Adds `"key" : "value"`, the string escaped as JSONSerialization escapes it.
    package mutating func add(_ key: String, string value: String) {
        add(key, literal: PrettyJSONObject.quoted(value))
    }

    /// Adds `"key" : value` with `value` as written (a number, `true`, `false`).
    package mutating func add(_ key: String, literal value: String) {
        if !body.isEmpty { body += ",\n" }
        body += pad + "  " + PrettyJSONObject.quoted(key) + " : " + value
    }

    /// The object's text, from its `{` to its `}` (no indent before the `{`).
    package var text: String { "{\n" + body + "\n" + pad + "}" }

    /// A JSON string as JSONSerialization writes it: `"` and `\\` escaped, `\b \f \n \r \t`
    /// for those controls, `\u00xx` (lower case) for the other C0 controls, everything else
    /// (a slash, DEL, every other character) as it is.
    package static func quoted(_ s: String) -> String {
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return "\"" + s + "\"" }
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        var plainStart = s.unicodeScalars.startIndex
        var i = plainStart
        let scalars = s.unicodeScalars
        while i != scalars.endIndex {
            let c = scalars[i]
            let escape: String?
            switch c {
            case "\"": escape = "\\\""
            case "\\": escape = "\\\\"
            case "\u{8}": escape = "\\b"
            case "\u{C}": escape = "\\f"
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            default:
                if c.value < 0x20 {
                    let hex = String(c.value, radix: 16)
                    escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    escape = nil
                }
            }
            if let escape {
                out.unicodeScalars.append(contentsOf: scalars[plainStart..<i])
                out += escape
                plainStart = scalars.index(after: i)
            }
            i = scalars.index(after: i)
        }
        out.unicodeScalars.append(contentsOf: scalars[plainStart..<scalars.endIndex])
        return out + "\""
    }
}

/// A command-line tool: its name, the line `help` opens with, and its commands in help order.
package struct Tool: Sendable {
    package var name: String
    package var banner: String
    package var commands: [any Command.Type]
    /// Commands that run by name but are not listed by `help` (test harnesses' helpers).
    package var hidden: [any Command.Type]

    package init(name: String, banner: String, commands: [any Command.Type], hidden: [any Command.Type] = []) {
        self.name = name
        self.banner = banner
        self.commands = commands
        self.hidden = hidden
    }

    /// Prints the list of commands, or one command's usage.
    package func help(_ topic: String?) throws {
        if let topic {
            guard let c = (commands + hidden).first(where: { $0.name == topic }) else { throw UsageError("no command named '\(topic)'") }
            print(helpText(c))
            return
        }
        print("\(banner)\n")
        print("Usage: \(name) COMMAND [OPTIONS]\n\nCommands:")
        // The names' column is as wide as the longest name and two spaces, at least 12.
        let width = max(12, (commands.map { $0.name.count }.max() ?? 0) + 2)
        print("  " + "help".padding(toLength: width, withPad: " ", startingAt: 0) + "Show the commands, or one command's usage.")
        for c in commands { print("  " + c.name.padding(toLength: width, withPad: " ", startingAt: 0) + c.abstract) }
        print("\nRun '\(name) COMMAND --help' for a command's options.")
    }

    /// Runs the command named by `arguments` (without the program name) and returns the exit status.
    package func run(_ arguments: [String]) async -> Int32 {
        var args = arguments
        if args.isEmpty || args == ["--help"] || args == ["-h"] { args = ["help"] }
        let name = args.removeFirst()
        if name == "help" {
            if args.contains("--help") || args.contains("-h") {
                print("\(self.name) help [COMMAND]\n\nShow the commands, or one command's usage.")
                return ExitStatus.ok
            }
            do {
                guard args.count <= 1 else { throw UsageError("help takes at most one command name") }
                try help(args.first)
                return ExitStatus.ok
            } catch {
                printError("\(self.name) help: \(error)\nusage: \(self.name) help [COMMAND]")
                return ExitStatus.usage
            }
        }
        guard let type = (commands + hidden).first(where: { $0.name == name }) else {
            printError("\(self.name): unknown command '\(name)'. Run '\(self.name) help' for the list.")
            return ExitStatus.usage
        }
        return await execute(type, args, tool: self.name)
    }
}

/// Runs one command with its arguments: `--help` prints its usage; a usage error exits 64 with the
/// usage on stderr, an `ExitCode` exits with its code, any other error exits 1. `shown` turns text
/// that may come from files (titles, paths) into what is safe to print; `describe` puts an error
/// in words (its description unless the tool knows better).
package func execute(_ type: any Command.Type, _ args: [String], tool: String,
                     shown: (String) -> String = { $0 }, describe: (Error) -> String = { "\($0)" }) async -> Int32 {
    // Help before the command's own `--` only: after it, "--help" is a positional like any other.
    let optionPart = args.firstIndex(of: "--").map { args[..<$0] } ?? args[...]
    if optionPart.contains("--help") || optionPart.contains("-h") {
        print(helpText(type))
        return ExitStatus.ok
    }
    do {
        let command = try type.init(arguments: args)
        try await command.run()
        return ExitStatus.ok
    } catch let e as UsageError {
        printError("\(tool) \(type.name): \(shown(e.message))\nusage: \(type.usage)")
        return ExitStatus.usage
    } catch let e as ExitCode {
        return e.code
    } catch where Task.isCancelled {
        // Interrupted (a signal cancelled the command): whatever the cancellation threw, said once.
        printError("\(tool) \(type.name): interrupted; nothing half-made was left (what was finished before stays)")
        return ExitStatus.failure
    } catch {
        printError("\(tool) \(type.name): \(shown(describe(error)))")
        return ExitStatus.failure
    }
}

/// Median of a list of measurements.
package func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Rounds for display.
package func r(_ v: Double, _ digits: Int = 3) -> Double {
    let p = pow(10, Double(digits))
    return (v * p).rounded() / p
}
