// lnote-dev: the developers' commands of LulucatStore (benchmarks and the crash checker), kept
// apart from `lnote`, a person's tool, and from every library an app links.

import Foundation
@_exported import LnoteCommandLine
import LulucatStore
import LulucatStoreSQLite
import LulucatStoreThumbnails

let lnoteDev = Tool(name: "lnote-dev",
                    banner: "lnote-dev: the benchmarks, the crash checker and the hostile run of LulucatStore (release builds give honest figures).",
                    commands: [BenchCommand.self, CrashCheckCommand.self, HostileCommand.self],
                    hidden: [WriteLoopCommand.self, WithoutSQLiteCommand.self, WithoutThumbnailsCommand.self])
// Every command reads and writes every engine's documents and draws thumbnails, but the two that
// check a build without one of those opt-in products.
let commandName = CommandLine.arguments.dropFirst().first
if commandName != WithoutSQLiteCommand.name { Library.enableSQLiteEngine() }
if commandName != WithoutThumbnailsCommand.name { Library.enableThumbnails() }
exit(await lnoteDev.run(Array(CommandLine.arguments.dropFirst())))
