// The command table of `lnote`: a person's commands. The developers' commands (benchmarks, the
// crash checker) are in `lnote-dev`; the command protocol, the option parser and the exit codes
// are in LnoteCommandLine, shared by both.

import Foundation
@_exported import LnoteCommandLine

/// Every subcommand, in the order `lnote help` lists them.
let commands: [any Command.Type] = [
    HelpCommand.self,
    DemoCommand.self,
    ListCommand.self,
    InfoCommand.self,
    NewCommand.self,
    VerifyCommand.self,
    RepairCommand.self,
    RestorePageCommand.self,
    MigrateCommand.self,
    RenderCommand.self,
    ThumbnailsCommand.self,
    ExportCommand.self,
    ImportCommand.self,
    CompactCommand.self,
    PagesCommand.self,
    PageCommand.self,
    RenameCommand.self,
    DuplicateCommand.self,
    DeleteCommand.self,
    RestoreCommand.self,
    EmptyTrashCommand.self,
    RemoteCommand.self,
    SyncCommand.self,
    HistoryCommand.self,
    CompletionCommand.self,
]

/// Other names a command answers to.
let commandAliases: [String: String] = ["trash": "delete"]

/// Options every command takes, accepted before the command name too (`lnote --json list`).
let globalValuedOptions: Set<String> = ["library"]
let globalFlags: Set<String> = ["json"]

extension OptionSpec {
    /// `--library DIR`, which every command takes.
    static let library = OptionSpec.valued("library", "DIR", default: "$LNOTE_LIBRARY, else \(defaultLibraryDescription)",
                                           "The library to work on.")
    /// `--json`, which every command takes.
    static let json = OptionSpec.flag("json", "Print the result as JSON on standard output.")
}
