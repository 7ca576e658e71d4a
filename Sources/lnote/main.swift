// lnote: the command-line tool over LulucatStore.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatStoreThumbnails
import Synchronization


struct HelpCommand: Command {
    static let name = "help"
    static let abstract = "Show the commands, or one command's usage."
    static let options: [OptionSpec] = [.library, .json]
    static let usage = "lnote help [COMMAND]"
    var topic: String?
    init(arguments: [String]) throws {
        let arguments = try Arguments(arguments, options: Self.options).positionals
        guard arguments.count <= 1 else { throw UsageError("help takes at most one command name") }
        topic = arguments.first
    }
    func run() async throws {
        if let topic {
            let name = commandAliases[topic] ?? topic
            guard let c = commands.first(where: { $0.name == name }) else { throw UsageError("no command named '\(topic)'") }
            print(helpText(c))
            return
        }
        print("lnote: the command-line tool of LulucatStore, the storage engine of Lulucat Notes.\n")
        print("Usage: lnote COMMAND [OPTIONS]\n\nCommands:")
        // The names' column is as wide as the longest name and two spaces, at least 12.
        let width = max(12, (commands.map { $0.name.count }.max() ?? 0) + 2)
        for c in commands {
            let alias = commandAliases.filter { $0.value == c.name }.keys.sorted().map { " (or \($0))" }.joined()
            print("  " + c.name.padding(toLength: width, withPad: " ", startingAt: 0) + c.abstract + alias)
        }
        print("\nGlobal options, before or after the command: --library DIR (else $LNOTE_LIBRARY, else \(defaultLibraryDescription)), --json.")
        print("Run 'lnote COMMAND --help' for a command's options; 'lnote --version' for the version.")
    }
}

/// The version `lnote --version` prints, with the on-disk format versions it writes.
let lnoteVersion = "0.1.0"

func versionText() -> String {
    "lnote \(lnoteVersion) (page format \(PageFile.version), package format \(DocumentMetadata.currentFormatVersion))"
}

/// `lnote --version` (or `version`) with what follows it: nothing, or `--json` (before or after);
/// anything else is refused, never ignored.
func printVersion(_ rest: [String], globals: [String]) -> Int32 {
    let options = Set(rest + globals)
    guard options.isSubset(of: ["--json"]) else {
        printError("lnote: --version takes only --json\nusage: lnote --version [--json]")
        return ExitStatus.usage
    }
    if options.contains("--json") {
        printJSON(["version": lnoteVersion, "page_format": Int(PageFile.version), "package_format": DocumentMetadata.currentFormatVersion])
    } else {
        print(versionText())
    }
    return ExitStatus.ok
}

func runMain() async -> Int32 {
    var args = Array(CommandLine.arguments.dropFirst())
    // Global options may come before the command; they are handed to it as if written after.
    var globals: [String] = []
    while let first = args.first, first.hasPrefix("-") {
        if first == "--help" || first == "-h" { args = ["help"] + args.dropFirst(); break }
        if first == "--version" || first == "-V" { return printVersion(Array(args.dropFirst()), globals: globals) }
        let name = String(first.dropFirst(2).prefix { $0 != "=" })
        if first.hasPrefix("--") && globalFlags.contains(name) && !first.contains("=") {
            globals.append(first); args.removeFirst(); continue
        }
        if first.hasPrefix("--") && globalValuedOptions.contains(name) {
            if first.contains("=") { globals.append(first); args.removeFirst(); continue }
            guard args.count >= 2 else {
                printError("lnote: \(first) needs a value\nusage: lnote [--library DIR] [--json] COMMAND [OPTIONS]")
                return ExitStatus.usage
            }
            globals += args[0...1]; args.removeFirst(2); continue
        }
        printError("lnote: unknown option '\(terminalSafe(first))' before the command. Run 'lnote help' for the list.")
        return ExitStatus.usage
    }
    if args.isEmpty { args = ["help"] }
    var name = args.removeFirst()
    if name == "version" { return printVersion(args, globals: globals) }
    name = commandAliases[name] ?? name
    guard let type = commands.first(where: { $0.name == name }) else {
        printError("lnote: unknown command '\(terminalSafe(name))'. Run 'lnote help' for the list.")
        return ExitStatus.usage
    }
    // Before the command's own arguments, so that a `--` among them still ends every option.
    args = globals + args
    // Errors name files and titles from the library: escaped like every file-derived text.
    return await execute(type, args, tool: "lnote", shown: terminalSafe, describe: describeFailure)
}

// lnote reads and writes every engine's documents, and draws thumbnails.
Library.enableSQLiteEngine()
Library.enableThumbnails()

// Ctrl-C (SIGINT), SIGTERM or a closed terminal (SIGHUP) cancel the command: what it was making
// (an import's staging folder, an export's temporary file, a copy) is removed by the command's own
// cancellation on its way out, and what it had finished stays; the exit status is 128 + the
// signal. A second signal ends the process at once (the next command cleans up after it).
let work = Task { await runMain() }
let signalSources = Interruption.install(cancelling: work)
let status = await work.value
if let number = Interruption.received {
    exit(status == ExitStatus.ok ? ExitStatus.ok : 128 + number)
}
exit(status)
