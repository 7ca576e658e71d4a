// lnote migrate: move a document (or every document of the library) to another storage engine,
// verified page by page before the old form is removed.

import Foundation
import LulucatStore
import LulucatStoreMaintenance

struct MigrateCommand: Command {
    static let name = "migrate"
    static let abstract = "Move a document, or the whole library (--all), to another storage engine, verified."
    static let options: [OptionSpec] = [.valued("engine", "snapshot|journal|sqlite", "The engine to move to (required)."), .flag("all", "Migrate every document of the library."), .library, .json]
    static let examples = ["lnote migrate \"Lecture notes\" --engine sqlite", "lnote migrate --all --engine journal"]
    static let usage = "lnote migrate (DOC | --all) --engine snapshot|journal|sqlite [--library DIR] [--json]"
    let args: Arguments
    let engine: EngineKind

    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard let name = args.value("engine") else { throw UsageError("migrate needs --engine snapshot|journal|sqlite") }
        guard let kind = EngineKind(rawValue: name) else { throw UsageError("unknown engine '\(name)' (snapshot, journal or sqlite)") }
        engine = kind
        if args.flag("all") {
            guard args.positionals.isEmpty else { throw UsageError("migrate --all takes no document") }
        } else {
            guard args.positionals.count == 1 else { throw UsageError("migrate takes one document, or --all") }
        }
    }

    func run() async throws {
        let lib = library(args)
        let packages: [DocumentPackage]
        if args.flag("all") {
            packages = try await lib.documents().map(\.package)
        } else {
            let ref = args.positionals[0]
            packages = [try resolvePackage(ref, in: lib)]
        }
        let json = args.flag("json")
        let progress = ProgressLine()
        var results: [[String: Any]] = []
        var failures = 0
        for (i, package) in packages.enumerated() {
            let prefix = packages.count > 1 ? "[\(i + 1)/\(packages.count)] " : ""
            do {
                var lastPhase: String?
                let report = try EngineMigration().migrate(package, to: engine) { p in
                    // Progress on stderr: every page on a terminal, one line per phase otherwise.
                    guard progress.live || p.phase.rawValue != lastPhase else { return }
                    lastPhase = p.phase.rawValue
                    progress.step("\(prefix)\(package.id.uuidString): \(p.phase.rawValue) page \(p.page)/\(p.pageCount)")
                }
                progress.done()
                results.append(["id": package.id.uuidString, "ok": true, "migrated": report.migrated,
                                "from": report.from.rawValue, "to": report.to.rawValue, "pages": report.pages,
                                "elements": report.elements, "assets": report.assets, "seconds": report.seconds,
                                "cleaned": report.findings.map(\.description)])
                if !json {
                    for f in report.findings { print("\(prefix)\(terminalSafe("\(f)"))") }
                    if report.migrated {
                        print("\(prefix)\(package.id.uuidString): \(report.from.rawValue) -> \(report.to.rawValue), \(counted(report.pages, "page")), \(counted(report.elements, "element")), \(counted(report.assets, "asset")) verified in \(String(format: "%.3f", report.seconds)) s")
                    } else {
                        print("\(prefix)\(package.id.uuidString): already uses the \(report.to.rawValue) engine")
                    }
                }
            } catch {
                failures += 1
                progress.done()
                // Interrupted: the document in hand stays on its old engine; the rest are not tried.
                if Task.isCancelled { break }
                results.append(["id": package.id.uuidString, "ok": false, "error": "\(error)"])
                if !json { printError("lnote migrate: \(prefix)\(package.id.uuidString): \(terminalSafe(describeFailure(error)))") }
            }
        }
        if Task.isCancelled { throw CancellationError() }
        if json { printJSON(["documents": results, "failures": failures, "ok": failures == 0]) }
        if failures > 0 { throw ExitCode(code: ExitStatus.failure) }
    }
}
