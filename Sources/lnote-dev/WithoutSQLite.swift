// `lnote-dev without-sqlite`: the store's calls on one document in a process that has not enabled
// the SQLite engine (main skips `Library.enableSQLiteEngine()` for this command), for
// LnoteCLITests' EngineNotAvailableTests: a SQLite document must be listed, refused with
// `StoreError.engineNotAvailable` and left byte for byte as it was. Hidden from `help`: a test
// harness's helper.

import Foundation
import LulucatStore
import LulucatStoreMaintenance

struct WithoutSQLiteCommand: Command {
    static let name = "without-sqlite"
    static let abstract = "List, open, read, verify, repair, migrate and duplicate one document without the SQLite engine; print a line per call."
    static let usage = "lnote-dev without-sqlite LIBRARY DOCUMENT-ID"

    var library: String
    var document: UUID

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: [], flags: [])
        guard a.positionals.count == 2 else { throw UsageError("needs LIBRARY and DOCUMENT-ID") }
        library = a.positionals[0]
        guard let id = UUID(uuidString: a.positionals[1]) else { throw UsageError("'\(a.positionals[1])' is not a document id") }
        document = id
    }

    /// `call: engine-not-available <kind>` for the refusal, `call: other <error>` for any other
    /// error, `call: ok ...` when it went through.
    static func outcome(_ error: StoreError) -> String {
        if case let .engineNotAvailable(kind, _) = error { return "engine-not-available \(kind.rawValue): \(error)" }
        return "other \(error)"
    }

    func run() async throws {
        let lib = Library(root: library)
        let package = lib.package(document)
        print("available: sqlite \(EngineKind.sqlite.isAvailable)")
        for entry in try await lib.documents() where entry.id == document {
            print("list: \(entry.title) | unavailable \(entry.unavailableEngine?.rawValue ?? "-") | needs repair \(entry.needsRepair) | \(entry.problem ?? "-")")
        }
        do { let s = try await lib.open(document); await s.abandon(); print("open: ok") } catch { print("open: \(Self.outcome(error))") }
        do { let r = try await lib.openReadOnly(document); await r.close(); print("read: ok") } catch { print("read: \(Self.outcome(error))") }
        let findings = DocumentVerifier().verify(package)
        print("verify: \(findings.filter { $0.severity == .error }.count) errors, \(findings.filter { $0.severity == .warning }.count) warnings: \(findings.map(\.message).joined(separator: " / "))")
        do { let f = try DocumentRepair().repair(package); print("repair: ok \(f.count) findings") } catch { print("repair: \(Self.outcome(error))") }
        do { _ = try EngineMigration().migrate(package, to: .snapshot); print("migrate: ok") } catch { print("migrate: \(Self.outcome(error))") }
        do { _ = try await lib.duplicate(document); print("duplicate: ok") } catch { print("duplicate: \(Self.outcome(error))") }
    }
}
