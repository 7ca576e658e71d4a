// lnote compact: merge each page's journal into its snapshot (journal documents).

import Foundation
import LulucatStore

struct CompactCommand: Command {
    static let name = "compact"
    static let abstract = "Merge every page's journal into its snapshot (journal documents)."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote compact \"Lecture notes\""]
    static let usage = "lnote compact DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("compact takes one document") }
    }
    func run() async throws {
        let lib = library(args)
        let ref = args.positionals[0]
        let package = try resolvePackage(ref, in: lib)
        let session = try await DocumentSession.open(package, options: SessionOptions(autosaveDelay: nil))
        let compacted: [UUID]
        let engine = await session.engineKind
        do {
            compacted = try await session.compact()
            try await session.close()
        } catch {
            await session.abandon()
            throw error
        }
        let findings = await session.engineFindings
        if args.flag("json") {
            printJSON(["id": package.id.uuidString, "engine": engine.rawValue,
                       "compacted_pages": compacted.map(\.uuidString),
                       "findings": findings.map { ["severity": $0.severity.rawValue, "path": $0.path, "message": $0.message] }])
            return
        }
        for f in findings { print("  \(terminalSafe("\(f)"))") }
        if engine != .journal {
            print("\(package.id.uuidString): the \(engine.rawValue) engine keeps no journal; nothing to compact")
        } else {
            print("\(package.id.uuidString): compacted \(compacted.count) page\(compacted.count == 1 ? "" : "s")")
        }
    }
}
