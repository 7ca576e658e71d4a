// lnote repair: fix what verify finds, moving damaged pages aside rather than deleting them.

import Foundation
import LulucatStore

struct RepairCommand: Command {
    static let name = "repair"
    static let abstract = "Repair a document: rebuild the manifest, move undecodable pages aside, remove orphans."
    static let usage = "lnote repair DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library"], flags: ["json"])
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
