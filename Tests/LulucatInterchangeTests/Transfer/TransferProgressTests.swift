// Long transfers report progress and honour cancellation (issue 13, item 4): the one-file export
// and import, and the store's own import of a package. Reports are monotonic and end at their
// total; a task cancelled at any report throws `.cancelled` and leaves no trace (no document, no
// staging folder, no file or temporary file at the export's destination).

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatStoreSQLite
import LulucatInterchange

/// Runs `body` in a task whose progress callback records every report and cancels the task
/// right after the `cancelAfter`-th one (never, for nil).
func runReporting<T: Sendable>(cancelAfter: Int? = nil, cancelFirst: Bool = false,
                               _ body: @escaping @Sendable (_ progress: (OperationProgress) -> Void) throws -> T) async -> (Result<T, any Error>, [OperationProgress]) {
    await Task { () -> (Result<T, any Error>, [OperationProgress]) in
        if cancelFirst { withUnsafeCurrentTask { $0?.cancel() } }
        var reports: [OperationProgress] = []
        let result = Result { try body { p in
            reports.append(p)
            if reports.count == cancelAfter { withUnsafeCurrentTask { $0?.cancel() } }
        } }
        return (result, reports)
    }.value
}

/// Monotonic (each report above the last), one operation and one total, ending at the total.
func expectCompleteProgress(_ reports: [OperationProgress], _ operation: OperationProgress.Operation, total: Int,
                            sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!reports.isEmpty, sourceLocation: sourceLocation)
    #expect(reports.allSatisfy { $0.operation == operation && $0.total == total }, "\(reports)", sourceLocation: sourceLocation)
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed < $1.completed }, "\(reports)", sourceLocation: sourceLocation)
    #expect(reports.first?.completed == 0, sourceLocation: sourceLocation)
    #expect(reports.last?.completed == total, sourceLocation: sourceLocation)
    #expect(reports.last?.fractionCompleted == 1, sourceLocation: sourceLocation)
}

func isCancelled<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(let e) = result, case .cancelled? = e as? StoreError { return true }
    return false
}

@Suite struct TransferProgressTests {
    init() { Library.enableSQLiteEngine() }
    let root = NSTemporaryDirectory() + "lnote-progress-" + UUID().uuidString

    /// A closed document of three pages, strokes on each and an image on the first.
    func sampleDocument(_ library: Library, engine: EngineKind) async throws -> DocumentPackage {
        let package = try await library.createDocument(title: "Progress", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        var pages = [await session.pageIDs()[0]]
        pages.append(try await session.addPage())
        pages.append(try await session.addPage())
        for (n, page) in pages.enumerated() {
            for s in 0..<5 {
                try await session.append(Stroke(samples: (0..<30).map { Sample(x: Int32(100 + $0 * 3 + s), y: Int32(200 + n * 10), radius: 9, pressure: 500, time: UInt32($0 * 4)) }), to: page)
            }
        }
        try await session.insertImage(Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3]), fileExtension: "png",
                                      frame: QuantizedRect(x: 0, y: 0, width: 10, height: 10), on: pages[0])
        try await session.close()
        return package
    }

    func contents(_ path: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    @Test(arguments: EngineKind.allCases)
    func exportAndImportReportProgressAndEveryCancellationLeavesNoTrace(engine: EngineKind) async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root + "/a")
        let package = try await sampleDocument(library, engine: engine)
        let out = root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)

        // Export, whole: one report per file read, then the file in place.
        let zip = out + "/doc.zip"
        let (exported, exportReports) = await runReporting { p in try DocumentTransfer.exportArchive(package.id, from: library, to: zip, progress: p) }
        let bytes = try exported.get()
        let files = try library.withConsistentFiles(package.id) { _, files in files }
        expectCompleteProgress(exportReports, .exporting, total: files.count + 1)
        #expect(exportReports.count == files.count + 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: zip)).count == bytes)
        let archive = try Data(contentsOf: URL(fileURLWithPath: zip))

        // Export cancelled after each report but the last: nothing at the destination.
        for n in 1..<exportReports.count {
            let dest = out + "/cancelled-\(n).zip"
            let (result, reports) = await runReporting(cancelAfter: n) { p in try DocumentTransfer.exportArchive(package.id, from: library, to: dest, progress: p) }
            #expect(isCancelled(result), "cancelled after report \(n): \(result)")
            #expect(reports.count == n)
            #expect(!FileManager.default.fileExists(atPath: dest))
            #expect(contents(out) == ["doc.zip"], "report \(n)")
        }
        // A task cancelled before it starts writes nothing either.
        let (early, _) = await runReporting(cancelFirst: true) { p in try DocumentTransfer.exportArchive(package.id, from: library, to: out + "/early.zip", progress: p) }
        #expect(isCancelled(early))
        #expect(contents(out) == ["doc.zip"])

        // Import, whole: one report per file written, then the document in the library.
        let target = Library(root: root + "/b")
        let (imported, importReports) = await runReporting { p in try DocumentTransfer.importArchive(archive, into: target, progress: p) }
        let result = try imported.get()
        let total = try #require(importReports.last?.total)
        expectCompleteProgress(importReports, .importing, total: total)
        // Every file but document.json and manifest.json (written from what was checked), then the claim.
        #expect(total == files.count - 2 + 1, "\(files): \(importReports)")
        #expect(try await target.documents().map(\.id) == [result.package.id])
        #expect(DocumentVerifier().verify(result.package).filter { $0.severity == .error }.isEmpty)

        // Import cancelled after each report but the last: no document, no staging folder.
        for n in 1..<importReports.count {
            let fresh = Library(root: root + "/c-\(n)")
            let (result, reports) = await runReporting(cancelAfter: n) { p in try DocumentTransfer.importArchive(archive, into: fresh, progress: p) }
            #expect(isCancelled(result), "cancelled after report \(n): \(result)")
            #expect(reports.count == n)
            #expect(try await fresh.documents().isEmpty, "report \(n)")
            #expect(fresh.stagingFolders().isEmpty, "report \(n)")
            #expect(contents(fresh.root).allSatisfy { !$0.hasSuffix(".lnote") && !$0.hasPrefix(".lnote-tmp") }, "report \(n): \(contents(fresh.root))")
        }
        // Cancelled after the last report: the import was done, and it stays.
        let done = Library(root: root + "/d")
        let (late, _) = await runReporting(cancelAfter: importReports.count) { p in try DocumentTransfer.importArchive(archive, into: done, progress: p) }
        #expect(try await done.documents().map(\.id) == [try late.get().package.id])
    }

    @Test func importThrowsTypedErrorsAnAppCanShow() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = Library(root: root + "/a")
        do {
            _ = try DocumentTransfer.importArchive(Data("not a zip".utf8), into: library)
            Issue.record("bytes that are not a zip were imported")
        } catch {
            // Typed: `error` is a StoreError here, no cast.
            let e: StoreError = error
            let refusal = try #require(e.importRefusal, "\(e)")
            #expect((refusal.cause as? ArchiveError)?.kind == .notAnArchive)
            #expect(e.errorDescription?.contains("could not be imported") == true)
            #expect(e.recoverySuggestion != nil)
            #expect(!e.isRetryable && !e.isCorruption && !e.isOutOfSpace)
        }
        // The store's import: an error of the caller's stream is a refusal naming it, nothing left.
        struct StreamBroke: Error, CustomStringConvertible { var description: String { "the stream broke" } }
        let doc = DocumentMetadata(id: UUID(), title: "T", created: Date(), modified: Date())
        do {
            _ = try library.importPackage(document: Data(PackageJSON.encode(doc)), files: [ImportFile(path: "assets/\(UUID().uuidString).png", size: 3)]) { _, _ in
                throw StreamBroke()
            }
            Issue.record("an import whose stream failed succeeded")
        } catch {
            let e: StoreError = error
            #expect(e.importRefusal?.reason.contains("the stream broke") == true, "\(e)")
        }
        #expect(try library.documents().isEmpty)
        #expect(library.stagingFolders().isEmpty)
        // A document.json that is not one.
        do {
            _ = try library.importPackage(document: Data("{}".utf8), files: []) { _, _ in }
            Issue.record("an empty document.json was imported")
        } catch {
            #expect(error.importRefusal?.reason.contains("document.json") == true, "\(error)")
        }
    }
}
