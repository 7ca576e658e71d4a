// lnote rename, duplicate, delete (trash), restore, empty-trash: a document's life in the library,
// through the Library's own operations.

import Foundation
import LulucatStore
import LulucatSync

struct RenameCommand: Command {
    static let name = "rename"
    static let abstract = "Give a document a new title."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote rename \"Meeting\" \"Meeting, 7 December\""]
    static let usage = "lnote rename DOC TITLE [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 2 else { throw UsageError("rename takes a document and its new title") }
        try checkTitle(args.positionals[1])
    }
    func run() async throws {
        let doc = try resolveDocument(args.positionals[0], in: library(args))
        let old = try DocumentMetadata.read(doc.package).title
        let title = args.positionals[1]
        try await doc.library.rename(doc.id, to: title)
        if args.flag("json") { printJSON(["id": doc.id.uuidString, "old_title": old, "title": title]) } else {
            print("Renamed \(doc.id.uuidString) from '\(terminalSafe(old))' to '\(terminalSafe(title))'")
        }
    }
}

struct DuplicateCommand: Command {
    static let name = "duplicate"
    static let abstract = "Copy a document, every page and asset, under a new id (title 'TITLE copy' unless --title)."
    static let options: [OptionSpec] = [.valued("title", "TITLE", default: "the title with \" copy\" added", "The copy's title."), .library, .json]
    static let examples = ["lnote duplicate \"Lecture notes\" --title \"Lecture notes (draft)\""]
    static let usage = "lnote duplicate DOC [--title TITLE] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("duplicate takes one document") }
        if let t = args.value("title") { try checkTitle(t) }
    }
    func run() async throws {
        let doc = try resolveDocument(args.positionals[0], in: library(args))
        let copy = try await doc.library.duplicate(doc.id, title: args.value("title"))
        let title = try DocumentMetadata.read(copy).title
        if args.flag("json") { printJSON(["id": copy.id.uuidString, "source_id": doc.id.uuidString, "title": title, "path": copy.path]) } else {
            print("Duplicated \(doc.id.uuidString) as \(copy.id.uuidString) '\(terminalSafe(title))'")
        }
    }
}

struct DeleteCommand: Command {
    static let name = "delete"
    static let abstract = "Move a document to the trash (lnote restore brings it back until empty-trash)."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote delete \"Old sketch\"", "lnote delete 1A2B3C4D"]
    static let usage = "lnote delete DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("delete takes one document") }
    }
    func run() async throws {
        let doc = try resolveDocument(args.positionals[0], in: library(args))
        let title = (try? DocumentMetadata.read(doc.package).title) ?? "(unreadable)"
        try await doc.library.moveToTrash(doc.id)
        if args.flag("json") { printJSON(["id": doc.id.uuidString, "title": title, "trashed": true]) } else {
            print("Moved '\(terminalSafe(title))' (\(doc.id.uuidString)) to the trash; lnote restore \(doc.id.uuidString.prefix(8)) brings it back")
        }
    }
}

struct RestoreCommand: Command {
    static let name = "restore"
    static let abstract = "Bring a document back from the trash (DOC: id, id prefix or title, as list --trash shows); "
        + "--at: a page to a synced version; --deleted: a deleted document, from its history."
    static let options: [OptionSpec] = [
        .valued("at", "VERSION", "Restore a page to this version (6 or more hex characters of it, as 'lnote history DOC' lists them): a new edit, sent by the next sync."),
        .valued("page", "N", default: "the version's page", "With --at: the page the version must be of (its number or id)."),
        .flag("deleted", "DOC is a document deleted for good (its id or prefix): make it again, as a new document, from what this library last synced of it."),
        .library, .json,
    ]
    static let examples = ["lnote restore \"Old sketch\"", "lnote list --trash", "lnote restore \"Lecture notes\" --at 0123456789ab",
                           "lnote restore 1A2B3C4D --deleted"]
    static let usage = "lnote restore DOC [--library DIR] [--json]\nlnote restore DOC --at VERSION [--page N] [--library DIR] [--json]\n"
        + "lnote restore DOC --deleted [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("restore takes one document") }
        if args.flag("deleted") && args.value("at") != nil { throw UsageError("--at restores a version of a page, --deleted a whole document: say one") }
        if args.value("page") != nil && args.value("at") == nil { throw UsageError("--page goes with --at VERSION") }
        if let at = args.value("at") { try DocumentHistory.checkVersion(at) }
    }
    func run() async throws {
        if let at = args.value("at") { return try await restoreVersion(at) }
        if args.flag("deleted") { return try await restoreDeleted() }
        var lib = library(args)
        var ref = args.positionals[0]
        // A package path in a trash folder (`LIB/.trash/<UUID>.lnote`) names its library and id.
        if isPackagePath(ref), ref.contains("/") {
            let package = try DocumentPackage(path: absolutePath(ref))
            let trash = splitParent(package.path)
            guard trash.hasSuffix("/.trash") else { throw PathError("'\(ref)' is not in a library's trash (LIBRARY/.trash/)") }
            lib = Library(root: splitParent(trash))
            ref = package.id.uuidString
        }
        let trashed = try await lib.trashedDocuments()
        let matches = UUID(strictString: ref).map { id in trashed.filter { $0.id == id } }
            ?? trashed.filter { $0.title == ref || $0.id.uuidString.lowercased().hasPrefix(ref.lowercased()) }
        guard matches.count == 1 else {
            if matches.isEmpty { throw PathError("no document '\(ref)' in the trash (lnote list --trash shows it)") }
            throw PathError("'\(ref)' matches \(counted(matches.count, "document")) in the trash; give more of the id")
        }
        let entry = matches[0]
        if FileManager.default.fileExists(atPath: lib.package(entry.id).path) {
            throw PathError("a document with the id \(entry.id.uuidString) is already in the library; it was not replaced")
        }
        try await lib.restoreFromTrash(entry.id)
        if args.flag("json") { printJSON(["id": entry.id.uuidString, "title": entry.title, "restored": true]) } else {
            print("Restored '\(terminalSafe(entry.title))' (\(entry.id.uuidString))")
        }
    }

    /// `--at VERSION`: the page made that version again, as a new edit (docs/sync.md §12.6); a
    /// version of a removed page comes back as a new page at the end.
    func restoreVersion(_ at: String) async throws {
        let h = try DocumentHistory.resolve(args.positionals[0], in: library(args), command: Self.name)
        let v = try h.version(at, page: try args.value("page").map { try h.page($0) })
        guard let package = h.package else {
            throw PathError("\(h.name) is not in the library: bring it back first ('lnote restore \(h.id.uuidString.prefix(8))' from the trash, "
                            + "or with --deleted when the trash was emptied), then restore its pages' versions")
        }
        let done = try await h.restore(v)
        let meta = try DocumentMetadata.read(package)
        let number = (meta.pages.firstIndex { $0.id == done.page } ?? meta.pages.count) + 1
        let title = meta.title
        if args.flag("json") {
            printJSON(["id": h.id.uuidString, "title": title, "version": v.id, "page": number, "page_id": done.page.uuidString,
                       "new_page": done.isNewPage, "changed": !done.undo.isEmpty || done.isNewPage, "strokes": v.strokes,
                       "time": iso(v.time), "device": v.device.uuidString, "device_name": v.deviceName])
        } else if done.isNewPage {
            print(terminalSafe("\(h.describe(v, capital: true)) of a removed page of \(h.name) came back as a new page \(number); "
                               + "the next 'lnote sync' sends it"))
        } else if done.undo.isEmpty {
            print(terminalSafe("Page \(number) of \(h.name) already is \(h.describe(v)); nothing changed"))
        } else {
            print(terminalSafe("Restored page \(number) of \(h.name) to \(h.describe(v)) as a new edit; the next 'lnote sync' sends it"))
        }
    }

    /// `--deleted`: a document gone from the library and its trash made again, as a new
    /// document, from what this library last synced of it.
    func restoreDeleted() async throws {
        let lib = library(args)
        let ref = args.positionals[0]
        let known = DocumentHistory.syncedDocuments(in: lib)
        let trashed = Set((try? await lib.trashedDocuments())?.map(\.id) ?? [])
        let gone = known.filter { PathKind(lib.package($0).path) == .missing && !trashed.contains($0) }
        guard let id = try DocumentHistory.matchDocument(ref, among: gone) else {
            if let t = try DocumentHistory.matchDocument(ref, among: trashed) {
                throw PathError("document \(t.uuidString) is in the trash: 'lnote restore \(t.uuidString.prefix(8))' brings it back as it was")
            }
            if let live = try? resolveDocument(ref, in: lib) {
                throw PathError("document \(live.id.uuidString) is in the library; --deleted makes a document deleted for good again")
            }
            throw PathError("no deleted document '\(ref)' known to the sync of \(lib.root): --deleted takes the id (or a prefix of it) "
                            + "of a document this library synced before it was deleted")
        }
        let (sync, _) = try DocumentHistory.librarySync(lib, command: Self.name)
        try DocumentHistory.checkFolder(sync)
        let made = try await sync.restoreDocument(id)
        let meta = try DocumentMetadata.read(lib.package(made))
        if args.flag("json") {
            printJSON(["id": made.uuidString, "title": meta.title, "deleted_id": id.uuidString, "pages": meta.pages.count])
        } else {
            print("Made '\(terminalSafe(meta.title))' again as a new document \(made.uuidString) (\(counted(meta.pages.count, "page"))) from what "
                  + "this library last synced of \(id.uuidString), which stays deleted; the next 'lnote sync' sends it")
        }
    }
}

struct EmptyTrashCommand: Command {
    static let name = "empty-trash"
    static let abstract = "Delete the documents in the trash for good (say --yes)."
    static let options: [OptionSpec] = [.flag("yes", "Confirm: the trash is emptied for good."), .library, .json]
    static let examples = ["lnote empty-trash --yes"]
    static let usage = "lnote empty-trash --yes [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.isEmpty else { throw UsageError("empty-trash takes no arguments") }
    }
    func run() async throws {
        let lib = library(args)
        let trashed = try await lib.trashedDocuments()
        guard args.flag("yes") || trashed.isEmpty else {
            throw UsageError("this deletes \(trashed.count) document\(trashed.count == 1 ? "" : "s") for good; say --yes (lnote list --trash shows them)")
        }
        try await lib.emptyTrash()
        if args.flag("json") { printJSON(["deleted": trashed.map(\.id.uuidString)]) } else {
            print(trashed.isEmpty ? "The trash is empty." : "Deleted \(trashed.count) document\(trashed.count == 1 ? "" : "s") for good.")
        }
    }
}
