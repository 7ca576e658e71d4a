// lnote export and import: one-file archives and W3C InkML.

import Foundation
import LulucatInk
import LulucatStore
import LulucatInterchange

/// A page named on the command line: its 1-based number (as `pages` lists it), or its id or a
/// unique prefix of the id (4 characters or more). Digits name a page by number when there is
/// such a page, else by id prefix (an id can begin with digits only, "12345678-…").
func resolvePage(_ ref: String, of metadata: DocumentMetadata) throws -> (number: Int, id: UUID) {
    let pages = metadata.pages
    let lower = ref.lowercased()
    let matches = pages.enumerated().filter { lower.count >= 4 && $0.element.id.uuidString.lowercased().hasPrefix(lower) }
    if !ref.isEmpty && ref.allSatisfy(\.isASCII) && ref.allSatisfy(\.isNumber) {
        if let n = Int(ref), n >= 1 && n <= pages.count { return (n, pages[n - 1].id) }
        guard matches.count == 1 else {
            throw UsageError("--page \(ref) is outside 1...\(pages.count) (lnote pages DOC lists them)")
        }
    }
    guard matches.count == 1 else {
        throw UsageError(matches.isEmpty ? "no page '\(ref)': give its number or (4 or more characters of) its id, as lnote pages DOC lists them"
                                         : "page '\(ref)' matches \(counted(matches.count, "page")); give more of the id")
    }
    return (matches[0].offset + 1, matches[0].element.id)
}

/// The InkML files for some pages of a document. The boundary with the InkML writer: today one
/// file per page; when `InkMLWriter` writes several pages into one file, this returns one.
func inkMLFiles(_ pages: [PageContent]) -> [Data] {
    pages.map(InkMLWriter.write)
}

/// `out` for the page numbered `number` when pages go to separate files: `notes.inkml` becomes
/// `notes-3.inkml`.
func numberedPath(_ out: String, _ number: Int) -> String {
    let url = URL(fileURLWithPath: out)
    let ext = url.pathExtension
    let stem = ext.isEmpty ? out : String(out.dropLast(ext.count + 1))
    return stem + "-\(number)" + (ext.isEmpty ? "" : "." + ext)
}

struct ExportCommand: Command {
    static let name = "export"
    static let abstract = "Export a document as one file (zip), or its pages as InkML (--page N or --all-pages)."
    static let options: [OptionSpec] = [
        .valued("output", "FILE", short: "o", "The file to write (required); with --all, the folder."),
        .valued("format", "zip|inkml", default: "from the file name", "The export format."),
        .valued("page", "N", default: "every page in one file", "InkML: export one page (number or id)."),
        .flag("all-pages", "InkML: one file per page, named FILE-1.inkml, FILE-2.inkml, ..."),
        .flag("all", "Every document of the library, one zip each, into the folder -o names (made if missing): a backup 'lnote import FOLDER/*.zip' restores."),
        .library, .json,
    ]
    static let examples = ["lnote export \"Lecture notes\" -o lecture.zip", "lnote export \"Lecture notes\" -o lecture.inkml --page 2",
                           "lnote export --all -o ~/notes-backup"]
    static let usage = "lnote export DOC -o FILE.zip|FILE.inkml [--page N | --all-pages] [--format zip|inkml] [--library DIR] [--json]\n"
        + "lnote export --all -o FOLDER [--library DIR] [--json]"
    let args: Arguments
    let format: String
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        if args.flag("all") {
            guard args.positionals.isEmpty else { throw UsageError("--all exports every document: name none") }
            guard args.value("o") ?? args.value("output") != nil else { throw UsageError("name the backup folder with -o FOLDER") }
            guard args.value("page") == nil, !args.flag("all-pages"), args.value("format") ?? "zip" == "zip" else {
                throw UsageError("--all writes one zip per document: --page, --all-pages and --format inkml do not apply")
            }
            format = "all"
            return
        }
        guard args.positionals.count == 1 else { throw UsageError("export takes one document") }
        guard let out = args.value("o") ?? args.value("output") else { throw UsageError("name the output file with -o FILE") }
        if let f = args.value("format"), !["zip", "inkml"].contains(f) { throw UsageError("unknown format '\(f)' (zip or inkml)") }
        // A folder, a FIFO or a device is refused before the name is read for a format.
        _ = try checkedOutputPath(out)
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        let byName: String? = ext == "zip" ? "zip" : ext == "inkml" ? "inkml" : nil
        switch (args.value("format"), byName) {
        case let (f?, n?) where f != n: throw UsageError("--format \(f) does not match the file name '\(out)'")
        case let (f?, _): format = f
        case let (nil, n?): format = n
        case (nil, nil): throw UsageError("cannot tell the format from '\(out)': name the file .zip or .inkml, or say --format zip|inkml")
        }
        if args.value("page") != nil && args.flag("all-pages") { throw UsageError("say --page N or --all-pages, not both") }
        if format == "zip" && args.value("page") != nil {
            throw UsageError("--page applies to InkML export; a zip export carries the whole document")
        }
    }
    func run() async throws {
        let lib = library(args)
        let shown = (args.value("o") ?? args.value("output"))!
        if format == "all" { return try await exportAll(lib, to: shown) }
        let out = try checkedOutputPath(shown)
        let doc = try resolveDocument(args.positionals[0], in: lib)
        switch format {
        case "inkml":
            let metadata = try DocumentMetadata.read(doc.package)
            var numbers: [Int]
            if let ref = args.value("page") {
                numbers = [try resolvePage(ref, of: metadata).number]
            } else if args.flag("all-pages") || metadata.pages.count == 1 {
                numbers = Array(1...max(1, metadata.pages.count))
            } else {
                throw UsageError("the document has \(metadata.pages.count) pages: say --page N for one, or --all-pages for every page (one InkML file each, \(numberedPath(shown, 1)), \(numberedPath(shown, 2)), ...)")
            }
            if metadata.pages.isEmpty { numbers = [] }
            guard !numbers.isEmpty else { throw PathError("the document has no pages to export") }
            let contents = try numbers.map { try StoredPage.read(doc.package, page: metadata.pages[$0 - 1].id) }
            let files = inkMLFiles(contents)
            // One file for the pages, or one file per page named page by page.
            let targets: [(shown: String, path: String)] = files.count == 1
                ? [(shown, out)]
                : try numbers.map { n in (numberedPath(shown, n), try checkedOutputPath(numberedPath(shown, n))) }
            var written: [[String: Any]] = []
            for (i, data) in files.enumerated() {
                try writeOutput(data, to: targets[i].path, as: targets[i].shown)
                let pageContents = files.count == 1 ? contents : [contents[i]]
                written.append(["path": targets[i].shown, "bytes": data.count,
                                "pages": files.count == 1 ? numbers : [numbers[i]],
                                "strokes": pageContents.reduce(0) { $0 + $1.strokes.count },
                                "samples": pageContents.reduce(0) { $0 + $1.sampleCount }])
            }
            // What InkML cannot carry is said, never dropped silently.
            var warnings: [String] = []
            for (n, c) in zip(numbers, contents) {
                let images = c.images.count, others = c.elements.count - c.strokes.count - images
                if images > 0 { warnings.append("page \(n): \(images) image\(images == 1 ? "" : "s") left out (InkML has no images; a zip export keeps them)") }
                if others > 0 { warnings.append("page \(n): \(others) element\(others == 1 ? "" : "s") of unknown kind left out") }
            }
            for w in warnings { printError("lnote export: warning: \(w)") }
            if args.flag("json") {
                printJSON(["format": "inkml", "files": written, "warnings": warnings,
                           "strokes": contents.reduce(0) { $0 + $1.strokes.count },
                           "samples": contents.reduce(0) { $0 + $1.sampleCount }])
            } else {
                for w in written {
                    let pages = (w["pages"] as! [Int]).map(String.init).joined(separator: ", ")
                    print("Wrote \(w["path"]!) (inkml, page\((w["pages"] as! [Int]).count == 1 ? "" : "s") \(pages), \(w["bytes"]!) bytes)")
                }
            }
        default:
            let bytes: Int
            let line = ProgressLine()
            defer { line.done() }
            let report = args.flag("json") ? { @Sendable _ in } : line.percent("exporting to \(terminalSafe(shown))")
            do { bytes = try await DocumentTransfer.exportArchive(doc.id, from: doc.library, to: out, progress: report) } catch let e as FileError where splitParent(e.path) == splitParent(out) {
                throw PathError("cannot write '\(shown)': \(String(cString: strerror(e.errno)))")
            } catch StoreError.file(let e) where splitParent(e.path) == splitParent(out) {
                throw PathError("cannot write '\(shown)': \(String(cString: strerror(e.errno)))")
            }
            if args.flag("json") { printJSON(["format": "zip", "path": shown, "bytes": bytes]) } else {
                print("Wrote \(shown) (zip, \(counted(bytes, "byte")))")
            }
        }
    }

    /// `export --all`: one zip per document into `folder`, named by title and id so that titles
    /// alike never overwrite each other. A document that fails is reported and the others still
    /// go out; the exit status is 1 then.
    func exportAll(_ lib: Library, to shown: String) async throws {
        let folder = absolutePath(shown)
        switch PathKind(folder) {
        case .directory: break
        case .missing:
            guard mkdir(folder, 0o755) == 0 else { throw PathError("cannot make the folder '\(shown)': \(String(cString: strerror(errno)))") }
        case .symlink where isDirectory(folder): break
        default: throw PathError("'\(shown)' is not a folder; --all writes one file per document into a folder")
        }
        if !isDirectory(lib.root) { throw PathError("there is no library at \(lib.root)") }
        let entries = try lib.list()
        var written: [[String: Any]] = []
        var failed = 0
        let progress = ProgressLine()
        for (n, e) in entries.enumerated() {
            let name = ExportCommand.backupName(title: e.title, id: e.id)
            let label = "exporting \(n + 1) of \(entries.count): \(terminalSafe(e.title))"
            if !args.flag("json") { progress.step(label) }
            do {
                let path = try checkedOutputPath(folder + "/" + name)
                let bytes = try await DocumentTransfer.exportArchive(e.id, from: lib, to: path,
                                                                     progress: args.flag("json") ? { @Sendable _ in } : progress.percent(label))
                written.append(["id": e.id.uuidString, "title": e.title, "path": path, "bytes": bytes])
            } catch {
                failed += 1
                progress.done()
                // Interrupted: the rest are not tried (the one in hand left no file).
                if Task.isCancelled { failed += entries.count - n - 1; break }
                printError("lnote export: '\(terminalSafe(e.title))' (\(e.id.uuidString)): \(terminalSafe("\(error)"))")
                written.append(["id": e.id.uuidString, "title": e.title, "error": "\(error)"])
            }
        }
        progress.done()
        if args.flag("json") { printJSON(["format": "zip", "folder": folder, "documents": written]) } else {
            print("Wrote \(entries.count - failed) of \(counted(entries.count, "document")) to \(terminalSafe(shown)) (restore with: lnote import \(terminalSafe(shown))/*.zip)")
        }
        if Task.isCancelled { throw CancellationError() }
        if failed > 0 { throw ExitCode(code: ExitStatus.failure) }
    }

    /// A backup file's name: the title made safe as a file name (no slash, no control, no leading
    /// dot, at most 60 characters), then the id's first 8 digits.
    static func backupName(title: String, id: UUID) -> String {
        var safe = String(title.unicodeScalars.map { $0 == "/" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F ? "_" : Character($0) })
            .trimmingCharacters(in: .whitespaces)
        while safe.hasPrefix(".") { safe.removeFirst() }
        if safe.count > 60 { safe = String(safe.prefix(60)) }
        return (safe.isEmpty ? "" : safe + " ") + String(id.uuidString.prefix(8)) + ".zip"
    }
}

struct ImportCommand: Command {
    static let name = "import"
    static let abstract = "Import one-file exports (zip) or InkML files into the library, each reported; one that fails does not stop the others."
    static let options: [OptionSpec] = [
        .valued("title", "TITLE", default: "the title in the file", "The new document's title (one file only)."),
        .valued("into", "DOC", "InkML: add the pages to this document instead of new ones."),
        .library, .json,
    ]
    static let examples = ["lnote import lecture.zip", "lnote import backup/*.zip", "lnote import page.inkml --into \"Lecture notes\""]
    static let usage = "lnote import FILE.zip|FILE.inkml... [--title TITLE] [--into DOC] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard !args.positionals.isEmpty else { throw UsageError("import takes one file or more") }
        if let t = args.value("title") {
            guard args.value("into") == nil else { throw UsageError("--title names a new document; with --into the page joins DOC (rename it with lnote rename)") }
            guard args.positionals.count == 1 else { throw UsageError("--title names one new document; import the files one by one to title each") }
            try checkTitle(t)
        }
    }
    func run() async throws {
        let lib = library(args)
        let into = try args.value("into").map { try resolveDocument($0, in: lib) }
        // One file: its result, as it always was. Several: one line (or object) per file, in
        // order; a file that fails is reported and the others still go in, then exit 1.
        guard args.positionals.count > 1 else {
            let result = try await importFile(args.positionals[0], into: lib, document: into)
            if args.flag("json") { printJSON(result) }
            return
        }
        var results: [[String: Any]] = []
        var failed = 0
        let progress = ProgressLine()
        for (n, path) in args.positionals.enumerated() {
            let label = "importing \(n + 1) of \(args.positionals.count): \(terminalSafe(path))"
            if !args.flag("json") { progress.step(label) }
            do {
                var result = try await importFile(path, into: lib, document: into, progress: progress, progressLabel: label)
                result["file"] = path
                results.append(result)
            } catch {
                // Interrupted: the file in hand left nothing; the rest are not tried.
                if Task.isCancelled { break }
                failed += 1
                let message = "\(error)"
                if !args.flag("json") { printError("lnote import: \(terminalSafe(path)): \(terminalSafe(message))") }
                results.append(["file": path, "error": message])
            }
        }
        progress.done()
        if args.flag("json") { printJSON(results) } else {
            print("\(results.count - failed) of \(counted(args.positionals.count, "file")) imported")
        }
        if Task.isCancelled { throw CancellationError() }
        if failed > 0 { throw ExitCode(code: ExitStatus.failure) }
    }

    /// Imports one file; prints its line unless --json; returns its JSON object.
    func importFile(_ path: String, into lib: Library, document into: DocumentRef?, progress: ProgressLine? = nil,
                    progressLabel: String? = nil) async throws -> [String: Any] {
        // The progress line (several files) is cleared before this file's own lines, or its error.
        defer { progress?.done() }
        let data = try readInputFile(path)
        switch try importKind(of: data, path: path) {
        case .inkML:
            let target = into?.library ?? lib
            let title = args.value("title") ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let line = progress ?? ProgressLine()
            let report = args.flag("json") ? { @Sendable _ in } : line.percent(progressLabel ?? "importing \(terminalSafe(path))")
            let result = try await DocumentTransfer.importInkML(data, into: target, title: title, document: into?.id, progress: report)
            line.done()
            progress?.done()
            for w in result.warnings { printError("lnote import: warning: \(terminalSafe(path)): \(terminalSafe(w))") }
            if !args.flag("json") {
                print("Imported \(counted(result.strokes, "stroke")), \(counted(result.samples, "sample")) from \(terminalSafe(path)) into \(result.package.id.uuidString) (page file \(counted(result.pageBytes, "byte")))")
            }
            return ["id": result.package.id.uuidString, "page_id": result.pageID.uuidString, "strokes": result.strokes,
                    "samples": result.samples, "page_bytes": result.pageBytes, "warnings": result.warnings,
                    "path": result.package.path]
        case .zip:
            guard into == nil else { throw UsageError("--into applies to InkML files only; a zip export becomes a document of its own") }
            let line = progress ?? ProgressLine()
            let report = args.flag("json") ? { @Sendable _ in } : line.percent(progressLabel ?? "importing \(terminalSafe(path))")
            let result = try DocumentTransfer.importArchive(data, into: lib, progress: report)
            line.done()
            if let title = args.value("title") {
                do { try await lib.rename(result.package.id, to: title) } catch {
                    throw PathError("imported as \(result.package.id.uuidString), but its title could not be set: \(error)")
                }
            }
            let doc = try DocumentMetadata.read(result.package)
            progress?.done()
            if !args.flag("json") {
                print("Imported '\(terminalSafe(doc.title))' (\(counted(doc.pages.count, "page"))) as \(result.package.id.uuidString)\(result.renumbered ? " (a new id: the original is already in the library)" : "")")
            }
            return ["id": result.package.id.uuidString, "title": doc.title, "pages": doc.pages.count,
                    "renumbered": result.renumbered, "path": result.package.path]
        }
    }
}

/// A title given on the command line: within the library's limit, checked before any work.
func checkTitle(_ title: String) throws {
    guard title.utf8.count <= 4096 else { throw UsageError("a title may be at most 4096 bytes") }
}
