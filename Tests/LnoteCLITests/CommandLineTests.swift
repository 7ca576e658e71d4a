// The command line as a person uses it, through the built binary: paths and the default library,
// flags honoured or refused, safe terminal output, the document and page commands, and help that
// agrees with the README and with what each command accepts.

import Foundation
import Testing
import LulucatStoreTesting

/// Runs `lnote` in `directory` with `environment` added (and `removing` taken out).
@discardableResult
func lnote(_ args: [String], in directory: String, environment: [String: String] = [:], removing: [String] = []) async throws -> Run {
    try await runProgram(try lnoteURL(), args, environment: environment, removing: removing, in: directory)
}

func json(_ run: Run) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\n\(run.stderr)")
}

func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// A library with one document; returns its id.
func newDocument(_ title: String, library: String, extra: [String] = []) async throws -> String {
    let r = try await lnote(["new", title, "--library", library, "--json"] + extra)
    #expect(r.status == 0, "\(r.stderr)")
    return try json(r)["id"] as! String
}

@Suite struct PathTests {
    @Test func relativeLibraryIsResolvedAgainstTheWorkingDirectory() async throws {
        let tmp = TempDir()
        let made = try await lnote(["new", "Rel", "--library", "rel/L", "--json"], in: tmp.path)
        #expect(made.status == 0, "\(made.stderr)")
        let path = try json(made)["path"] as! String
        #expect(path.hasPrefix(tmp.path + "/rel/L/"), "\(path)")
        #expect(exists(path))
        #expect(!exists("/rel"))
        // $LNOTE_LIBRARY relative too, and `.`/`..` resolved by name.
        let env = try await lnote(["new", "Env", "--json"], in: tmp.path + "/rel", environment: ["LNOTE_LIBRARY": "./x/../lib"])
        #expect(env.status == 0, "\(env.stderr)")
        #expect((try json(env)["path"] as! String).hasPrefix(tmp.path + "/rel/lib/"))
        #expect(!exists("/lib/" + (try json(env)["id"] as! String) + ".lnote"))
        // A relative library named "lib", where /lib exists: the working directory's, not the root's.
        let lib = try await lnote(["list", "--library", "lib", "--json"], in: tmp.path + "/rel")
        #expect(lib.status == 0, "\(lib.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(lib.stdout.utf8)) as? [Any])?.count == 1)
    }

    @Test func theDefaultLibraryIsThePlatformsPlaceForNotes() async throws {
        let tmp = TempDir()
        let home = tmp.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let xdg = try await lnote(["new", "X", "--json"], in: tmp.path, environment: ["HOME": home, "XDG_DATA_HOME": tmp.path + "/data"],
                            removing: ["LNOTE_LIBRARY"])
        #expect(xdg.status == 0, "\(xdg.stderr)")
        let plain = try await lnote(["new", "H", "--json"], in: tmp.path, environment: ["HOME": home], removing: ["LNOTE_LIBRARY", "XDG_DATA_HOME"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #if canImport(Darwin)
        #expect((try json(xdg)["path"] as! String).hasPrefix(home + "/Documents/Notes/"))
        #expect((try json(plain)["path"] as! String).hasPrefix(home + "/Documents/Notes/"))
        #else
        #expect((try json(xdg)["path"] as! String).hasPrefix(tmp.path + "/data/lulucat/Notes/"))
        #expect((try json(plain)["path"] as! String).hasPrefix(home + "/.local/share/lulucat/Notes/"))
        #expect(!exists(home + "/Documents"))
        #endif
    }

    @Test func demoTwiceAddsNothingAndNegativeSeedsAreRefused() async throws {
        let tmp = TempDir()
        #expect(try await lnote(["demo", "--library", tmp.path]).status == 0)
        let again = try await lnote(["demo", "--library", tmp.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("kept Sketchbook: already in the library"))
        #expect(again.stdout.contains("4 documents in"))
        #expect(!again.stdout.contains("nan"))
        // --json, before the command too: one JSON object on stdout, the lines a person reads on stderr.
        let j = try await lnote(["--json", "demo", "--library", tmp.path])
        #expect(j.status == 0, "\(j.stderr)")
        let summary = try json(j)
        #expect((summary["kept"] as? [String])?.count == 4 && (summary["written"] as? [String])?.isEmpty == true)
        #expect(summary["save_median_ms"] is NSNull)
        #expect(j.stderr.contains("kept Sketchbook"))
        let list = try JSONSerialization.jsonObject(with: Data(try await lnote(["list", "--json", "--library", tmp.path]).stdout.utf8)) as! [[String: Any]]
        #expect(list.count == 4)
        #expect(Set(list.map { $0["title"] as! String }).count == 4)
        for bad in ["-1", "x", "99999999999999999999999"] {
            let r = try await lnote(["demo", "--seed", bad, "--library", tmp.path + "/other"])
            #expect(r.status == 64, "\(bad): \(r.stderr)")
            #expect(r.stderr.contains("--seed"))
        }
        #expect(!exists(tmp.path + "/other"))
    }

    @Test func packagePathsWorkWhereverDocDoes() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Target", library: lib)
        let package = lib + "/" + id + ".lnote"
        let relative = "lib/" + id + ".lnote"
        for ref in [package, relative, relative + "/"] {
            let info = try await lnote(["info", ref, "--json"], in: tmp.path, removing: ["LNOTE_LIBRARY"])
            #expect(info.status == 0, "\(ref): \(info.stderr)")
            #expect(try json(info)["id"] as? String == id)
        }
        // An InkML page into the package, named by path, from a library elsewhere.
        let inkml = tmp.path + "/page.inkml"
        #expect(try await lnote(["export", id, "-o", inkml, "--library", lib]).status == 0)
        let into = try await lnote(["import", inkml, "--into", relative, "--library", tmp.path + "/elsewhere", "--json"], in: tmp.path)
        #expect(into.status == 0, "\(into.stderr)")
        #expect(try json(into)["id"] as? String == id)
        let pages = try json(try await lnote(["pages", package, "--json"]))["pages"] as! [[String: Any]]
        #expect(pages.count == 2)
        #expect(!exists(tmp.path + "/elsewhere"))
        // A bare package name finds the library's package; a path that is not a package is refused by name.
        #expect(try await lnote(["info", id + ".lnote", "--library", lib], in: tmp.path + "/lib/..").status == 0)
        let bad = try await lnote(["info", tmp.path + "/nothing.lnote"])
        #expect(bad.status == 1)
        let none = try await lnote(["info", tmp.path + "/" + id + ".lnote"])
        #expect(none.status == 1 && none.stderr.contains("no document package at"), "\(none.stderr)")
        // Delete and restore by package path: the trash of the package's own library.
        #expect(try await lnote(["delete", package], in: tmp.path).status == 0)
        #expect(!exists(package) && exists(lib + "/.trash/" + id + ".lnote"))
        let back = try await lnote(["restore", "lib/.trash/" + id + ".lnote"], in: tmp.path)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(exists(package))
    }
}

@Suite struct FlagTests {
    /// A document of three pages, the first with a stroke-free image-less page.
    func threePages(_ lib: String) async throws -> String {
        let id = try await newDocument("Three", library: lib)
        for _ in 0..<2 { #expect(try await lnote(["page", "add", id, "--library", lib]).status == 0) }
        return id
    }

    @Test func exportAndImportHonourOrRefuseEveryFlag() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await threePages(lib)

        // InkML of a multi-page document: refused without --page or --all-pages, naming both.
        let vague = try await lnote(["export", id, "-o", tmp.path + "/d.inkml", "--library", lib])
        #expect(vague.status == 64)
        #expect(vague.stderr.contains("--page") && vague.stderr.contains("--all-pages"))
        #expect(!exists(tmp.path + "/d.inkml"))
        let all = try await lnote(["export", id, "--all-pages", "-o", tmp.path + "/d.inkml", "--library", lib, "--json"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect((try json(all)["files"] as? [Any])?.count == 3)
        for n in 1...3 { #expect(exists(tmp.path + "/d-\(n).inkml")) }
        let one = try await lnote(["export", id, "--page", "2", "-o", tmp.path + "/two.inkml", "--library", lib])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(try await lnote(["export", id, "--page", "2", "--all-pages", "-o", tmp.path + "/x.inkml", "--library", lib]).status == 64)

        // Zip: --page refused; unknown extensions refused; a mismatched --format refused.
        for args in [["--page", "1", "-o", tmp.path + "/d.zip"], ["-o", tmp.path + "/d.tar"], ["--format", "inkml", "-o", tmp.path + "/d.zip"],
                     ["-o", tmp.path + "/noext"]] {
            let r = try await lnote(["export", id, "--library", lib] + args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
        #expect(!exists(tmp.path + "/d.tar") && !exists(tmp.path + "/d.zip") && !exists(tmp.path + "/noext"))
        // Render: a --format that contradicts the file name, or a name that tells nothing, is refused.
        // --quality on a lossless format would be ignored: refused too (issue 33).
        for args in [["--format", "svg", "-o", tmp.path + "/p.png"], ["-o", tmp.path + "/p.tar"], ["-o", tmp.path + "/p.png", "--quality", "50"],
                     ["-o", tmp.path + "/p.svg", "--quality", "50"]] {
            let r = try await lnote(["render", id, "--library", lib] + args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
        #expect(!exists(tmp.path + "/p.png") && !exists(tmp.path + "/p.tar") && !exists(tmp.path + "/p.svg"))
        #expect(try await lnote(["render", id, "--library", lib, "-o", tmp.path + "/p.jpg", "--quality", "50"]).status == 0)
        // "-o -" is not a file named "-" (issue 33): refused.
        for command in ["render", "export"] {
            let r = try await lnote([command, id, "--library", lib, "-o", "-", "--format", command == "render" ? "png" : "zip"])
            #expect(r.status == 64 && r.stderr.contains("standard output"), "\(command): \(r.stderr)")
        }
        #expect(!exists(FileManager.default.currentDirectoryPath + "/-"))

        // import X.zip --title T gives the new document that title.
        let zip = tmp.path + "/d.zip"
        #expect(try await lnote(["export", id, "-o", zip, "--library", lib]).status == 0)
        let imported = try await lnote(["import", zip, "--title", "Renamed on import", "--library", tmp.path + "/other", "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try json(imported)["title"] as? String == "Renamed on import")
        #expect(try await lnote(["import", zip, "--into", id, "--library", lib]).status == 64)
        #expect(try await lnote(["import", tmp.path + "/two.inkml", "--into", id, "--title", "T", "--library", lib]).status == 64)
    }

    @Test func wrongInputsGetClearErrorsAndLeaveNothing() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let folder = tmp.path + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let dir = try await lnote(["import", folder, "--library", lib])
        #expect(dir.status == 1)
        #expect(dir.stderr.contains("is a folder"), "\(dir.stderr)")
        #expect(!dir.stderr.contains("NSCocoaErrorDomain"))
        try Data("{\"points\": [[1, 2, 3, 0.5]]}\n".utf8).write(to: URL(fileURLWithPath: tmp.path + "/ink.jsonl"))
        try Data("# Notes\n\nhello\n".utf8).write(to: URL(fileURLWithPath: tmp.path + "/notes.md"))
        for name in ["ink.jsonl", "notes.md"] {
            let r = try await lnote(["import", tmp.path + "/" + name, "--library", lib])
            #expect(r.status == 1)
            #expect(r.stderr.contains("neither a one-file export (.zip) nor an InkML file"), "\(name): \(r.stderr)")
            #expect(!r.stderr.contains("zip") || !r.stderr.contains("broken"))
        }
        let missing = try await lnote(["import", tmp.path + "/nope.zip", "--library", lib])
        #expect(missing.status == 1 && missing.stderr.contains("nope.zip"))
        #expect(!exists(lib))
        #if os(Linux)
        #expect(mkfifo(tmp.path + "/fifo.zip", 0o600) == 0)
        let fifo = try await lnote(["import", tmp.path + "/fifo.zip", "--library", lib])
        #expect(fifo.status == 1 && fifo.stderr.contains("not a regular file"), "\(fifo.stderr)")
        #endif
    }

    @Test func outputsThatAreNotRegularFilesAreRefused() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Out", library: lib)
        let folder = tmp.path + "/out"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(mkfifo(tmp.path + "/fifo.png", 0o600) == 0)
        #expect(mkfifo(tmp.path + "/fifo.zip", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: tmp.path + "/link.zip", withDestinationPath: tmp.path + "/elsewhere.zip")
        let cases: [([String], String)] = [
            (["export", id, "-o", folder], "is a folder"),
            (["export", id, "-o", folder + "/"], "names a folder"),
            (["render", id, "-o", folder + "/missing/page.png"], "missing does not exist"),
            (["export", id, "-o", folder + "/missing/d.zip"], "missing does not exist"),
            (["render", id, "-o", tmp.path + "/fifo.png"], "a FIFO"),
            (["export", id, "-o", tmp.path + "/fifo.zip"], "a FIFO"),
            (["export", id, "-o", tmp.path + "/link.zip"], "symbolic link"),
            (["render", id, "-o", lib + "/" + id + ".lnote/pages/x.png"], "inside a document package"),
            (["export", id, "-o", lib + "/" + id + ".lnote/d.zip"], "inside a document package"),
        ]
        for (args, expected) in cases {
            let r = try await lnote(args + ["--library", lib])
            #expect(r.status == 1, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(expected), "\(args): \(r.stderr)")
            #expect(!r.stderr.contains(".lnote-tmp"), "\(args): \(r.stderr)")
        }
        var st = stat()
        #expect(lstat(tmp.path + "/fifo.png", &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)
        #expect(!exists(tmp.path + "/elsewhere.zip"))
        // A regular file is replaced as before.
        try Data("old".utf8).write(to: URL(fileURLWithPath: tmp.path + "/page.png"))
        #expect(try await lnote(["render", id, "-o", tmp.path + "/page.png", "--library", lib]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: tmp.path + "/page.png")).prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func numbersAreCheckedForRange() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Numbers", library: lib)
        for args in [["render", id, "-o", tmp.path + "/p.png", "--quality", "1000"], ["render", id, "-o", tmp.path + "/p.png", "--scale", "nan"],
                     ["render", id, "-o", tmp.path + "/p.png", "--scale", "inf"], ["render", id, "-o", tmp.path + "/p.png", "--page", "0"],
                     ["render", id, "-o", tmp.path + "/p.png", "--page", "99999999999999999999999"],
                     ["thumbnails", id, "--width", "-5"], ["page", "add", id, "--at", "-1"], ["page", "add", id, "--at", "9"],
                     ["page", "add", id, "--size", "1e308x10"], ["page", "move", id, "1", "--to", "0"], ["demo", "--seed", "-1"]] {
            let r = try await lnote(args + ["--library", lib])
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
        #expect(!exists(tmp.path + "/p.png"))
    }
}

@Suite struct TerminalOutputTests {
    @Test func fileTextIsEscapedOnTheTerminalAndExactInJSON() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let title = "Evil\u{1B}]0;owned\u{07}\u{1B}[2J\nforged row\r\u{202E}txt.exe\u{9B}\u{7F}\\end"
        let id = try await newDocument(title, library: lib)
        for args in [["list"], ["info", id], ["pages", id], ["rename", id, title], ["duplicate", id], ["delete", id], ["list", "--trash"]] {
            let r = try await lnote(args + ["--library", lib])
            #expect(r.status == 0, "\(args): \(r.stderr)")
            for bad in ["\u{1B}", "\u{07}", "\u{202E}", "\u{9B}", "\u{7F}", "\r"] {
                #expect(!r.stdout.contains(bad), "\(args) prints \(bad.unicodeScalars.first!.value)")
            }
            // `list` cuts titles at 28 characters; the others show them whole.
            let shown = args[0] == "list" ? "Evil\\e]0;owned\\u{7}\\e[2J" : "Evil\\e]0;owned\\u{7}\\e[2J\\nforged row\\r\\u{202E}txt.exe\\u{9B}\\u{7F}\\\\end"
            #expect(r.stdout.contains(shown), "\(args): \(r.stdout)")
        }
        // `list` shows one row per document: the newline cannot forge another.
        let list = try await lnote(["list", "--library", lib])
        #expect(list.stdout.split(separator: "\n").count == 2, "\(list.stdout)")
        // JSON keeps the exact title, with the terminal controls escaped as JSON escapes.
        let j = try await lnote(["list", "--json", "--library", lib])
        #expect(!j.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E || $0.value == 0x9B || $0.value == 0x7F })
        #expect(j.stdout.contains("\\u202e"))
        let entries = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as! [[String: Any]]
        #expect(entries.map { $0["title"] as? String } == [title + " copy"])
        // Findings that name a file planted in a package are escaped.
        let package = lib + "/.trash/" + id + ".lnote"
        #expect(FileManager.default.createFile(atPath: package + "/pages/\u{1B}]0;x\u{07}.content", contents: Data()))
        for args in [["verify", package], ["repair", package]] {
            let r = try await lnote(args)
            #expect(!r.stdout.contains("\u{1B}") && !r.stdout.contains("\u{07}"), "\(args): \(r.stdout)")
            if args[0] == "verify" { #expect(r.stdout.contains("\\e]0;x\\u{7}.content"), "\(r.stdout)") }
        }
        // Error messages that quote file text are escaped too.
        let err = try await lnote(["info", "\u{1B}[31mred", "--library", lib])
        #expect(err.status == 1 && !err.stderr.contains("\u{1B}") && err.stderr.contains("\\e[31mred"))
    }
}

@Suite struct DocumentCommandTests {
    @Test func renameDuplicateTrashRestoreEmpty() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("First", library: lib)
        #expect(try await lnote(["rename", id, "Second", "--library", lib]).status == 0)
        let dup = try await lnote(["duplicate", "Second", "--title", "Third", "--library", lib, "--json"])
        #expect(dup.status == 0, "\(dup.stderr)")
        let copy = try json(dup)["id"] as! String
        let titles = { () async throws -> [String] in
            (try JSONSerialization.jsonObject(with: Data(try await lnote(["list", "--json", "--library", lib]).stdout.utf8)) as! [[String: Any]]).map { $0["title"] as! String }.sorted()
        }
        #expect(try await titles() == ["Second", "Third"])
        // delete and its other name, trash.
        #expect(try await lnote(["delete", "Second", "--library", lib]).status == 0)
        #expect(try await lnote(["trash", String(copy.prefix(8)), "--library", lib]).status == 0)
        #expect(try await titles() == [])
        let trash = try await lnote(["list", "--trash", "--json", "--library", lib])
        #expect((try JSONSerialization.jsonObject(with: Data(trash.stdout.utf8)) as! [Any]).count == 2)
        #expect(try await lnote(["restore", "Second", "--library", lib]).status == 0)
        #expect(try await titles() == ["Second"])
        #expect(try await lnote(["restore", "Nothing", "--library", lib]).status == 1)
        // A trashed copy whose id is in the library again is not restored over it.
        let twin = lib + "/.trash/" + id + ".lnote"
        try FileManager.default.copyItem(atPath: lib + "/" + id + ".lnote", toPath: twin)
        let clash = try await lnote(["restore", id, "--library", lib])
        #expect(clash.status == 1 && clash.stderr.contains("already in the library"), "\(clash.stderr)")
        #expect(exists(twin) && exists(lib + "/" + id + ".lnote"))
        try FileManager.default.removeItem(atPath: twin)
        // empty-trash deletes for good only when told so.
        let unsure = try await lnote(["empty-trash", "--library", lib])
        #expect(unsure.status == 64 && unsure.stderr.contains("--yes"))
        #expect(try await lnote(["list", "--trash", "--library", lib]).stdout.contains("1 document"))
        #expect(try await lnote(["empty-trash", "--yes", "--library", lib]).status == 0)
        #expect(try await lnote(["list", "--trash", "--library", lib]).stdout.contains("No documents"))
        #expect(try await lnote(["verify", "--library", lib]).status == 0)
        #expect(try await lnote(["rename", id, "--library", lib]).status == 64)
    }

    @Test func pagesListsUsableReferencesAndPageChangesThem() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Pages", library: lib)
        #expect(try await lnote(["page", "add", id, "--size", "a4", "--library", lib]).status == 0)
        let added = try await lnote(["page", "add", id, "--at", "1", "--size", "100x200.5", "--library", lib, "--json"])
        #expect(added.status == 0, "\(added.stderr)")
        let newPage = try json(added)["page_id"] as! String
        #expect(try json(added)["number"] as? Int == 1)
        let listed = try await lnote(["pages", id, "--library", lib])
        #expect(listed.stdout.contains("PAGE") && listed.stdout.contains("ID") && listed.stdout.contains("SIZE (pt)"))
        #expect(listed.stdout.contains("100x200.5") && listed.stdout.contains("595x842") && listed.stdout.contains("612x792"))
        var pages = try json(try await lnote(["pages", id, "--json", "--library", lib]))["pages"] as! [[String: Any]]
        #expect(pages.map { $0["id"] as! String }.first == newPage)
        #expect(pages.map { $0["number"] as! Int } == [1, 2, 3])
        // Move by id prefix, then render by number: the references pages shows work.
        #expect(try await lnote(["page", "move", id, String(newPage.prefix(6)), "--to", "3", "--library", lib]).status == 0)
        pages = try json(try await lnote(["pages", id, "--json", "--library", lib]))["pages"] as! [[String: Any]]
        #expect(pages.last?["id"] as? String == newPage)
        #expect(try await lnote(["render", id, "--page", "3", "-o", tmp.path + "/p.svg", "--library", lib]).status == 0)
        #expect(try await lnote(["render", id, "--page", String(newPage.prefix(8)), "-o", tmp.path + "/q.svg", "--library", lib]).status == 0)
        #expect(try await lnote(["page", "remove", id, "3", "--library", lib]).status == 0)   // empty: no --yes needed
        #expect((try json(try await lnote(["pages", id, "--json", "--library", lib]))["pages"] as! [Any]).count == 2)
        #expect(try await lnote(["page", "remove", id, "9", "--library", lib]).status == 64)
        #expect(try await lnote(["page", "frob", id, "--library", lib]).status == 64)
        #expect(try await lnote(["verify", id, "--library", lib]).status == 0)
    }

    @Test func aPageWithInkIsRemovedOnlyWithYes() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        #expect(try await lnote(["demo", "--library", lib]).status == 0)
        let pages = try json(try await lnote(["pages", "Weekly meeting", "--json", "--library", lib]))["pages"] as! [[String: Any]]
        #expect(pages.count == 5)
        let refused = try await lnote(["page", "remove", "Weekly meeting", "2", "--library", lib])
        #expect(refused.status == 64 && refused.stderr.contains("--yes"))
        #expect((try json(try await lnote(["pages", "Weekly meeting", "--json", "--library", lib]))["pages"] as! [Any]).count == 5)
        #expect(try await lnote(["page", "remove", "Weekly meeting", "2", "--yes", "--library", lib]).status == 0)
        let after = try json(try await lnote(["pages", "Weekly meeting", "--json", "--library", lib]))["pages"] as! [[String: Any]]
        #expect(after.map { $0["id"] as! String } == pages.enumerated().filter { $0.offset != 1 }.map { $0.element["id"] as! String })
        // A zip export of a document with an image, to InkML: the image is reported, not dropped silently.
        let sketch = try await lnote(["export", "Sketchbook", "--page", "1", "-o", tmp.path + "/s.inkml", "--library", lib])
        #expect(sketch.status == 0 && sketch.stderr.contains("1 image left out"), "\(sketch.stderr)")
        // Progress lines on a library-wide check, though the output is not a terminal.
        let verify = try await lnote(["verify", "--library", lib])
        #expect(verify.status == 0)
        #expect(verify.stderr.contains("verifying 1/4") && verify.stderr.contains("verifying 4/4"), "\(verify.stderr)")
    }

    @Test func migrateAllPrintsProgressWhenNotOnATerminal() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let a = try await newDocument("A", library: lib), b = try await newDocument("B", library: lib)
        let r = try await lnote(["migrate", "--all", "--engine", "journal", "--library", lib])
        #expect(r.status == 0, "\(r.stderr)")
        for id in [a, b] {
            #expect(r.stderr.contains("\(id): writing page 1/1") && r.stderr.contains("\(id): verifying page 1/1"), "\(r.stderr)")
        }
        // Standard output is the result alone.
        #expect(!r.stdout.contains("writing page") && r.stdout.contains("snapshot -> journal"))
        let j = try await lnote(["migrate", "--all", "--engine", "snapshot", "--library", lib, "--json"])
        #expect(try json(j)["ok"] as? Bool == true)
    }

    @Test func versionAndGlobalOptionsBeforeTheCommand() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let v = try await lnote(["--version"])
        #expect(v.status == 0 && v.stdout.hasPrefix("lnote ") && v.stdout.contains("page format"))
        #expect(try await lnote(["version"]).stdout == v.stdout)
        // --json is honoured before or after --version; anything else is refused, never ignored.
        for args in [["--version", "--json"], ["--json", "--version"], ["version", "--json"]] {
            let j = try await lnote(args)
            #expect(j.status == 0, "\(args)")
            #expect(try json(j)["version"] as? String == v.stdout.split(separator: " ")[1].description, "\(j.stdout)")
        }
        #expect(try await lnote(["--version", "--bogus"]).status == 64)
        #expect(try await lnote(["version", "extra"]).status == 64)
        let made = try await lnote(["--library", lib, "--json", "new", "Before"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try json(made)["id"] != nil)
        let listed = try await lnote(["--json", "--library=" + lib, "list"])
        #expect((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [Any])?.count == 1)
        // A full id of no document, or of one in the trash, says so (not "document.json is corrupt");
        // a title longer than list's column ends in an ellipsis (issue 33).
        let long = try await lnote(["new", "A title far longer than the column of list", "--library", lib, "--json"])
        let longID = try #require(try json(long)["id"] as? String)
        #expect(try await lnote(["list", "--library", lib]).stdout.contains("A title far longer than the…"))
        let absent = try await lnote(["rename", UUID().uuidString, "X", "--library", lib])
        #expect(absent.status == 1 && absent.stderr.contains("no document") && !absent.stderr.contains("corrupt"), "\(absent.stderr)")
        #expect(try await lnote(["delete", longID, "--library", lib]).status == 0)
        let trashed = try await lnote(["rename", longID, "X", "--library", lib])
        #expect(trashed.status == 1 && trashed.stderr.contains("is in the trash") && trashed.stderr.contains("lnote restore"), "\(trashed.stderr)")
        // A second document of one title is made, with a warning naming its id (issue 33).
        let first = try await lnote(["new", "Twins", "--library", lib])
        #expect(first.status == 0 && !first.stderr.contains("warning"), "\(first.stderr)")
        let second = try await lnote(["new", "Twins", "--library", lib, "--json"])
        #expect(second.status == 0 && second.stderr.contains("warning: another document is titled 'Twins'"), "\(second.stderr)")
        #expect(try json(second)["id"] != nil, "standard output stays JSON")
        // A library named on the command line that is not there is refused, not listed as empty (issue 33).
        let typo = try await lnote(["list", "--library", tmp.path + "/no-such-library"])
        #expect(typo.status == 1 && typo.stderr.contains("there is no library"), "\(typo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/no-such-library"))
        // A library reached through a symbolic link is a library.
        try FileManager.default.createSymbolicLink(atPath: tmp.path + "/lib-link", withDestinationPath: lib)
        #expect(try await lnote(["list", "--library", tmp.path + "/lib-link"]).status == 0)
        #expect(try await lnote(["--frob", "list"]).status == 64)
        #expect(try await lnote(["--library"]).status == 64)
    }
}

@Suite struct HelpTests {
    /// README.md of this checkout.
    static let readme: String? = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<3 {
            dir = dir.deletingLastPathComponent()
            if let s = try? String(contentsOf: dir.appendingPathComponent("README.md"), encoding: .utf8) { return s }
        }
        return nil
    }()

    /// Help, README and behaviour agree: every command `lnote help` lists has a `--help` whose
    /// usage line is in the README word for word, and accepts every option its usage names.
    @Test(.enabled(if: readme != nil, "needs the README beside the sources"))
    func everyCommandsHelpMatchesTheReadmeAndTheParser() async throws {
        let readme = try #require(HelpTests.readme)
        let help = try await lnote(["help"])
        #expect(help.status == 0)
        let names = help.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), let name = line.split(separator: " ").first else { return nil }
            return String(name)
        }
        #expect(names.count >= 20, "\(names)")
        for required in ["delete", "restore", "empty-trash", "rename", "duplicate", "pages", "page"] { #expect(names.contains(required)) }
        let tmp = TempDir()
        for name in names {
            let r = try await lnote([name, "--help"])
            #expect(r.status == 0, "\(name)")
            let lines = r.stdout.components(separatedBy: "\n\n")[0].split(separator: "\n").map(String.init)
            for line in lines {
                #expect(line.hasPrefix("lnote \(name)"), "\(name): \(line)")
                #expect(readme.contains(line), "README lacks: \(line)")
                // Optional parts are bracketed, and come after what is required.
                #expect(!line.contains("] -"), "\(line)")
            }
            #expect(try await lnote(["help", name]).stdout == r.stdout)
            let usage = lines.joined(separator: " ")
            guard !["bench", "crashcheck", "help"].contains(name) else { continue }
            // Every option the usage names is one the command accepts (never "unknown option").
            let options = Set(usage.split(whereSeparator: { " [|]()=".contains($0) }).filter { $0.hasPrefix("-") && $0.count > 1 }.map(String.init))
            for option in options {
                let sub = name == "page" ? ["add"] : []
                let r = try await lnote([name] + sub + [option, "1", "x", "y", "z", "w", "--library", tmp.path + "/lib"])
                #expect(!r.stderr.contains("unknown option"), "\(name) \(option): \(r.stderr)")
                #expect(r.status == 64 || r.status == 1, "\(name) \(option): \(r.status)")
            }
        }
        #expect(try await lnote(["new", "--help"]).stdout.contains("sqlite"))
        #expect(try await lnote(["render", "--help"]).stdout.contains("[--page N]"))
        #expect(!exists(tmp.path + "/lib"))
    }
}

@Suite struct JSONOutputTests {
    /// Every key of a JSON value, at every depth.
    static func keys(_ value: Any) -> [String] {
        if let d = value as? [String: Any] { return d.keys + d.values.flatMap(keys) }
        if let a = value as? [Any] { return a.flatMap(keys) }
        return []
    }

    @Test func everyCommandsJSONUsesSnakeCaseKeys() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Keys", library: lib)
        let runs: [[String]] = [
            ["list"], ["list", "--trash"], ["info", id], ["pages", id], ["page", "add", id], ["page", "move", id, "2", "--to", "1"],
            ["page", "remove", id, "1"], ["rename", id, "Keys 2"], ["verify"], ["verify", id], ["repair", id], ["compact", id],
            ["thumbnails", id], ["render", id, "-o", tmp.path + "/p.svg"], ["export", id, "-o", tmp.path + "/d.zip"],
            ["export", id, "-o", tmp.path + "/d.inkml"], ["import", tmp.path + "/d.zip"], ["import", tmp.path + "/d.inkml"],
            ["migrate", id, "--engine", "journal"], ["duplicate", id], ["delete", id], ["restore", id], ["empty-trash", "--yes"],
            ["new", "More"],
        ]
        for args in runs {
            let r = try await lnote(args + ["--json", "--library", lib])
            #expect(r.status == 0, "\(args): \(r.stderr)")
            let value = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
            for key in JSONOutputTests.keys(value) {
                #expect(key.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }, "\(args): key \(key)")
            }
        }
    }

    /// `lnote list --json` is written entry by entry; its text is what JSONSerialization wrote for
    /// the whole array before (pretty, sorted keys, slashes unescaped), byte for byte: every
    /// escape, the optional keys, newest first, the empty library and the trash.
    @Test func listJSONIsWrittenAsJSONSerializationWritesIt() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        func reserialized(_ text: String) async throws -> String {
            let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
            let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self) + "\n"
        }
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        let empty = try await lnote(["list", "--json", "--library", lib])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout == "[\n\n]\n", "\(empty.stdout.debugDescription)")
        await #expect(try reserialized(empty.stdout) == empty.stdout)
        // (A NUL cannot reach a title through an argument; ManifestParserTests covers it.)
        let titles = ["plain", "quote \" back \\ slash / tab\t nl\n cr\r bell\u{7} bs\u{8} ff\u{C} us\u{1F}",
                      "日本語 😀 é", "", String(repeating: "long ", count: 200)]
        var ids: [String] = []
        for t in titles { await ids.append(try newDocument(t, library: lib)) }
        // A damaged manifest (shown from document.json, with a problem) and a needs-repair marker.
        try Data("{".utf8).write(to: URL(fileURLWithPath: lib + "/" + ids[1] + ".lnote/manifest.json"))
        try Data("a torn page".utf8).write(to: URL(fileURLWithPath: lib + "/" + ids[2] + ".lnote/.needs-repair"))
        let r = try await lnote(["list", "--json", "--library", lib])
        #expect(r.status == 0, "\(r.stderr)")
        await #expect(try reserialized(r.stdout) == r.stdout, "\(r.stdout)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(Set(entries.map { $0["title"] as! String }) == Set(titles))
        #expect(entries.map { $0["id"] as! String } == ids.reversed())  // newest first
        #expect(entries.contains { ($0["problem"] as? String)?.contains("manifest missing or corrupt") == true })
        #expect(entries.contains { $0["needs_repair"] as? Bool == true })
        #expect(entries.allSatisfy { $0["cover_page_id"] is String && $0["page_count"] as? Int == 1 })
        #expect(try await lnote(["delete", ids[0], "--library", lib]).status == 0)
        let trash = try await lnote(["list", "--trash", "--json", "--library", lib])
        #expect(trash.status == 0, "\(trash.stderr)")
        await #expect(try reserialized(trash.stdout) == trash.stdout, "\(trash.stdout)")
        #expect(trash.stdout.contains(ids[0]))
    }
}

/// A library on a read-only volume: every command that would write says the library cannot be
/// written, in the one error format, naming the library (not the lock or staging file that
/// refused first), and exits 1 with the library as it was.
@Suite(.serialized) struct ReadOnlyLibraryMessageTests {
    @Test(.enabled(if: ReadOnlyMount.available, "needs a read-only bind mount (root with CAP_SYS_ADMIN)"))
    func aReadOnlyLibrarySaysSo() async throws {
        let tmp = TempDir()
        let source = tmp.path + "/src", ro = tmp.path + "/ro"
        let id = try await newDocument("First", library: source)
        #expect(ReadOnlyMount.mount(source, at: ro))
        defer { ReadOnlyMount.unmount(ro) }
        let said = ": the library \(ro) cannot be written: it is on a read-only file system\n"
        for args in [["new", "Second"], ["rename", "First", "Renamed"], ["page", "add", "First"], ["delete", "First"],
                     ["repair", "First"], ["compact", "First"], ["thumbnails", "First", "--rebuild"], ["remote", "add", tmp.path + "/remote", "--create"]] {
            let r = try await lnote(args + ["--library", ro])
            #expect(r.status == 1, "\(args): \(r.stdout) \(r.stderr)")
            #expect(r.stderr == "lnote \(args[0])" + said, "\(args)")
        }
        let migrate = try await lnote(["migrate", "First", "--engine", "journal", "--library", ro])
        #expect(migrate.status == 1 && migrate.stderr.hasPrefix("lnote migrate: \(id)" + said), "\(migrate.stderr)")
        let list = try await lnote(["list", "--json", "--library", ro])
        #expect(list.status == 0 && list.stdout.contains("\"title\" : \"First\""), "\(list.stdout)")
    }
}
