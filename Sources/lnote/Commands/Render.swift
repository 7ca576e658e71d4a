// lnote render and lnote thumbnails: pages as files a person can open, covers for the library.

import Foundation
import LulucatInk
import LulucatRender
import LulucatStore
import LulucatStoreThumbnails
import LulucatSync

struct RenderCommand: Command {
    static let name = "render"
    static let abstract = "Render a page to PNG, JPEG or SVG (a synced past version of it with --at)."
    static let options: [OptionSpec] = [.valued("output", "FILE", short: "o", "The image file to write (required)."), .valued("page", "N", default: "1; with --at, the version's page", "The page to draw: its number or id."), .valued("at", "VERSION", "Draw a past version of the page instead (6 or more hex characters of it, as 'lnote history DOC' lists them)."), .valued("format", "png|jpg|svg", default: "from the file name", "The image format."), .valued("scale", "S", default: "2", "Pixels per point, in (0, 16]."), .valued("quality", "Q", default: "90", "JPEG quality, 1 to 100 (jpg only)."), .library, .json]
    static let examples = ["lnote render \"Lecture notes\" -o page1.png", "lnote render \"Lecture notes\" --page 3 -o p3.jpg --quality 80",
                           "lnote render \"Lecture notes\" --at 0123456789ab -o before.png"]
    static let usage = "lnote render DOC -o FILE.png|FILE.jpg|FILE.svg [--page N] [--format png|jpg|svg] [--scale S] [--quality Q] [--at VERSION] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("render takes one document") }
        guard args.value("o") ?? args.value("output") != nil else { throw UsageError("name the output file with -o FILE") }
        if let f = args.value("format"), PageExportFormat(rawValue: f == "jpeg" ? "jpg" : f) == nil {
            throw UsageError("unknown format '\(f)' (png, jpg or svg)")
        }
        if let s = try args.double("scale"), !(s > 0 && s <= 16) { throw UsageError("--scale must be in (0, 16]") }
        _ = try args.int("quality", in: 1...100)
        if let at = args.value("at") { try DocumentHistory.checkVersion(at) }
        let out = (args.value("o") ?? args.value("output"))!
        _ = try checkedOutputPath(out)
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        if let f = args.value("format"), let byName = PageExportFormat(rawValue: ext == "jpeg" ? "jpg" : ext),
           byName.rawValue != (f == "jpeg" ? "jpg" : f) {
            throw UsageError("--format \(f) does not match the file name '\(out)'")
        }
    }
    func run() async throws {
        let lib = library(args)
        let out = (args.value("o") ?? args.value("output"))!
        // What to draw: a page of the document, or (--at) a version of one, read from the remote.
        var number: Int?, page: UUID, package: DocumentPackage?
        var history: (DocumentHistory, PageVersion)?
        if let at = args.value("at") {
            let h = try DocumentHistory.resolve(args.positionals[0], in: lib, command: Self.name)
            let v = try h.version(at, page: try args.value("page").map { try h.page($0) })
            number = h.number(of: v.page)
            page = v.page
            package = h.package
            history = (h, v)
        } else {
            let p = try resolvePackage(args.positionals[0], in: lib)
            let resolved = try resolvePage(args.value("page") ?? "1", of: try DocumentMetadata.read(p))
            number = resolved.number
            page = resolved.id
            package = p
        }
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        let name = args.value("format") ?? (ext == "jpeg" ? "jpg" : ext)
        guard let format = PageExportFormat(rawValue: name == "jpeg" ? "jpg" : name) else {
            throw UsageError("say --format png|jpg|svg (the file name '\(out)' does not tell)")
        }
        // Only JPEG has a quality: on PNG or SVG the option would be ignored, so it is refused.
        if args.value("quality") != nil, format.rawValue != "jpg" {
            throw UsageError("--quality is for JPEG; \(format.rawValue.uppercased()) is lossless")
        }
        let path = try checkedOutputPath(out)
        let content: PageContent
        if let history { content = try await history.0.content(history.1) } else { content = try StoredPage.read(package!, page: page) }
        // A version's images are drawn from the live package's assets when it still has them.
        let assets = try package.map { try AssetFiles($0) }
        let requested = try args.double("scale") ?? 2
        guard requested > 0 else { throw UsageError("--scale must be more than 0, not \(requested)") }
        let result = try PageExport.exportFitting(content, format: format, scale: requested,
                                                  quality: try args.int("quality", in: 1...100) ?? 90, assetData: { try assets?.data($0) })
        let data = result.data, problems = result.problems
        try writeOutput(data, to: path, as: out)
        for p in problems { printError("lnote render: warning: \(terminalSafe("\(p)"))") }
        // A page too large for the requested scale is drawn smaller, never refused: say so.
        if result.fitted, let used = result.scale {
            printError("lnote render: the page is too large for --scale \(requested); drawn at scale \(String(format: "%.4g", used)) to fit the size limit")
        }
        if args.flag("json") {
            var object: [String: Any] = ["path": out, "format": format.rawValue, "bytes": data.count, "page": number.map { $0 as Any } ?? NSNull(),
                                         "problems": problems.map { "\($0)" }, "fitted": result.fitted]
            if let used = result.scale { object["scale"] = used }
            if let history { object["version"] = history.1.id; object["page_id"] = page.uuidString }
            printJSON(object)
        } else {
            let what = history.map { "\($0.0.describe($0.1)) of page \($0.0.pageName(page))" } ?? "page \(number ?? 0)"
            print("Wrote \(terminalSafe(what)) to \(out) (\(format.rawValue), \(counted(data.count, "byte"))\(result.scale.map { ", scale \(String(format: "%.4g", $0))" } ?? ""))")
        }
    }
}

/// The asset files of a package, by id (read on demand).
struct AssetFiles {
    let package: DocumentPackage
    let names: [UUID: String]
    init(_ package: DocumentPackage) throws {
        self.package = package
        var names: [UUID: String] = [:]
        // Through the store's file layer: a linked assets/ folder is refused, not followed.
        let fs = PosixFileSystem()
        let listed: [String]
        do { listed = try fs.contentsOfDirectory(package.assetsPath) } catch {
            if !error.isNotFound { throw error }
            listed = []
        }
        for name in listed {
            if let (id, ext) = DocumentPackage.parseName(name, extensions: DocumentPackage.assetExtensions) { names[id] = ext }
        }
        self.names = names
    }
    func data(_ id: UUID) throws -> Data? {
        guard let ext = names[id] else { return nil }
        return Data(try PosixFileSystem().readFile(package.assetPath(id, ext: ext), limit: 256 << 20))
    }
}

struct ThumbnailsCommand: Command {
    static let name = "thumbnails"
    static let abstract = "Regenerate missing or stale thumbnails of a document (all with --rebuild)."
    static let options: [OptionSpec] = [.flag("rebuild", "Draw every thumbnail again, not only missing or stale ones."), .valued("width", "PX", default: "256", "The thumbnails' width in pixels, 16 to 4096."), .library, .json]
    static let examples = ["lnote thumbnails \"Lecture notes\"", "lnote thumbnails \"Lecture notes\" --rebuild --width 512"]
    static let usage = "lnote thumbnails DOC [--rebuild] [--width PX] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("thumbnails takes one document") }
        if let w = try args.int("width"), !(16...4096).contains(w) { throw UsageError("--width must be 16...4096") }
    }
    func run() async throws {
        let lib = library(args)
        let package = try resolvePackage(args.positionals[0], in: lib)
        let options = ThumbnailOptions(width: try args.int("width") ?? Thumbnail.defaultWidth)
        let findings = ThumbnailWriter.rebuild(package, all: args.flag("rebuild"), options: options)
        let errors = findings.filter { $0.severity == .error }
        if args.flag("json") {
            printJSON(["id": package.id.uuidString, "actions": findings.map(findingJSON)])
            if !errors.isEmpty { throw ExitCode(code: ExitStatus.failure) }
            return
        }
        if findings.isEmpty { print("Every thumbnail is up to date.") }
        for f in findings where f.severity != .error { print(terminalSafe("\(f)")) }
        guard !errors.isEmpty else { return }
        // Errors as every command gives them: on stderr, after the tool and command's name; a
        // package that cannot be written is said so, not the lock file that refused first.
        if access(package.path, W_OK) != 0 {
            throw PathError(describeFailure(FileError("write", path: package.lockPath, errno: errno)))
        }
        throw PathError(errors.map { "\($0.path): \($0.message)" }.joined(separator: "\n"))
    }
}
