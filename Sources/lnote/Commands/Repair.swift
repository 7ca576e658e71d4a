// lnote repair: fix what verify finds, moving damaged pages aside rather than deleting them.

import Foundation
import LulucatStore
import LulucatStoreThumbnails
import LulucatStoreMaintenance

struct RepairCommand: Command {
    static let name = "repair"
    static let abstract = "Repair a document: rebuild the manifest, move undecodable pages aside, remove orphans."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote repair \"Lecture notes\"", "lnote verify"]
    static let usage = "lnote repair DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("repair takes one document") }
    }
    func run() async throws {
        let lib = library(args)
        let package = try resolvePackage(args.positionals[0], in: lib)
        var findings = try DocumentRepair().repair(package)
        findings += ThumbnailWriter.rebuild(package)
        let remaining = DocumentVerifier().verify(package).filter { $0.severity == .error }
        if args.flag("json") {
            printJSON(["id": package.id.uuidString,
                       "actions": findings.map { ["severity": $0.severity.rawValue, "path": $0.path, "message": $0.message] },
                       "remaining_errors": remaining.map { ["path": $0.path, "message": $0.message] }])
        } else {
            if findings.isEmpty { print("Nothing to repair in \(package.id.uuidString).") }
            for f in findings { print(terminalSafe("\(f)")) }
            for f in remaining { print("still wrong: \(terminalSafe("\(f)"))") }
        }
        if !remaining.isEmpty { throw ExitCode(code: ExitStatus.failure) }
    }
}

/// `lnote restore-page`: a page from the document's recovered/ folder back into its page list.
struct RestorePageCommand: Command {
    static let name = "restore-page"
    static let abstract = "Put a page back from the document's recovered/ folder, with every element that still checks."
    static let options: [OptionSpec] = [.valued("at", "N", default: "where the page was", "The number the restored page takes."), .library, .json]
    static let examples = ["lnote restore-page \"Lecture notes\"", "lnote restore-page \"Lecture notes\" FILE --at 2"]
    static let usage = "lnote restore-page DOC [FILE] [--at N] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard (1...2).contains(args.positionals.count) else { throw UsageError("restore-page takes a document and a file of its recovered/ folder") }
    }
    func run() async throws {
        let lib = library(args)
        let package = try resolvePackage(args.positionals[0], in: lib)
        guard args.positionals.count == 2 else {
            // Without FILE: what can be restored.
            let names = try lib.recoveredPages(package.id)
            if args.flag("json") { printJSON(["id": package.id.uuidString, "recovered_pages": names]) } else {
                if names.isEmpty { print("No page files in \(package.id.uuidString)'s recovered/ folder.") }
                for n in names { print(terminalSafe(n)) }
            }
            return
        }
        var at: Int?
        if let value = args.value("at") {
            guard let n = Int(value), n >= 1 else { throw UsageError("--at takes a page number from 1") }
            at = n - 1
        }
        // FILE may be given as a path; only its name inside recovered/ is used.
        let name = String(args.positionals[1].split(separator: "/").last ?? "")
        let r = try await lib.restorePage(package.id, from: name, at: at)
        if args.flag("json") {
            var o: [String: Any] = ["id": package.id.uuidString, "page": r.page.uuidString, "page_number": r.index + 1,
                                    "restored": r.restored, "source": r.source]
            if let lost = r.lost { o["lost"] = lost }
            printJSON(o)
        } else {
            print("Restored page \(r.index + 1) (\(r.page.uuidString)): \(r.restored) element\(r.restored == 1 ? "" : "s")"
                  + (r.lost.map { ", \($0) lost" } ?? "") + "; \(terminalSafe(r.source)) is kept.")
        }
    }
}
