// lnote completion: shell completion for bash and zsh, written from the commands' own option
// tables (the ones their parsers and their help read), so it cannot drift from what they accept.

import Foundation

struct CompletionCommand: Command {
    static let name = "completion"
    static let abstract = "Print a completion script for bash or zsh (commands, options and their values)."
    static let usage = "lnote completion bash|zsh"
    static let actions = ["bash", "zsh"]
    static let options: [OptionSpec] = []
    static let examples = [
        "source <(lnote completion bash)            # bash, this shell; add the line to ~/.bashrc to keep it",
        "lnote completion zsh > ~/.zfunc/_lnote     # zsh, with ~/.zfunc on $fpath before compinit",
    ]
    let shell: String
    init(arguments: [String]) throws {
        let args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1, let shell = args.positionals.first, Self.actions.contains(shell) else {
            throw UsageError("completion takes one shell: bash or zsh")
        }
        self.shell = shell
    }
    func run() async throws {
        print(shell == "bash" ? Self.bashScript() : Self.zshScript(), terminator: "")
    }

    /// What a value is completed with: a fixed list of words, folders, files, or nothing.
    enum ValueKind: Equatable {
        case words([String]), folders, files, none

        init(_ placeholder: String) {
            let words = placeholder.split(separator: "|").map(String.init)
                .filter { $0.allSatisfy { $0.isLowercase || $0.isNumber } }
            if placeholder.contains("|"), !words.isEmpty { self = .words(words) }
            else if placeholder == "DIR" { self = .folders }
            else if placeholder == "FILE" { self = .files }
            else { self = .none }
        }
    }

    static func optionWords(_ o: OptionSpec) -> [String] { (o.short.map { ["-" + $0] } ?? []) + ["--" + o.name] }

    /// Global options, before the command.
    static let globalWords = ["--library", "--json", "--help", "--version"]

    static func bashScript() -> String {
        var s = """
            # bash completion for lnote, written by `lnote completion bash`.
            _lnote() {
                local cur prev cmd at i opts actions
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                cmd=""
                at=0
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case "${COMP_WORDS[i]}" in
                        --library) ((i++)) ;;
                        -*) ;;
                        *) cmd="${COMP_WORDS[i]}"; at=$i; break ;;
                    esac
                done
                if [[ -z "$cmd" ]]; then
                    if [[ "$prev" == --library ]]; then COMPREPLY=($(compgen -d -- "$cur")); return; fi
                    if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "\(globalWords.joined(separator: " "))" -- "$cur"))
                    else COMPREPLY=($(compgen -W "\((["help"] + commands.map { $0.name }.filter { $0 != "help" }).joined(separator: " "))" -- "$cur")); fi
                    return
                fi
                opts="--help"
                actions=""
                case "$cmd" in

            """
        for c in commands {
            s += "        \(([c.name] + commandAliases.filter { $0.value == c.name }.keys.sorted()).joined(separator: "|")))\n"
            let valued = c.options.filter { $0.value != nil }
            if !valued.isEmpty {
                s += "            case \"$prev\" in\n"
                for o in valued {
                    let reply: String
                    switch ValueKind(o.value!) {
                    case .words(let w): reply = "COMPREPLY=($(compgen -W \"\(w.joined(separator: " "))\" -- \"$cur\"))"
                    case .folders: reply = "COMPREPLY=($(compgen -d -- \"$cur\"))"
                    case .files: reply = "COMPREPLY=($(compgen -f -- \"$cur\"))"
                    case .none: reply = "COMPREPLY=()"
                    }
                    s += "                \(optionWords(o).joined(separator: "|"))) \(reply); return ;;\n"
                }
                s += "            esac\n"
            }
            let words = c.options.flatMap(optionWords) + ["--help"]
            s += "            opts=\"\(words.joined(separator: " "))\"\n"
            if !c.actions.isEmpty { s += "            actions=\"\(c.actions.joined(separator: " "))\"\n" }
            s += "            ;;\n"
        }
        s += """
                esac
                if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); return; fi
                if [[ -n "$actions" && $COMP_CWORD -eq $((at + 1)) ]]; then COMPREPLY=($(compgen -W "$actions" -- "$cur")); return; fi
                COMPREPLY=($(compgen -f -- "$cur"))
            }
            complete -o filenames -F _lnote lnote

            """
        return s
    }

    /// Text inside a zsh `_arguments` spec between single quotes: no quote, brackets or colons
    /// that the spec would read as its own syntax.
    static func zshText(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''")
            .replacingOccurrences(of: "[", with: "(").replacingOccurrences(of: "]", with: ")")
            .replacingOccurrences(of: ":", with: "\\:")
    }

    static func zshValue(_ o: OptionSpec) -> String {
        guard let placeholder = o.value else { return "" }
        let action: String
        switch ValueKind(placeholder) {
        case .words(let w): action = "(\(w.joined(separator: " ")))"
        case .folders: action = "_files -/"
        case .files: action = "_files"
        case .none: action = " "
        }
        return ":\(zshText(placeholder)):\(action)"
    }

    static func zshScript() -> String {
        var s = """
            #compdef lnote
            # zsh completion for lnote, written by `lnote completion zsh`.
            _lnote() {
              local -a commands
              local line state
              commands=(

            """
        for c in commands {
            s += "    '\(zshText(c.name)):\(zshText(c.abstract))'\n"
            for alias in commandAliases.filter({ $0.value == c.name }).keys.sorted() {
                s += "    '\(zshText(alias)):\(zshText(c.abstract))'\n"
            }
        }
        s += """
              )
              _arguments -C \\
                '--library[The library to work on]:DIR:_files -/' \\
                '--json[Print the result as JSON]' \\
                '(- *)--help[Show the commands]' \\
                '(- *)--version[Show the version]' \\
                '1: :->command' \\
                '*:: :->args'
              case $state in
                command) _describe -t commands 'lnote command' commands ;;
                args)
                  case $line[1] in

            """
        for c in commands {
            s += "        \(([c.name] + commandAliases.filter { $0.value == c.name }.keys.sorted()).joined(separator: "|")))\n"
            s += "          _arguments \\\n"
            for o in c.options {
                let help = zshText(o.help)
                if let short = o.short {
                    s += "            '(-\(short) --\(o.name))'{-\(short),--\(o.name)}'[\(help)]\(zshValue(o))' \\\n"
                } else {
                    s += "            '--\(o.name)[\(help)]\(zshValue(o))' \\\n"
                }
            }
            s += "            '(- *)--help[Show this command'\\''s help]' \\\n"
            if !c.actions.isEmpty { s += "            '1:action:(\(c.actions.joined(separator: " ")))' \\\n" }
            s += "            '*:file:_files'\n          ;;\n"
        }
        s += """
                  esac
                  ;;
              esac
            }
            _lnote "$@"

            """
        return s
    }
}
