// lnote list, info, new, verify: the library and its documents from the command line.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite

/// Prints a value as pretty JSON with sorted keys (terminal controls in strings escaped).
func printJSON(_ value: Any) {
    LnoteCommandLine.printJSON(value, shown: jsonText)
}

/// A finding as JSON.
func findingJSON(_ f: Finding) -> [String: Any] {
    ["severity": f.severity.rawValue, "path": f.path, "message": f.message]
}

/// Progress of long work on standard error, so standard output stays the result: rewritten in
/// place on a terminal, one line per step otherwise (a log, a pipe, CI).
struct ProgressLine {
    let live = isatty(STDERR_FILENO) == 1
    func step(_ text: String) {
        FileHandle.standardError.write(Data((live ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }
    func done() {
        if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// How far one long step is, for an operation's `progress` callback: "LABEL: 45%", shown only
    /// once the step has taken `delay` seconds (`LNOTE_PROGRESS_DELAY`, else 1), so a quick step
    /// shows nothing. On a terminal the line is rewritten at each whole percent; otherwise a line
    /// is written at each tenth (10%, 20%, ...), so a log gets at most ten.
    func percent(_ label: String) -> @Sendable (OperationProgress) -> Void {
        let delay = ProcessInfo.processInfo.environment["LNOTE_PROGRESS_DELAY"].flatMap(Double.init) ?? 1
        let shown = PercentShown(start: Date(), delay: delay)
        let line = self
        return { p in
            guard p.total > 0 else { return }
            let percent = p.completed * 100 / p.total
            guard shown.advance(to: line.live ? percent : percent / 10 * 10) else { return }
            line.step("\(label): \(percent)%")
        }
    }
}

/// The last percent a `ProgressLine.percent` showed (reports may come from another thread).
private final class PercentShown: @unchecked Sendable {
    private let lock = NSLock()
    private let start: Date
    private let delay: Double
    private var last = -1
    init(start: Date, delay: Double) { self.start = start; self.delay = delay }
    /// Whether `percent` is news worth a line: above the last shown, once the delay has passed.
    func advance(to percent: Int) -> Bool {
        lock.withLock {
            guard percent > last, Date().timeIntervalSince(start) >= delay else { return false }
            last = percent
            return true
        }
    }
}

func iso(_ date: Date) -> String {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return f.string(from: date)
}

struct ListCommand: Command {
    static let name = "list"
    static let abstract = "List the documents of the library (reads one manifest each), or of its trash."
    static let options: [OptionSpec] = [
        .flag("trash", "List the trash instead of the library."),
        .valued("sort", "modified|created|title|pages", default: "modified",
                "The order: newest change first, newest first, by title, most pages first."),
        .library, .json,
    ]
    static let examples = ["lnote list", "lnote list --sort title", "lnote list --trash --json"]
    static let usage = "lnote list [--trash] [--sort modified|created|title|pages] [--library DIR] [--json]"
    let args: Arguments
    /// The order `--sort` asked for; nil for the library's own.
    let order: (@Sendable (LibraryEntry, LibraryEntry) -> Bool)?
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.isEmpty else { throw UsageError("list takes no arguments") }
        order = try ListCommand.order(args.value("sort"))
    }
    func run() async throws {
        let lib = library(args)
        // A library named on the command line that is not there is a typo, not an empty library.
        if args.value("library") != nil, !isDirectory(lib.root) {
            printError("lnote list: there is no library at \(terminalSafe(lib.root)) (mistyped? 'lnote new TITLE --library DIR' makes one)")
            throw ExitCode(code: ExitStatus.failure)
        }
        let trash = args.flag("trash")
        if args.flag("json") {
            // Written entry by entry as the library hands them out, never as one array or one
            // string: memory stays small in a library of any size. The text is what printJSON
            // printed for the whole array (JSONSerialization, pretty, sorted keys), byte for byte.
            // Another order than the library's needs the entries first (then sorted, then written).
            let dates = ISO8601DateFormatter()
            dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var first = true
            func write(_ e: LibraryEntry) {
                var o = PrettyJSONObject(indent: 1)
                if let c = e.coverPageID { o.add("cover_page_id", string: c.uuidString) }
                o.add("created", string: dates.string(from: e.created))
                o.add("id", string: e.id.uuidString)
                o.add("modified", string: dates.string(from: e.modified))
                o.add("needs_repair", literal: e.needsRepair ? "true" : "false")
                o.add("page_count", literal: String(e.pageCount))
                o.add("path", string: e.package.path)
                if let p = e.problem { o.add("problem", string: p) }
                o.add("title", string: e.title)
                print(jsonText((first ? "\n  " : ",\n  ") + o.text), terminator: "")
                first = false
            }
            print("[", terminator: "")
            if let order {
                (trash ? try lib.trashedDocuments() : try lib.list()).sorted(by: order).forEach(write)
            } else {
                try lib.forEachDocument(inTrash: trash, write)
            }
            print(first ? "\n\n]" : "\n]")
            return
        }
        var entries = trash ? try lib.trashedDocuments() : try lib.list()
        if let order { entries.sort(by: order) }
        let place = trash ? "the trash of \(lib.root)" : lib.root
        if entries.isEmpty { print("No documents in \(place)."); return }
        print("\(entries.count) document\(entries.count == 1 ? "" : "s") in \(place)")
        let time = LocalTime()
        for e in entries {
            let pages = "\(e.pageCount) page\(e.pageCount == 1 ? "" : "s")"
            // A title longer than its column ends in an ellipsis (the full one is in --json).
            let full = terminalSafe(e.title)
            let title = full.count > 28 ? String(full.prefix(27)) + "…" : full
            print("  \(e.id.uuidString.prefix(8))  \(title.padding(toLength: 28, withPad: " ", startingAt: 0))  \(pages.padding(toLength: 10, withPad: " ", startingAt: 0))  \(time.string(e.modified))\(e.problem.map { "  (\(terminalSafe($0)))" } ?? "")")
        }
    }

    /// The order `--sort` names; nil for the library's own (the newest change first).
    static func order(_ key: String?) throws -> (@Sendable (LibraryEntry, LibraryEntry) -> Bool)? {
        switch key {
        case nil, "modified": return nil
        case "created": return { ($0.created, $0.id.uuidString) > ($1.created, $1.id.uuidString) }
        case "title":
            return {
                let c = $0.title.localizedStandardCompare($1.title)
                return c == .orderedSame ? $0.id.uuidString < $1.id.uuidString : c == .orderedAscending
            }
        case "pages": return { ($0.pageCount, $0.id.uuidString) > ($1.pageCount, $1.id.uuidString) }
        case let other?: throw UsageError("--sort takes modified, created, title or pages, not '\(other)'")
        }
    }
}

/// Times as a person reads them: the local date and time to the second (to the minute when
/// `seconds` is false: a history's column), with the zone's offset (`2026-12-07 09:15:42 +0100`).
/// JSON keeps ISO 8601 in UTC, for programs.
struct LocalTime {
    private let formatter: DateFormatter
    init(seconds: Bool = true) {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone.current
        f.dateFormat = seconds ? "yyyy-MM-dd HH:mm:ss xx" : "yyyy-MM-dd HH:mm xx"
        formatter = f
    }
    func string(_ date: Date) -> String { formatter.string(from: date) }
}

struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "Show a document's metadata and pages."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote info \"Lecture notes\"", "lnote info 1A2B --json"]
    static let usage = "lnote info DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("info takes one document") }
    }
    func run() async throws {
        let doc = try DocumentInfo.read(try resolvePackage(args.positionals[0], in: library(args)))
        if args.flag("json") {
            printJSON([
                "id": doc.metadata.id.uuidString, "title": doc.metadata.title, "engine": doc.metadata.engine.rawValue,
                "codec": doc.metadata.codec, "created": iso(doc.metadata.created), "modified": iso(doc.metadata.modified),
                "path": doc.package.path, "bytes": doc.totalBytes,
                "pages": doc.metadata.pages.enumerated().map { i, p -> [String: Any] in
                    ["index": i, "id": p.id.uuidString, "width_pt": Double(p.width) / 10, "height_pt": Double(p.height) / 10,
                     "elements": p.elementCount, "bytes": doc.pageBytes[p.id] ?? 0, "modified": iso(p.modified)]
                },
            ])
            return
        }
        let m = doc.metadata
        print("\(terminalSafe(m.title))\n  id        \(m.id.uuidString)\n  path      \(doc.package.path)")
        let time = LocalTime()
        print("  engine    \(m.engine.rawValue) (\(m.codec))\n  created   \(time.string(m.created))\n  modified  \(time.string(m.modified))")
        print("  pages     \(m.pages.count), \(counted(doc.totalBytes, "byte")) on disk")
        for (i, p) in m.pages.enumerated() {
            print("    \(String(i + 1).padding(toLength: 4, withPad: " ", startingAt: 0)) \(p.id.uuidString.prefix(8))  \(Double(p.width) / 10)x\(Double(p.height) / 10) pt  \(counted(p.elementCount, "element"))  \(counted(doc.pageBytes[p.id] ?? 0, "byte"))")
        }
    }
}

/// A document's metadata and the sizes of its files, read without opening a session.
struct DocumentInfo {
    var package: DocumentPackage
    var metadata: DocumentMetadata
    var pageBytes: [UUID: Int]
    var totalBytes: Int

    static func read(_ package: DocumentPackage) throws -> DocumentInfo {
        let metadata = try DocumentMetadata.read(package)
        var pageBytes: [UUID: Int] = [:]
        let fm = FileManager.default
        for p in metadata.pages {
            var size = 0
            for path in [package.pagePath(p.id), package.journalPath(p.id)] {
                size += (try? fm.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            }
            pageBytes[p.id] = size
        }
        // A SQLite document's pages are rows of content.sqlite: their stored bytes, not files.
        if metadata.engine == .sqlite, let store = try? SQLiteContentStore(path: package.contentDatabasePath, mode: .openExisting) {
            for (id, bytes) in (try? store.storedBytes()) ?? [:] where pageBytes[id] != nil { pageBytes[id] = bytes }
            store.closeWithoutCheckpoint()
        }
        var total = 0
        if let e = fm.enumerator(atPath: package.path) {
            while let rel = e.nextObject() as? String {
                guard (e.fileAttributes?[.type] as? FileAttributeType) == .typeRegular else { continue }
                total += (try? fm.attributesOfItem(atPath: package.path + "/" + rel)[.size] as? Int) ?? 0
            }
        }
        return DocumentInfo(package: package, metadata: metadata, pageBytes: pageBytes, totalBytes: total)
    }
}

struct NewCommand: Command {
    static let name = "new"
    static let abstract = "Create a document with one empty page."
    static let options: [OptionSpec] = [.valued("engine", "snapshot|journal|sqlite", default: "snapshot", "How the document stores its pages."), .valued("codec", "compact|fixed16", default: "compact", "How its pages code the samples."), .library, .json]
    static let examples = ["lnote new \"Lecture notes\"", "lnote new \"Sketchbook\" --engine journal"]
    static let usage = "lnote new TITLE [--engine snapshot|journal|sqlite] [--codec compact|fixed16] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("new takes one title") }
        if let c = args.value("codec"), SampleCodecID(name: c) == nil { throw UsageError("unknown codec '\(c)'") }
        if let e = args.value("engine"), EngineKind(rawValue: e) == nil {
            throw UsageError("unknown engine '\(e)' (one of \(EngineKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
    }
    func run() async throws {
        let codec = args.value("codec").flatMap(SampleCodecID.init(name:)) ?? .compact
        let engine = args.value("engine").flatMap(EngineKind.init(rawValue:)) ?? .snapshot
        let lib = library(args)
        let title = args.positionals[0]
        // A second document of the same title is allowed, but said: a title then names neither.
        let namesakes = ((try? lib.list()) ?? []).filter { $0.title == title }.count
        let package = try lib.createDocument(title: title, engine: engine, codec: codec)
        if namesakes > 0 {
            printError("lnote new: warning: \(namesakes == 1 ? "another document is" : "\(namesakes) other documents are") "
                       + "titled '\(terminalSafe(title))'; name this one by its id (\(package.id.uuidString.prefix(8)))")
        }
        if args.flag("json") { printJSON(["id": package.id.uuidString, "path": package.path]) } else {
            print("Created \(package.id.uuidString) at \(package.path)")
        }
    }
}

struct VerifyCommand: Command {
    static let name = "verify"
    static let abstract = "Check every invariant of a document, or of the whole library."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote verify", "lnote verify \"Lecture notes\" --json"]
    static let usage = "lnote verify [DOC] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count <= 1 else { throw UsageError("verify takes at most one document") }
    }
    func run() async throws {
        let lib = library(args)
        let packages: [DocumentPackage]
        if let ref = args.positionals.first {
            packages = [try resolvePackage(ref, in: lib)]
        } else {
            packages = try lib.list().map(\.package)
        }
        let verifier = DocumentVerifier()
        var results: [(DocumentPackage, [Finding])] = []
        let progress = packages.count > 1 ? ProgressLine() : nil
        for (i, p) in packages.enumerated() {
            progress?.step("verifying \(i + 1)/\(packages.count) \(p.id.uuidString)")
            results.append((p, verifier.verify(p)))
        }
        progress?.done()
        // What a killed import or copy left in the library: never a document, removed by the next
        // import or create once an hour old (`lnote repair` of any document removes them at once).
        let staging = args.positionals.isEmpty
            ? lib.stagingFolders().map { Finding(.warning, $0, "staging folder of an import or copy that did not finish (removed by the next lnote command that creates or imports a document)") } : []
        let errors = results.reduce(0) { $0 + $1.1.filter { $0.severity == .error }.count }
        let warnings = results.reduce(0) { $0 + $1.1.filter { $0.severity == .warning }.count } + staging.count
        if args.flag("json") {
            printJSON([
                "documents": results.map { p, f -> [String: Any] in
                    ["id": p.id.uuidString, "path": p.path, "ok": !f.contains { $0.severity == .error },
                     "findings": f.map(findingJSON)]
                },
                "staging": staging.map { ["severity": $0.severity.rawValue, "path": $0.path, "message": $0.message] },
                "errors": errors, "warnings": warnings, "ok": errors == 0,
            ])
        } else {
            for (p, findings) in results {
                let bad = findings.contains { $0.severity == .error }
                print("\(bad ? "FAIL" : "ok  ")  \(p.id.uuidString)")
                // Pages by their number in the document, as a person knows them.
                let pages = findings.isEmpty ? [] : ((try? PackageReader.readDocument(p, fileSystem: PosixFileSystem()))?.pages.map(\.id) ?? [])
                for f in findings { print("      \(terminalSafe(numberingPages("\(f)", pages)))") }
            }
            for f in staging { print("warn  \(f)") }
            print("\(counted(results.count, "document")) checked: \(counted(errors, "error")), \(counted(warnings, "warning"))")
        }
        if errors > 0 { throw ExitCode(code: ExitStatus.failure) }
    }
}

