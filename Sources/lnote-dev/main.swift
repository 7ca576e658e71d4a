// lnote-dev: the developers' commands of LulucatStore (benchmarks and the crash checker), kept
// apart from `lnote`, a person's tool, and from every library an app links.

import Foundation
@_exported import LnoteCommandLine
import LulucatStore
import LulucatStoreSQLite

let lnoteDev = Tool(name: "lnote-dev",
                    banner: "lnote-dev: the benchmarks, the crash checker and the hostile run of LulucatStore (release builds give honest figures).",
                    commands: [BenchCommand.self, CrashCheckCommand.self, HostileCommand.self],
                    hidden: [WriteLoopCommand.self, WithoutSQLiteCommand.self])
// Every command reads and writes every engine's documents, but the one that checks a build without it.
if CommandLine.arguments.dropFirst().first != WithoutSQLiteCommand.name { Library.enableSQLiteEngine() }
exit(await lnoteDev.run(Array(CommandLine.arguments.dropFirst())))
