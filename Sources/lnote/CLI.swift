// The command table of `lnote`: a person's commands. The developers' commands (benchmarks, the
// crash checker) are in `lnote-dev`.

import Foundation
@_exported import LnoteCommandLine

/// Every subcommand, in the order `lnote help` lists them (after `help` itself).
let commands: [any Command.Type] = [
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
]

