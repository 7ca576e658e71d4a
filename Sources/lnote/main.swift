// lnote: the command-line tool over LulucatStore.

import Foundation


struct HelpCommand: Command {
    static let name = "help"
    static let abstract = "Show the commands, or one command's usage."
    static let usage = "lnote help [COMMAND]"
    var topic: String?
    init(arguments: [String]) throws {
        guard arguments.count <= 1 else { throw UsageError("help takes at most one command name") }
        topic = arguments.first
    }
    func run() async throws {
        if let topic {
            guard let c = commands.first(where: { $0.name == topic }) else { throw UsageError("no command named '\(topic)'") }
            print("\(c.usage)\n\n\(c.abstract)")
            return
        }
        print("lnote: the command-line tool of LulucatStore, the storage engine of Lulucat Notes.\n")
        print("Usage: lnote COMMAND [OPTIONS]\n\nCommands:")
        for c in commands { print("  " + c.name.padding(toLength: 12, withPad: " ", startingAt: 0) + c.abstract) }
        print("\nRun 'lnote COMMAND --help' for a command's options.")
    }
}

func runMain() async -> Int32 {
    var args = Array(CommandLine.arguments.dropFirst())
    if args.isEmpty { args = ["help"] }
    if args == ["--help"] || args == ["-h"] { args = ["help"] }
    let name = args.removeFirst()
    guard let type = commands.first(where: { $0.name == name }) else {
        printError("lnote: unknown command '\(name)'. Run 'lnote help' for the list.")
        return ExitStatus.usage
    }
    if args.contains("--help") || args.contains("-h") {
        print("\(type.usage)\n\n\(type.abstract)")
        return ExitStatus.ok
    }
    do {
        let command = try type.init(arguments: args)
        try await command.run()
        return ExitStatus.ok
    } catch let e as UsageError {
        printError("lnote \(name): \(e.message)\nusage: \(type.usage)")
        return ExitStatus.usage
    } catch let e as ExitCode {
        return e.code
    } catch {
        printError("lnote \(name): \(error)")
        return ExitStatus.failure
    }
}

exit(await runMain())
