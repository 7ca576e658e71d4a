// Every write flow under the crash model (bounded enumeration) and under injected I/O errors.

import Foundation
import Testing
@testable import LulucatStore
@testable import LulucatStoreMaintenance
@testable import LulucatStoreSQLite
import LulucatInk
import LulucatStoreTesting

@Suite("Crash states of the write flows")
struct CrashFlowTests {
    init() { Library.enableSQLiteEngine() }
    @Test("no crash state of a flow breaks an invariant", arguments: CrashFlow.all.map(\.name))
    func crashStates(_ name: String) async {
        let flow = CrashFlow.all.first { $0.name == name }!
        let report = await CrashHarness.explore(flow, limits: .bounded)
        #expect(report.operations > 0)
        #expect(report.statesChecked > 0)
        #expect(report.violatingStates == 0, "\(report.examples.joined(separator: "\n"))")
        print("\(name): \(report.operations) operations, \(report.statesChecked) states, \(report.violatingStates) violations")
    }
}

@Suite("I/O errors in the write flows")
struct FaultInjectionTests {
    init() { Library.enableSQLiteEngine() }
    /// Every other call here (every tenth of the two long SQLite flows), to keep `swift test` short;
    /// `lnote-dev crashcheck` fails every call.
    @Test("calls of a flow failed with EIO, ENOSPC and EDQUOT, once and persistently", arguments: CrashFlow.all.map(\.name))
    func faults(_ name: String) async {
        let flow = CrashFlow.all.first { $0.name == name }!
        var report = await CrashHarness.countCalls(flow)
        #expect(report.violatingStates == 0, "\(report.examples.joined(separator: "\n"))")
        let stride = flow.testFaultStride
        await CrashHarness.injectFaults(flow, into: &report, stride: stride)
        #expect(report.faultRuns == (report.calls + stride - 1) / stride * 6)
        #expect(report.faultsInjected >= report.faultRuns)
        #expect(report.faultViolations == 0, "\(report.examples.joined(separator: "\n"))")
        print("\(name): \(report.calls) calls, \(report.faultRuns) fault runs, \(report.faultsInjected) faults, \(report.faultViolations) violations")
    }
}

@Suite("The crash checker has teeth")
struct CrashCheckerTeethTests {
    init() { Library.enableSQLiteEngine() }
    /// A save that overwrites the page file in place (no temporary, no rename): the checker must
    /// find the crash states where the page is torn, and the flow's own step must still pass.
    @Test("an in-place overwrite of a page is caught")
    func inPlaceOverwriteIsCaught() async throws {
        let flow = CrashFlow(name: "unsafe save", setUp: { library in
            var e = ExpectedLibrary()
            let doc = try await CrashFlow.makeDocument(library, title: "Victim", pages: [(3, 0)], seed: 1)
            e.documents[doc.id] = doc
            return e
        }, run: { library, steps in
            let id = steps.expected.documents.keys.first!
            let page = steps.expected.documents[id]!.pages[0].id
            let new = SampleContent.page(seed: 99, strokes: 3)
            try await steps.step("overwrite in place") {
                let fs = library.fileSystem
                let fd = try fs.open(library.package(id).pagePath(page), .readWrite)
                try fs.truncate(fd, to: 0)
                try PageFile.encode(new).withUnsafeBytes { raw in Result { () throws(FileError) in try fs.write(fd, raw) } }.get()
                try fs.sync(fd)
                try fs.close(fd)
            } expect: { e in e.documents[id]!.setContent(new, of: page) }
        })
        let report = await CrashHarness.explore(flow, limits: .bounded)
        #expect(report.violatingStates > 0)
        #expect(report.examples.contains { $0.contains("cannot be read") || $0.contains("neither its old nor its new") })
    }
}

@Suite("The crash checker sees SQLite's writes")
struct SQLiteCrashCheckerTeethTests {
    init() { Library.enableSQLiteEngine() }
    /// synchronous NORMAL: a WAL commit returns before the WAL is synced. The checker, which now
    /// sees SQLite's writes, must find the states where an acknowledged save is lost (and, the WAL
    /// being checksummed, no state where the database is damaged).
    @Test("a save acknowledged before its WAL sync is caught")
    func unsyncedCommitIsCaught() async throws {
        let flow = CrashFlow(name: "unsynced sqlite save", setUp: CrashFlow.oneDocument(title: "Fragile", pages: [(2, 0)], seed: 21, engine: .sqlite),
                             run: { library, steps in
            let id = steps.expected.documents.keys.first!
            let page = steps.expected.documents[id]!.pages[0].id
            var new = steps.expected.documents[id]!.pages[0].content
            new.elements.append(.stroke(SampleContent.stroke(seed: 99)))
            var configuration = SQLiteContentStore.Configuration()
            configuration.synchronous = .normal
            var store: SQLiteContentStore?
            try await steps.step("save with synchronous NORMAL") {
                store = try SQLiteContentStore(path: library.package(id).contentDatabasePath, mode: .openExisting,
                                               configuration: configuration, fileSystem: library.fileSystem)
                try store!.replacePage(page, with: new)
            } expect: { e in e.documents[id]!.setContent(new, of: page) }
            try await steps.step("close") { try store!.close() }
        })
        let report = await CrashHarness.explore(flow, limits: .bounded)
        #expect(report.violatingStates > 0)
        #expect(report.examples.contains { $0.contains("neither its old nor its new") })
        #expect(!report.examples.contains { $0.contains("corrupt") })
    }
}

@Suite("The migration flow really migrates")
struct MigrationFlowTests {
    init() { Library.enableSQLiteEngine() }
    @Test func migrationOnTheSimulatedFileSystemSwitchesEngines() async throws {
        let fs = SimulatedFileSystem()
        try fs.makeDirectory("/notes")
        let library = Library(root: "/notes", fileSystem: fs)
        let doc = try await CrashFlow.makeDocument(library, title: "Moving", pages: [(3, 1), (2, 0)], seed: 8)
        let package = library.package(doc.id)
        _ = try EngineMigration(fileSystem: fs).migrate(package, to: .journal)
        #expect(try DocumentMetadata.read(package, fileSystem: fs).engine == .journal)
        _ = try EngineMigration(fileSystem: fs).migrate(package, to: .snapshot)
        #expect(try DocumentMetadata.read(package, fileSystem: fs).engine == .snapshot)
        for (page, content) in doc.pages {
            #expect(try StoredPage.read(package, page: page, fileSystem: fs) == content)
        }
    }

    /// The SQLite flow's migration builds content.sqlite on the simulated disk, nowhere else.
    @Test func migrationToSQLiteBuildsTheDatabaseOnTheSimulatedDisk() async throws {
        let fs = SimulatedFileSystem()
        let root = "/lulucat-simfs-\(UUID().uuidString)"
        try fs.makeDirectory(root)
        let library = Library(root: root + "/notes", fileSystem: fs)
        let doc = try await CrashFlow.makeDocument(library, title: "Moving in", pages: [(3, 1), (2, 0)], seed: 13)
        let package = library.package(doc.id)
        _ = try EngineMigration(fileSystem: fs).migrate(package, to: .sqlite)
        #expect(try DocumentMetadata.read(package, fileSystem: fs).engine == .sqlite)
        #expect((try fs.info(package.contentDatabasePath)?.size ?? 0) > 0)
        #expect(try fs.info(package.contentDatabasePath + "-wal") == nil)
        #expect(FileManager.default.fileExists(atPath: root) == false)
        let session = try await library.open(doc.id, options: SessionOptions(autosaveDelay: nil))
        for (page, content) in doc.pages { #expect(try await session.content(of: page) == content) }
        try await session.close()
        _ = try EngineMigration(fileSystem: fs).migrate(package, to: .snapshot)
        #expect(try DocumentMetadata.read(package, fileSystem: fs).engine == .snapshot)
        #expect(try fs.info(package.contentDatabasePath) == nil)
        for (page, content) in doc.pages {
            #expect(try StoredPage.read(package, page: page, fileSystem: fs) == content)
        }
    }
}
