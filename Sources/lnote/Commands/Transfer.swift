// lnote export and import: one-file archives and W3C InkML.

import Foundation
import LulucatInk
import LulucatStore
import LulucatInterchange

/// Resolves DOC as a package path or a library reference (id, id prefix, title).
func resolvePackage(_ ref: String, in lib: Library) throws -> DocumentPackage {
    if ref.hasSuffix(".lnote") || ref.contains("/") { return try DocumentPackage(path: ref) }
    return lib.package(try lib.resolve(ref))
}

/// The page of a document by its 1-based number.
func pageID(_ number: Int, of package: DocumentPackage) throws -> UUID {
    let doc = try DocumentMetadata.read(package)
    guard number >= 1 && number <= doc.pages.count else {
        throw UsageError("--page \(number) is outside 1...\(doc.pages.count)")
    }
    return doc.pages[number - 1].id
}

struct ExportCommand: Command {
    static let name = "export"
    static let abstract = "Export a document as one file (zip), or a page as InkML."
    static let usage = "lnote export DOC -o FILE [--format zip|inkml] [--page N] [--library DIR]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library", "o", "output", "format", "page"], flags: ["json"])
        guard args.positionals.count == 1 else { throw UsageError("export takes one document") }
        guard args.value("o") ?? args.value("output") != nil else { throw UsageError("name the output file with -o FILE") }
        if let f = args.value("format"), !["zip", "inkml"].contains(f) { throw UsageError("unknown format '\(f)'") }
    }
    var format: String {
        if let f = args.value("format") { return f }
        return (args.value("o") ?? args.value("output"))!.lowercased().hasSuffix(".inkml") ? "inkml" : "zip"
    }
    func run() async throws {
        let lib = library(args)
        let out = (args.value("o") ?? args.value("output"))!
        let package = try resolvePackage(args.positionals[0], in: lib)
        switch format {
        case "inkml":
            let page = try pageID(try args.int("page") ?? 1, of: package)
            let content = try StoredPage.read(package, page: page)
            let data = InkMLWriter.write(content)
            try PosixFileSystem().writeAtomically(data, to: out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out)
            report(["format": "inkml", "path": out, "bytes": data.count, "strokes": content.strokes.count, "samples": content.sampleCount])
        default:
            let owner = Library(root: splitParent(package.path))
            let bytes = try DocumentTransfer.exportArchive(package.id, from: owner, to: out)
            report(["format": "zip", "path": out, "bytes": bytes])
        }
    }
    func report(_ o: [String: Any]) {
        if args.flag("json") { printJSON(o) } else {
            print("Wrote \(o["path"]!) (\(o["format"]!), \(o["bytes"]!) bytes)")
        }
    }
}

func splitParent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
}

struct ImportCommand: Command {
    static let name = "import"
    static let abstract = "Import a one-file export (zip) or an InkML file into the library."
    static let usage = "lnote import FILE [--into DOC] [--title TITLE] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library", "into", "title"], flags: ["json"])
        guard args.positionals.count == 1 else { throw UsageError("import takes one file") }
    }
    func run() async throws {
        let lib = library(args)
        let path = args.positionals[0]
        let url = URL(fileURLWithPath: path)
        let data: Data
        do { data = try Data(contentsOf: url, options: .alwaysMapped) } catch {
            throw StoreError.invalidArgument("cannot read \(path): \(error.localizedDescription)")
        }
        let looksXML = path.lowercased().hasSuffix(".inkml") || data.prefix(64).contains(UInt8(ascii: "<"))
        if looksXML && !(data.prefix(2) == Data([0x50, 0x4B])) {
            let into = try args.value("into").map { try lib.resolve($0) }
            let title = args.value("title") ?? url.deletingPathExtension().lastPathComponent
            let result = try await DocumentTransfer.importInkML(data, into: lib, title: title, document: into)
            for w in result.warnings { printError("lnote import: warning: \(path): \(w)") }
            if args.flag("json") {
                printJSON(["id": result.package.id.uuidString, "page_id": result.pageID.uuidString, "strokes": result.strokes,
                           "samples": result.samples, "page_bytes": result.pageBytes, "warnings": result.warnings])
            } else {
                print("Imported \(result.strokes) strokes, \(result.samples) samples from \(path) into \(result.package.id.uuidString) (page file \(result.pageBytes) bytes)")
            }
            return
        }
        guard args.value("into") == nil else { throw UsageError("--into applies to InkML files only") }
        let result = try DocumentTransfer.importArchive(data, into: lib)
        let doc = try DocumentMetadata.read(result.package)
        if args.flag("json") {
            printJSON(["id": result.package.id.uuidString, "title": doc.title, "pages": doc.pages.count,
                       "renumbered": result.renumbered, "path": result.package.path])
        } else {
            print("Imported '\(doc.title)' (\(doc.pages.count) pages) as \(result.package.id.uuidString)\(result.renumbered ? " (a new id: the original is already in the library)" : "")")
        }
    }
}
