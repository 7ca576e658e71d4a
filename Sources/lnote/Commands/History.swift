// lnote history, and the versions `render --at` and `restore --at` name: every state of a page
// that sync published, from any device (docs/sync.md §12). History comes from sync: a library
// without a remote has none.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSync

struct HistoryCommand: Command {
    static let name = "history"
    static let abstract = "List the synced versions of a document's pages, newest first (render --at and restore --at take them)."
    static let options: [OptionSpec] = [
        .valued("page", "N", default: "every page", "Only this page's versions: its number or id (a removed page: its id)."),
        .flag("refresh", "Read the document's history from the remote again first (when .sync/ was lost or rolled back)."),
        .library, .json,
    ]
    static let examples = ["lnote history \"Lecture notes\"", "lnote history \"Lecture notes\" --page 3 --json",
                           "lnote history 1A2B3C4D --refresh"]
    static let usage = "lnote history DOC [--page N] [--refresh] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("history takes one document") }
    }
    func run() async throws {
        let h = try DocumentHistory.resolve(args.positionals[0], in: library(args), command: Self.name)
        if args.flag("refresh") {
            let requests = try await h.refresh()
            if !args.flag("json") { print(terminalSafe("Read the history of \(h.name) from \(h.remote) again (\(counted(requests, "request")))")) }
        }
        let page = try args.value("page").map { try h.page($0) }
        let versions = h.versions(page: page)
        if args.flag("json") {
            printJSON(versions.map(h.json))
            return
        }
        let which = page.map { "page \(h.pageName($0)) of " } ?? ""
        guard !versions.isEmpty else {
            print(terminalSafe(h.isKnownToSync
                  ? "No versions of \(which)\(h.name) are kept (a version is a state a sync published; none is, or none is left)."
                  : "No history of \(which)\(h.name): it has never been synced from \(h.sync.library.root) (each 'lnote sync' that changes a page adds a version of it)."))
            return
        }
        print(terminalSafe("\(counted(versions.count, "version")) of \(which)\(h.name), newest first (* the page's state as this library last synced it)"))
        let time = LocalTime(seconds: false)
        let rows = versions.map { v in
            [String(v.id.prefix(12)), h.number(of: v.page).map { String($0) } ?? "removed", time.string(v.time), terminalSafe(h.device(v)), String(v.strokes)]
        }
        let header = ["VERSION", "PAGE", "TIME", "DEVICE", "STROKES"]
        let widths = header.indices.map { i in max(header[i].count, rows.map { $0[i].count }.max() ?? 0) }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        print("  " + line(header))
        for (v, row) in zip(versions, rows) { print((Self.isCurrent(v) ? "* " : "  ") + line(row)) }
    }

    /// Whether a version is its page's state here: as last synced, and the page still in the
    /// document (`PageVersion.isCurrent` holds for a removed page's last state too).
    static func isCurrent(_ v: PageVersion) -> Bool { v.isCurrent && v.pageIsLive }
}

/// A document as history knows it, and the library's sync that keeps its history: in the library
/// (its package and pages), or gone from it (deleted here or elsewhere, in the trash or not) but
/// known to this library's sync (`.sync/history/<UUID>/` or its base), named by id or prefix.
struct DocumentHistory {
    let sync: LibrarySync
    /// The remote as configured (`lnote remote`).
    let remote: String
    let id: UUID
    /// The package, when the document is in the library.
    let package: DocumentPackage?
    /// Its pages in order (none when it is gone).
    let pages: [UUID]
    /// How messages name it: 'Title', 'Title' (in the trash), or the deleted document 1A2B3C4D (as read: what prints it
    /// makes it terminal-safe, as `execute` does errors).
    let name: String
    /// Whether this library's sync has a history folder or a base for it.
    let isKnownToSync: Bool

    /// DOC as other commands resolve it, else a document known to sync by its id or id prefix;
    /// then the library's remote (without one, there is no history: said so, exit 1).
    static func resolve(_ ref: String, in lib: Library, command: String) throws -> DocumentHistory {
        var lib = lib
        let id: UUID
        var package: DocumentPackage?
        do {
            let doc = try resolveDocument(ref, in: lib)
            lib = doc.library
            id = doc.id
            package = doc.package
        } catch {
            // Only a document that is not here (never an ambiguous title) is looked for in sync's.
            let notHere: Bool
            if case StoreError.documentNotFound = error { notHere = true } else { notHere = error is PathError }
            let known = syncedDocuments(in: lib).filter { PathKind(lib.package($0).path) == .missing }
            guard notHere, !isPackagePath(ref), let match = try matchDocument(ref, among: known) else { throw error }
            id = match
        }
        let (sync, remote) = try librarySync(lib, command: command)
        var pages: [UUID] = [], name = "the deleted document \(id.uuidString.prefix(8))"
        if let package {
            let meta = try DocumentMetadata.read(package)
            pages = meta.pages.map(\.id)
            name = "'\(meta.title)'"
        } else if let trashed = (try? lib.trashedDocuments())?.first(where: { $0.id == id }) {
            name = "'\(trashed.title)' (in the trash)"
        }
        return DocumentHistory(sync: sync, remote: remote, id: id, package: package, pages: pages, name: name,
                               isKnownToSync: syncedDocuments(in: lib).contains(id))
    }

    /// The library's sync, from its configured remote as `lnote sync` makes it. No remote: an
    /// error that says history comes from sync (nothing is created, not even `.sync/`).
    static func librarySync(_ lib: Library, command: String) throws -> (LibrarySync, String) {
        guard let config = SyncConfiguration.read(lib) else {
            printError("lnote \(command): no remote set for \(terminalSafe(lib.root)): history comes from sync "
                       + "(each 'lnote sync' that changes a page keeps a version of it); run 'lnote remote add URL', then 'lnote sync'")
            throw ExitCode(code: ExitStatus.failure)
        }
        return (try LibrarySync(library: lib, remote: try config.makeRemote(netrc: netrcText())), config.remote)
    }

    /// The documents this library's sync knows (`LibrarySync.knownDocuments(in:)`).
    static func syncedDocuments(in lib: Library) -> Set<UUID> { LibrarySync.knownDocuments(in: lib) }

    /// `ref` as a whole id, or a prefix of one, among `ids`: nil when none matches (or `ref` is no
    /// id's start), an error when several do.
    static func matchDocument(_ ref: String, among ids: Set<UUID>) throws -> UUID? {
        if let id = UUID(strictString: ref) { return ids.contains(id) ? id : nil }
        let lower = ref.lowercased()
        guard !lower.isEmpty, lower.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        let matches = ids.filter { $0.uuidString.lowercased().hasPrefix(lower) }.sorted { $0.uuidString < $1.uuidString }
        guard matches.count <= 1 else {
            throw PathError("'\(ref)' matches \(counted(matches.count, "deleted document")) known to sync "
                            + "(\(matches.map { String($0.uuidString.prefix(8)) }.joined(separator: ", "))); give more of the id")
        }
        return matches.first
    }

    /// The page's number when it is in the document.
    func number(of page: UUID) -> Int? { pages.firstIndex(of: page).map { $0 + 1 } }

    /// "2", or "8A3F0C21 (removed)".
    func pageName(_ page: UUID) -> String { number(of: page).map { String($0) } ?? "\(page.uuidString.prefix(8)) (removed)" }

    /// The versions, newest first (every page's, or one page's); no request.
    func versions(page: UUID? = nil) -> [PageVersion] { sync.history(of: id, page: page) }

    /// `--page N`: a page of the document by number or id, or a removed page by (4 or more
    /// characters of) its id among the pages history has versions of.
    func page(_ ref: String) throws -> UUID {
        let meta = package.flatMap { try? DocumentMetadata.read($0) }
        var refusal: (any Error)?
        if let meta {
            do { return try resolvePage(ref, of: meta).id } catch { refusal = error }
        }
        let lower = ref.lowercased()
        let removed = Set(versions().map(\.page)).filter { lower.count >= 4 && !pages.contains($0) && $0.uuidString.lowercased().hasPrefix(lower) }
        if removed.count == 1 { return removed.first! }
        if removed.count > 1 { throw UsageError("page '\(ref)' matches \(counted(removed.count, "removed page")); give more of the id") }
        if let refusal { throw refusal }
        throw UsageError("\(name) is not in the library: name a page by (4 or more characters of) its id, as 'lnote history \(id.uuidString.prefix(8))' lists them")
    }

    /// VERSION (`--at`): 6 to 64 hex characters, checked before any work.
    static func checkVersion(_ text: String) throws {
        guard (6...64).contains(text.count), text.allSatisfy(\.isHexDigit) else {
            throw UsageError("--at takes a version: 6 to 64 hex characters of it, as 'lnote history DOC' lists them, not '\(text)'")
        }
    }

    /// The one version (of `page` when given) whose id starts with `prefix`.
    func version(_ prefix: String, page: UUID?) throws -> PageVersion {
        try Self.checkVersion(prefix)
        let lower = prefix.lowercased()
        let listing = "'lnote history \(id.uuidString.prefix(8))\(page.map { " --page \(pageName($0).split(separator: " ")[0])" } ?? "")' lists them"
        let all = versions().filter { $0.id.hasPrefix(lower) }
        let matches = all.filter { page == nil || $0.page == page }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty {
            if let page, let other = all.first {
                throw PathError("version \(prefix) is not a version of page \(pageName(page)) of \(name) (it is of page \(pageName(other.page))); \(listing)")
            }
            if !isKnownToSync { throw PathError("\(name) has no history: it has never been synced from \(sync.library.root) ('lnote sync' keeps its versions)") }
            throw PathError("no version \(prefix) of \(page.map { "page \(pageName($0)) of " } ?? "")\(name); \(listing)")
        }
        if Set(matches.map(\.id)).count == 1 {
            throw PathError("version \(prefix) is a version of \(counted(matches.count, "page")) of \(name) (pages "
                            + matches.map { (number(of: $0.page) ?? .max, pageName($0.page)) }.sorted { $0 < $1 }.map(\.1).joined(separator: ", ")
                            + "); say which with --page N")
        }
        throw PathError("version \(prefix) matches \(counted(matches.count, "version")) of \(name) ("
                        + matches.map { String($0.id.prefix(12)) }.joined(separator: ", ") + "); give more of it, as \(listing)")
    }

    /// Before anything is asked of the remote: a folder remote whose folder is not there (an
    /// unmounted drive) is said so, as sync says it, not as every object "not found" on it.
    static func checkFolder(_ sync: LibrarySync) throws {
        if let folder = sync.remote as? FolderRemote, !isDirectory(folder.root) {
            throw PathError("the remote folder \(folder.root) does not exist (an unmounted drive, or a mistyped path?); "
                            + "past versions are read from it")
        }
    }

    /// The document's history read from the remote again; how many requests it took.
    func refresh() async throws -> Int {
        try Self.checkFolder(sync)
        return try await sync.refreshHistory(of: id)
    }

    /// A version's content, read from the remote (one request).
    func content(_ v: PageVersion) async throws -> PageContent {
        try Self.checkFolder(sync)
        do { return try await sync.content(of: id, page: v.page, at: v) } catch { throw gone(error, v) }
    }

    /// The version brought back as a new edit (docs/sync.md §12.6).
    func restore(_ v: PageVersion) async throws -> PageRestore {
        try Self.checkFolder(sync)
        do { return try await sync.restore(page: v.page, of: id, to: v) } catch { throw gone(error, v) }
    }

    /// A version whose page blob the remote no longer has, said in words (not its blob's path).
    private func gone(_ error: SyncError, _ v: PageVersion) -> any Error {
        guard case .remote(.notFound) = error else { return error }
        return PathError("\(describe(v)) is no longer on the remote \(remote) (collected, or lost), nothing was changed; "
                         + "'lnote history \(id.uuidString.prefix(8)) --refresh' lists what the remote keeps")
    }

    /// Who published a version: its device's name, else the start of its id.
    func device(_ v: PageVersion) -> String { v.deviceName.isEmpty ? String(v.device.uuidString.prefix(8)) : v.deviceName }

    /// "version 0123456789ab (2026-12-07 14:02 +0100, laptop, 12 strokes)" ("Version" when `capital`).
    func describe(_ v: PageVersion, capital: Bool = false) -> String {
        (capital ? "Version " : "version ") + "\(v.id.prefix(12)) (\(LocalTime(seconds: false).string(v.time)), \(device(v)), \(counted(v.strokes, "stroke")))"
    }

    /// A version as `--json` gives it.
    func json(_ v: PageVersion) -> [String: Any] {
        ["id": v.id, "page_id": v.page.uuidString, "page": number(of: v.page).map { $0 as Any } ?? NSNull(), "time": iso(v.time),
         "device": v.device.uuidString, "device_name": v.deviceName, "strokes": v.strokes, "current": HistoryCommand.isCurrent(v),
         "page_is_live": v.pageIsLive]
    }
}
