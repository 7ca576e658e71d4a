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
                                         : "page '\(ref)' matches \(matches.count) pages; give more of the id")
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
    static let usage = "lnote export DOC -o FILE.zip|FILE.inkml [--page N | --all-pages] [--format zip|inkml] [--library DIR] [--json]"
    let args: Arguments
    let format: String
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library", "o", "output", "format", "page"], flags: ["json", "all-pages"])
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
            do { bytes = try DocumentTransfer.exportArchive(doc.id, from: doc.library, to: out) } catch let e as FileError where splitParent(e.path) == splitParent(out) {
                throw PathError("cannot write '\(shown)': \(String(cString: strerror(e.errno)))")
            } catch StoreError.file(let e) where splitParent(e.path) == splitParent(out) {
                throw PathError("cannot write '\(shown)': \(String(cString: strerror(e.errno)))")
            }
            if args.flag("json") { printJSON(["format": "zip", "path": shown, "bytes": bytes]) } else {
                print("Wrote \(shown) (zip, \(bytes) bytes)")
            }
        }
    }
}

struct ImportCommand: Command {
    static let name = "import"
    static let abstract = "Import a one-file export (zip) or an InkML file into the library."
    static let usage = "lnote import FILE.zip|FILE.inkml [--title TITLE] [--into DOC] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library", "into", "title"], flags: ["json"])
        guard args.positionals.count == 1 else { throw UsageError("import takes one file") }
        if let t = args.value("title") {
            guard args.value("into") == nil else { throw UsageError("--title names a new document; with --into the page joins DOC (rename it with lnote rename)") }
            try checkTitle(t)
        }
    }
    func run() async throws {
        let lib = library(args)
        let path = args.positionals[0]
        let data = try readInputFile(path)
        switch try importKind(of: data, path: path) {
        case .inkML:
            let into = try args.value("into").map { try resolveDocument($0, in: lib) }
            let target = into?.library ?? lib
            let title = args.value("title") ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let result = try await DocumentTransfer.importInkML(data, into: target, title: title, document: into?.id)
            for w in result.warnings { printError("lnote import: warning: \(terminalSafe(path)): \(terminalSafe(w))") }
            if args.flag("json") {
                printJSON(["id": result.package.id.uuidString, "page_id": result.pageID.uuidString, "strokes": result.strokes,
                           "samples": result.samples, "page_bytes": result.pageBytes, "warnings": result.warnings,
                           "path": result.package.path])
            } else {
                print("Imported \(result.strokes) strokes, \(result.samples) samples from \(terminalSafe(path)) into \(result.package.id.uuidString) (page file \(result.pageBytes) bytes)")
            }
        case .zip:
            guard args.value("into") == nil else { throw UsageError("--into applies to InkML files only; a zip export becomes a document of its own") }
            let result = try DocumentTransfer.importArchive(data, into: lib)
            if let title = args.value("title") {
                do { try await lib.rename(result.package.id, to: title) } catch {
                    throw PathError("imported as \(result.package.id.uuidString), but its title could not be set: \(error)")
                }
            }
            let doc = try DocumentMetadata.read(result.package)
            if args.flag("json") {
                printJSON(["id": result.package.id.uuidString, "title": doc.title, "pages": doc.pages.count,
                           "renumbered": result.renumbered, "path": result.package.path])
            } else {
                print("Imported '\(terminalSafe(doc.title))' (\(doc.pages.count) pages) as \(result.package.id.uuidString)\(result.renumbered ? " (a new id: the original is already in the library)" : "")")
            }
        }
    }
}

/// A title given on the command line: within the library's limit, checked before any work.
func checkTitle(_ title: String) throws {
    guard title.utf8.count <= 4096 else { throw UsageError("a title may be at most 4096 bytes") }
}
