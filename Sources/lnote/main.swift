// lnote: the command-line tool over LulucatStore.

import Foundation

let lnote = Tool(name: "lnote",
                 banner: "lnote: the command-line tool of LulucatStore, the storage engine of Lulucat Notes.",
                 commands: commands)
exit(await lnote.run(Array(CommandLine.arguments.dropFirst())))
