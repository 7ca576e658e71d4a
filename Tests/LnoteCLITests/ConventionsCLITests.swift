// The command line's conventions, walked over every command `lnote help` lists: each command's
// help lists its options (with defaults) and examples, every listed option is accepted and an
// unlisted one refused with 64 naming it, `--` ends options, shell completion is written from the
// same tables. Then titles, list orders, local times, remote removal, several imports at once and
// the library-wide export.

import Foundation
import Testing

/// One option as a command's help lists it.
struct ListedOption: Equatable {
    var name: String
    var takesValue: Bool
}

/// The commands `lnote help` lists.
func listedCommands() async throws -> [String] {
    let help = try await lnote(["help"])
    #expect(help.status == 0)
    let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(of: "Commands:") else { return [] }
    return lines[(start + 1)...].prefix { $0.hasPrefix("  ") }.map { String($0.split(separator: " ")[0]) }
}

/// The options of a command's help, from its "Options:" block.
func listedOptions(_ helpText: String) -> [ListedOption] {
    let lines = helpText.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(of: "Options:") else { return [] }
    var options: [ListedOption] = []
    for line in lines[(start + 1)...].prefix(while: { $0.hasPrefix("  ") }) {
        let trimmed = line.drop { $0 == " " }
        guard trimmed.hasPrefix("-") else { continue }  // a description on a line of its own
        // The synopsis ends at the first run of two spaces (or the line's end).
        let synopsis = trimmed.components(separatedBy: "  ")[0]
        let words = synopsis.split(separator: " ").map(String.init)
        guard let long = words.firstIndex(where: { $0.hasPrefix("--") }) else { continue }
        options.append(ListedOption(name: String(words[long].dropFirst(2)), takesValue: long + 1 < words.count))
    }
    return options
}

@Suite struct ConventionsCLITests {
    @Test func everyCommandListsItsOptionsAcceptsThemAndRefusesOthers() async throws {
        let commands = try await listedCommands()
        #expect(commands.count >= 20, "\(commands)")
        var walked = 0
        for command in commands where command != "help" {
            let help = try await lnote([command, "--help"])
            #expect(help.status == 0, "\(command)")
            #expect(help.stdout.contains("Examples:\n  lnote \(command)") || help.stdout.contains("Examples:\n  source"),
                    "\(command) --help has no example:\n\(help.stdout)")
            let options = listedOptions(help.stdout)
            // Every option the usage line names is in the table, and the table's help option too.
            let usageLine = help.stdout.components(separatedBy: "\n\n")[0]
            for word in usageLine.split(whereSeparator: { " []|()\n".contains($0) }) where word.hasPrefix("--") {
                #expect(options.contains { "--" + $0.name == word }, "\(command): \(word) is in the usage but not in Options")
            }
            #expect(options.contains(ListedOption(name: "help", takesValue: false)), "\(command)")
            for option in options where option.name != "help" {
                // Accepted by the parser: whatever else the command says, never "unknown option".
                let value = option.takesValue ? ["--\(option.name)=1"] : ["--\(option.name)"]
                let run = try await lnote([command] + value + ["--library", "/nonexistent/lnote-conventions"])
                #expect(!run.stderr.contains("unknown option"), "\(command) --\(option.name): \(run.stderr)")
                // A valued option without its value names the option.
                if option.takesValue {
                    let missing = try await lnote([command, "--\(option.name)"])
                    #expect(missing.status == 64 && missing.stderr.contains("--\(option.name) needs a value"),
                            "\(command) --\(option.name): \(missing.stderr)")
                }
                walked += 1
            }
            let unknown = try await lnote([command, "--no-such-option"])
            #expect(unknown.status == 64 && unknown.stderr.contains("--no-such-option"), "\(command): \(unknown.stderr)")
        }
        #expect(walked >= 60)
        // Defaults are said where there is one.
        let render = try await lnote(["render", "--help"])
        #expect(render.stdout.contains("--scale S") && render.stdout.contains("(default: 2)"), "\(render.stdout)")
        #expect(try await lnote(["help", "render"]).stdout == render.stdout)
    }

    @Test func doubleDashEndsOptions() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        // A title that looks like an option, after `--`; global options before the command still apply.
        let made = try await lnote(["--library", lib, "new", "--json", "--", "--help"])
        #expect(made.status == 0, "\(made.stderr)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])?["id"] as? String)
        let info = try await lnote(["info", "--library", lib, "--json", "--", "--help"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains(id))
        let renamed = try await lnote(["rename", "--library", lib, "--", "--help", "-o"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        let list = try await lnote(["list", "--json", "--library", lib])
        #expect(list.stdout.contains("\"title\" : \"-o\""), "\(list.stdout)")
    }

    /// Runs bash completion for `words` (the last one is the word being completed).
    func complete(_ words: [String], script: String) async throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let r = try await runProgram(URL(fileURLWithPath: "/bin/bash"),
                                     ["--norc", "-c", "source '\(script)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _lnote; printf '%s\\n' \"${COMPREPLY[@]}\""])
        #expect(r.status == 0, "\(r.stderr)")
        let data = Data(r.stdout.utf8)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash"), "needs bash"))
    func bashCompletionFollowsTheOptionTables() async throws {
        let tmp = TempDir()
        let script = tmp.path + "/lnote.bash"
        let text = try await lnote(["completion", "bash"])
        #expect(text.status == 0, "\(text.stderr)")
        try text.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        await #expect(try complete(["lnote", "li"], script: script) == ["list"])
        await #expect(try complete(["lnote", "--library", "x", "ren"], script: script).sorted() == ["rename", "render"])
        await #expect(try complete(["lnote", "new", "T", "--engine", ""], script: script) == ["snapshot", "journal", "sqlite"])
        await #expect(try complete(["lnote", "render", "D", "--fo"], script: script) == ["--format"])
        await #expect(try complete(["lnote", "render", "D", "--format", ""], script: script) == ["png", "jpg", "svg"])
        await #expect(try complete(["lnote", "export", "D", "--format", ""], script: script) == ["zip", "inkml"])
        await #expect(try complete(["lnote", "page", ""], script: script) == ["add", "remove", "move"])
        await #expect(try complete(["lnote", "remote", "re"], script: script) == ["remove"])
        await #expect(try complete(["lnote", "list", "--s"], script: script) == ["--sort"])
        await #expect(try complete(["lnote", "list", "--sort", "t"], script: script) == ["title"])
        #expect(try await lnote(["completion", "fish"]).status == 64)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") || FileManager.default.isExecutableFile(atPath: "/bin/zsh"),
                   "needs zsh"))
    func zshCompletionIsAValidScript() async throws {
        let tmp = TempDir()
        let script = tmp.path + "/_lnote"
        let text = try await lnote(["completion", "zsh"])
        #expect(text.status == 0 && text.stdout.hasPrefix("#compdef lnote\n"))
        try text.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        let zsh = FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") ? "/usr/bin/zsh" : "/bin/zsh"
        let checked = try await runProgram(URL(fileURLWithPath: zsh), ["-n", script])
        #expect(checked.status == 0, "\(checked.stderr)")
        // Every command and every long option of a command is in it.
        for command in try await listedCommands() { #expect(text.stdout.contains("'\(command):"), "\(command)") }
        #expect(text.stdout.contains("'--sort[") && text.stdout.contains("(modified created title pages)"))
    }

    @Test func titlesListOrdersAndLocalTimes() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        for title in ["banana bread", "Apple pie", "cherry jam", "Apple crumble"] {
            #expect(try await lnote(["new", title, "--library", lib]).status == 0)
        }
        // Any case, the start of a title; an ambiguous start lists the candidates.
        let one = try await lnote(["info", "CHERRY", "--library", lib, "--json"])
        #expect(one.status == 0 && one.stdout.contains("cherry jam"), "\(one.stderr)")
        let ambiguous = try await lnote(["info", "apple", "--library", lib])
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderr.contains("matches 2 documents") && ambiguous.stderr.contains("'Apple pie'")
                && ambiguous.stderr.contains("'Apple crumble'"), "\(ambiguous.stderr)")

        func titles(_ args: [String]) async throws -> [String] {
            let run = try await lnote(["list", "--json", "--library", lib] + args)
            #expect(run.status == 0, "\(run.stderr)")
            return (try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [[String: Any]]).map { $0["title"] as! String }
        }
        await #expect(try titles(["--sort", "title"]) == ["Apple crumble", "Apple pie", "banana bread", "cherry jam"])
        await #expect(try titles(["--sort", "created"]) == ["Apple crumble", "cherry jam", "Apple pie", "banana bread"])
        await #expect(try titles([]) == titles(["--sort", "modified"]))
        let table = try await lnote(["list", "--sort", "title", "--library", lib])
        let rows = table.stdout.split(separator: "\n").dropFirst().map { $0.dropFirst(12).prefix(13) }
        #expect(rows == ["Apple crumble", "Apple pie    ", "banana bread ", "cherry jam   "], "\(table.stdout)")
        let bad = try await lnote(["list", "--sort", "size", "--library", lib])
        #expect(bad.status == 64 && bad.stderr.contains("--sort takes modified, created, title or pages"))

        // People read local time with its offset; JSON keeps UTC for programs.
        let tokyo = try await lnote(["info", "cherry", "--library", lib], environment: ["TZ": "Asia/Tokyo"])
        let utc = try await lnote(["info", "cherry", "--library", lib], environment: ["TZ": "UTC"])
        let stamp = #/modified  (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ([+-]\d{4})/#
        let t = try #require(tokyo.stdout.firstMatch(of: stamp)), u = try #require(utc.stdout.firstMatch(of: stamp))
        #expect(t.output.2 == "+0900" && u.output.2 == "+0000", "\(tokyo.stdout)\n\(utc.stdout)")
        let parse = DateFormatter()
        parse.locale = Locale(identifier: "en_US_POSIX")
        parse.dateFormat = "yyyy-MM-dd HH:mm:ss xx"
        let tokyoDate = try #require(parse.date(from: "\(t.output.1) \(t.output.2)"))
        let utcDate = try #require(parse.date(from: "\(u.output.1) \(u.output.2)"))
        #expect(tokyoDate == utcDate)
        let json = try await lnote(["info", "cherry", "--library", lib, "--json"], environment: ["TZ": "Asia/Tokyo"])
        #expect(json.stdout.contains("Z\""), "\(json.stdout)")
    }

    @Test func remoteRemoveForgetsTheRemoteAndNothingElse() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib", remote = tmp.path + "/remote"
        #expect(try await lnote(["new", "Notes", "--library", lib]).status == 0)
        #expect(try await lnote(["remote", "add", remote, "--create", "--library", lib]).status == 0)
        let synced = try await lnote(["sync", "--library", lib])
        #expect(synced.status == 0, "\(synced.stderr)")
        let heads = try FileManager.default.contentsOfDirectory(atPath: remote + "/heads")
        let removed = try await lnote(["remote", "remove", "--library", lib])
        #expect(removed.status == 0 && removed.stdout.contains("removed: \(remote)"), "\(removed.stdout)\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: lib + "/.sync/remote.json"))
        #expect(try await lnote(["remote", "--library", lib]).stdout.contains("No remote set"))
        // The remote and the document are untouched; removing again is said and harmless.
        #expect(try FileManager.default.contentsOfDirectory(atPath: remote + "/heads") == heads)
        #expect(try await lnote(["verify", "--library", lib]).status == 0)
        let again = try await lnote(["remote", "remove", "--library", lib])
        #expect(again.status == 0 && again.stdout.contains("nothing to remove"))
        // Added again, the same remote resumes: nothing to push or pull.
        #expect(try await lnote(["remote", "add", remote, "--library", lib]).status == 0)
        let status = try await lnote(["sync", "--status", "--json", "--library", lib])
        #expect(status.status == 0, "\(status.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(object?["to_push"] as? [Any] == nil || (object?["to_push"] as? [Any])?.isEmpty == true, "\(status.stdout)")
        #expect(try await lnote(["remote", "remove", "extra", "--library", lib]).status == 64)
    }

    @Test func exportAllIsABackupThatImportRestores() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib", back = tmp.path + "/restored", folder = tmp.path + "/backup"
        #expect(try await lnote(["demo", "--library", lib]).status == 0)
        #expect(try await lnote(["new", "a/b: \"odd\" title", "--library", lib]).status == 0)
        #expect(try await lnote(["new", "a/b: \"odd\" title", "--library", lib]).status == 0)
        let before = try JSONSerialization.jsonObject(with: Data(try await lnote(["list", "--json", "--library", lib]).stdout.utf8)) as! [[String: Any]]
        let exported = try await lnote(["export", "--all", "-o", folder, "--library", lib, "--json"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".zip") }.sorted()
        #expect(files.count == before.count)
        #expect(files.allSatisfy { !$0.contains("/") && !$0.hasPrefix(".") })
        // Several files in one import, each reported.
        let imported = try await lnote(["import"] + files.map { folder + "/" + $0 } + ["--library", back])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("\(files.count) of \(files.count) files imported"))
        let after = try JSONSerialization.jsonObject(with: Data(try await lnote(["list", "--json", "--library", back]).stdout.utf8)) as! [[String: Any]]
        func summary(_ entries: [[String: Any]]) -> [String] {
            entries.map { "\($0["id"]!) \($0["title"]!) \($0["page_count"]!)" }.sorted()
        }
        #expect(summary(after) == summary(before))
        #expect(try await lnote(["verify", "--library", back]).status == 0)
        // A page renders the same from the backup as from the library.
        let id = try #require(before.first { ($0["page_count"] as? Int ?? 0) > 1 }?["id"] as? String)
        #expect(try await lnote(["render", id, "--page", "2", "-o", tmp.path + "/a.svg", "--library", lib]).status == 0)
        #expect(try await lnote(["render", id, "--page", "2", "-o", tmp.path + "/b.svg", "--library", back]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: tmp.path + "/a.svg")) == Data(contentsOf: URL(fileURLWithPath: tmp.path + "/b.svg")))

        // One bad file among good ones: the good go in, the bad is named, exit 1.
        try Data("not an export".utf8).write(to: URL(fileURLWithPath: tmp.path + "/bad.zip"))
        let mixed = try await lnote(["import", folder + "/" + files[0], tmp.path + "/bad.zip", "--library", tmp.path + "/third", "--json"])
        #expect(mixed.status == 1)
        let results = try JSONSerialization.jsonObject(with: Data(mixed.stdout.utf8)) as! [[String: Any]]
        #expect(results.count == 2 && results[0]["id"] != nil && results[1]["error"] != nil, "\(mixed.stdout)")
        #expect(try await lnote(["import", folder + "/" + files[0], folder + "/" + files[1], "--title", "T"]).status == 64)
        #expect(try await lnote(["export", "--all", "-o", folder, "--page", "1", "--library", lib]).status == 64)
        #expect(try await lnote(["export", "D", "--all", "-o", folder, "--library", lib]).status == 64)
    }
}
