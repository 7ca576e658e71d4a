// Verify and the library's copy report progress and honour cancellation (issue 13, item 4):
// reports are monotonic and end at their total; a task cancelled at any report throws
// `.cancelled` and leaves no trace (verify changes no byte; a cancelled copy leaves no document
// and no staging folder).

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

/// Runs `body` in a task whose progress callback records every report and cancels the task right
/// after the `cancelAfter`-th one (never, for nil).
private func runReporting<T: Sendable>(cancelAfter: Int? = nil,
                                       _ body: @escaping @Sendable (_ progress: (OperationProgress) -> Void) throws -> T) async -> (Result<T, any Error>, [OperationProgress]) {
    await Task { () -> (Result<T, any Error>, [OperationProgress]) in
        var reports: [OperationProgress] = []
        let result = Result { try body { p in
            reports.append(p)
            if reports.count == cancelAfter { withUnsafeCurrentTask { $0?.cancel() } }
        } }
        return (result, reports)
    }.value
}

private func expectComplete(_ reports: [OperationProgress], _ operation: OperationProgress.Operation, total: Int,
                            sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(reports.allSatisfy { $0.operation == operation && $0.total == total }, "\(reports)", sourceLocation: sourceLocation)
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed < $1.completed }, "\(reports)", sourceLocation: sourceLocation)
    #expect(reports.first?.completed == 0, sourceLocation: sourceLocation)
    #expect(reports.last?.completed == total, "\(reports)", sourceLocation: sourceLocation)
}

private func isCancelled<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(let e) = result, case .cancelled? = e as? StoreError { return true }
    return false
}

/// Every file under `path` with its bytes.
private func tree(_ path: String) -> [String: Data] {
    var out: [String: Data] = [:]
    for name in FileManager.default.subpaths(atPath: path) ?? [] {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDir), !isDir.boolValue {
            out[name] = FileManager.default.contents(atPath: path + "/" + name) ?? Data()
        }
    }
    return out
}

@Suite struct VerifyProgressTests {
    init() { Library.enableSQLiteEngine() }
    func fourPages(_ library: Library, engine: EngineKind) async throws -> DocumentPackage {
        let package = try await library.createDocument(title: "Four", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        var pages = [await session.pageIDs()[0]]
        for _ in 0..<3 { pages.append(try await session.addPage()) }
        for (n, page) in pages.enumerated() { try await session.append(sampleStroke(30, seed: n), to: page) }
        try await session.insertImage(Data([1, 2, 3, 4]), fileExtension: "png", frame: QuantizedRect(x: 0, y: 0, width: 8, height: 8), on: pages[1])
        try await session.close()
        return package
    }

    @Test(arguments: EngineKind.allCases)
    func verifyReportsEveryPageAndACancelledVerifyThrowsAndChangesNothing(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await fourPages(library, engine: engine)
        let before = tree(package.path)
        let verifier = DocumentVerifier(fileSystem: library.fileSystem)

        let (whole, reports) = await runReporting { p in try verifier.verify(package, progress: p) }
        #expect(try whole.get().filter { $0.severity == .error }.isEmpty)
        expectComplete(reports, .verifying, total: 4 + 1)
        #expect(reports.count == 6)
        // The same findings as the call without progress.
        #expect(try whole.get() == verifier.verify(package))

        for n in 1..<reports.count {
            let (result, got) = await runReporting(cancelAfter: n) { p in try verifier.verify(package, progress: p) }
            #expect(isCancelled(result), "cancelled after report \(n): \(result)")
            #expect(got.count == n)
        }
        #expect(tree(package.path) == before)
    }

    @Test(arguments: EngineKind.allCases)
    func duplicateReportsEveryFileAndACancelledCopyLeavesNothing(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await fourPages(library, engine: engine)
        let files = try PackageReader.contentFiles(package, fileSystem: library.fileSystem)

        for n in 1...(files.count + 1) {
            let (result, got) = await runReporting(cancelAfter: n) { p in try library.duplicate(package.id, progress: p) }
            #expect(isCancelled(result), "cancelled after report \(n): \(result)")
            #expect(got.count == n)
            #expect(try await library.documents().map(\.id) == [package.id], "report \(n)")
            #expect(library.stagingFolders().isEmpty, "report \(n)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: library.root).filter { $0.hasPrefix(temporaryFilePrefix) }.isEmpty)
        }
        let (copied, reports) = await runReporting { p in try library.duplicate(package.id, title: "Copy", progress: p) }
        let copy = try copied.get()
        expectComplete(reports, .copying, total: files.count + 1)
        #expect(reports.count == files.count + 2)
        #expect(Set(try await library.documents().map(\.id)) == [package.id, copy.id])
        #expect(DocumentVerifier().verify(copy).filter { $0.severity == .error }.isEmpty)
    }
}
