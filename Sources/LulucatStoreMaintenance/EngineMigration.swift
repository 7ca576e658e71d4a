// Moving a document from one storage engine to another, verified and crash-safe: the new form is
// written beside the old, checked page by page, then document.json switches in one atomic write.
// The procedure and what a crash at each step leaves are in docs/sqlite-engine.md, "Migration".

import Foundation
import LulucatInk
import LulucatStore

/// The steps of a migration, in order. After each one a crash leaves a document that opens with
/// all its data (document.json always names a complete form). The crash tests stop after each.
package enum MigrationStep: String, Sendable, CaseIterable {
    /// The marker `.migration` is durable: open-time cleanup knows a migration may be unfinished.
    case marked
    /// Some of the pages are written in the new form (a crash in the middle of writing).
    case partlyWritten
    /// Every page is written in the new form, under its final file names.
    case written
    /// Counts, assets and the content hash of every page match between the two forms.
    case verified
    /// document.json names the new engine: the new form is the truth from here on.
    case switched
    /// Some of the old form's files are removed (a crash in the middle of removing).
    case oldFormPartlyRemoved
    /// The old form is gone; only the marker is left.
    case oldFormRemoved
}

/// What a migration did.
public struct MigrationReport: Sendable {
    /// The document's id.
    public var document: UUID
    /// The engine it was on.
    public var from: EngineKind
    /// The engine it is on now (the one asked for).
    public var to: EngineKind
    /// False when the document already used the engine (nothing was written).
    public var migrated: Bool
    /// Pages in the document (all of them moved and verified, when `migrated`).
    public var pages: Int
    /// Elements (strokes, images) moved and verified over all pages; 0 when nothing was migrated.
    public var elements: Int
    /// Distinct assets the pages show, each checked to be on disk.
    public var assets: Int
    /// How long the migration took, in seconds (wall clock, from taking the lock to the end).
    public var seconds: Double
    /// Leftovers of an earlier interrupted migration that were removed first.
    public var findings: [Finding]
}

/// Where a migration is, for progress output: reported after each page of each phase.
public struct MigrationProgress: Sendable {
    /// The two passes over the pages.
    public enum Phase: String, Sendable {
        /// Writing each page in the new engine's form, beside the old.
        case writing
        /// Reading each page back through the new engine and comparing it with the old.
        case verifying
    }
    /// The pass under way.
    public var phase: Phase
    /// Pages done in this phase, 1 to `pageCount`.
    public var page: Int
    /// The document's pages: each phase goes over all of them.
    public var pageCount: Int
}

/// Migrates documents between storage engines (`lnote migrate`).
///
/// ```swift
/// let report = try EngineMigration().migrate(package, to: .sqlite)
/// ```
public struct EngineMigration: Sendable {
    /// The file system the package is read and written through.
    public let fileSystem: any FileSystem
    /// Tests only: stop (as a crash would, nothing cleaned up) right after this step.
    var stopAfter: MigrationStep?

    /// A migration through `fileSystem`; it holds no state, so one may serve any number of
    /// documents (each `migrate` takes that document's lock).
    public init(fileSystem: any FileSystem = PosixFileSystem()) { self.fileSystem = fileSystem }

    /// The marker of a migration under way, `<package>/.migration`.
    static let markerName = EngineForm.migrationMarkerName

    /// Thrown by a stop for a test; the package is left exactly as a crash there would leave it.
    struct Stopped: Error, Equatable { var step: MigrationStep }

    /// Moves a document's pages to `target`'s form.
    ///
    /// - Throws: `StoreError.documentInUse` when a session has it open; `.engineNotAvailable` for an
    ///   engine this build does not include (nothing changed); the read, write or verification failure otherwise,
    ///   in which case the document is still on its old engine, unchanged.
    ///   `.migrationRefused` when the new form would not match the old; `.cancelled` when the task
    ///   is cancelled (checked between pages; the document stays on its old engine).
    @discardableResult
    public func migrate(_ package: DocumentPackage, to target: EngineKind,
                        progress: (MigrationProgress) -> Void = { _ in }) throws(StoreError) -> MigrationReport {
        do { return try migrateStoppable(package, to: target, progress: progress) } catch {
            // The pages the error names, by their numbers in the document (it is unchanged).
            let order = (try? PackageReader.readDocument(package, fileSystem: fileSystem))?.pages.map(\.id) ?? []
            switch error {
            case let e as StoreError: throw e.numberingPages(order)
            case let e as MigrationError: throw .migrationRefused(e)
            case let e as FileError: throw .file(e.numberingPages(order))
            case let e as SQLiteEngineError: throw StoreError(contentDatabase: e).numberingPages(order)
            case let e as Stopped: throw .invalidArgument("stopped for a test after \(e.step.rawValue)")
            default: throw .invalidArgument("migration failed: \(error); the document is unchanged")
            }
        }
    }

    /// `migrate`, with the test stops (`stopAfter`) thrown as `Stopped`.
    func migrateStoppable(_ package: DocumentPackage, to target: EngineKind,
                          progress: (MigrationProgress) -> Void = { _ in }) throws -> MigrationReport {
        let fs = fileSystem
        let lock = try package.lockForWriting(fs)
        defer { fs.unlock(lock) }
        let start = DispatchTime.now().uptimeNanoseconds
        var findings: [Finding] = []
        try package.completeTransaction(fileSystem: fs, findings: &findings)
        var doc = try PackageReader.readDocument(package, fileSystem: fs)
        // An engine this build lacks, on either side: refused before anything is tidied.
        for engine in [doc.engine, target] { try engine.requireAvailable(package) }
        try DocumentSession.removeStaleTemporaries(package, fileSystem: fs, findings: &findings)
        try EngineForm.cleanUpInterruptedMigration(package, engine: doc.engine, fileSystem: fs, findings: &findings)
        let source = doc.engine
        var report = MigrationReport(document: package.id, from: source, to: target, migrated: false,
                                     pages: doc.pages.count, elements: 0, assets: 0, seconds: 0, findings: findings)
        guard source != target else { return report }
        for engine in [source, target] where !engine.isMigratable {
            throw StoreError.invalidArgument("the \(engine.rawValue) engine cannot be migrated in this build")
        }
        for dir in [package.pagesPath, package.assetsPath] { try fs.checked.ensureDirectory(dir) }

        // 1. The marker: from here until it is removed, open-time cleanup removes the files of
        //    whichever form document.json does not name.
        let marker = PackageJSON.encode(["from": source.rawValue, "to": target.rawValue])
        try fs.checked.writeAtomically(marker, to: package.path + "/" + Self.markerName)
        try stop(.marked)

        // 2-3. Write the new form beside the old, then read it back and compare.
        let expected: [UUID: PageFacts]
        do {
            expected = try writeNewForm(package, doc, to: target, progress: progress)
            try stop(.written)
            try verifyNewForm(package, doc, target: target, expected: expected, progress: progress)
            try stop(.verified)
        } catch let error as Stopped {
            throw error
        } catch {
            // Before the switch the old form is the truth: the new one goes, then the marker.
            try? EngineForm.remove(try EngineForm.leftovers(keeping: source, in: package, fileSystem: fs), in: package, fileSystem: fs)
            try? fs.removeIfPresent(package.path + "/" + Self.markerName)
            _ = try? package.removeEmptyPagesFolder(source, fileSystem: fs)
            throw error
        }

        // 4. The switch: one atomic, durable write of document.json.
        doc.engine = target
        try fs.checked.writeAtomically(PackageJSON.encode(doc), to: package.documentPath)
        try stop(.switched)

        // 5. The old form goes (the new form owns no file of it), then the marker.
        let old = try EngineForm.leftovers(keeping: target, in: package, fileSystem: fs)
        if stopAfter == .oldFormPartlyRemoved {
            try EngineForm.remove(Array(old.prefix((old.count + 1) / 2)), in: package, fileSystem: fs)
            try stop(.oldFormPartlyRemoved)
        }
        try EngineForm.remove(old, in: package, fileSystem: fs)
        _ = try package.removeEmptyPagesFolder(target, fileSystem: fs)
        try stop(.oldFormRemoved)
        try fs.checked.removeIfPresent(package.path + "/" + Self.markerName)
        try fs.checked.syncDirectory(package.path)

        report.migrated = true
        report.elements = expected.values.reduce(0) { $0 + $1.counts.total }
        report.assets = Set(expected.values.flatMap(\.assets)).count
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return report
    }

    private func stop(_ step: MigrationStep) throws {
        if stopAfter == step { throw Stopped(step: step) }
    }

    /// What must match between the two forms of a page.
    struct PageFacts: Equatable {
        var hash: String
        var counts: ElementCounts
        var assets: Set<UUID>

        init(_ content: PageContent) throws(StoreError) {
            do { hash = try content.contentHash() } catch { throw .invalidArgument("a page cannot be hashed: \(error)") }
            var c = ElementCounts(strokes: 0, images: 0, unknown: 0)
            for e in content.elements {
                switch e {
                case .stroke: c.strokes += 1
                case .image: c.images += 1
                case .unknown: c.unknown += 1
                }
            }
            counts = c
            assets = content.assetIDs
        }
    }

    /// Reads every page through the old engine and writes it in the new form; returns each page's
    /// facts as the old engine read them.
    private func writeNewForm(_ package: DocumentPackage, _ doc: DocumentMetadata, to target: EngineKind,
                              progress: (MigrationProgress) -> Void) throws -> [UUID: PageFacts] {
        let fs = fileSystem
        let source = try DocumentSession.makeEngine(doc, package: package, fileSystem: fs)
        // The old engine is only read; a SQLite source is closed without writing.
        defer { source.closeWithoutTidying() }
        let writer = try target.formWriter(migratingFrom: doc.engine, source: source, package: package,
                                           codec: doc.sampleCodec, fileSystem: fs)
        var facts: [UUID: PageFacts] = [:]
        do {
            for (i, entry) in doc.pages.enumerated() {
                if Task.isCancelled { throw StoreError.cancelled }
                let content = try source.loadPage(entry.id)
                facts[entry.id] = try PageFacts(content)
                try writer.write(entry.id, content)
                progress(MigrationProgress(phase: .writing, page: i + 1, pageCount: doc.pages.count))
                if i + 1 == (doc.pages.count + 1) / 2 { try stop(.partlyWritten) }
            }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        return facts
    }

    /// Reads every page back from the new form alone and compares it with what the old one held;
    /// also checks every asset a page shows is on disk.
    private func verifyNewForm(_ package: DocumentPackage, _ doc: DocumentMetadata, target: EngineKind,
                               expected: [UUID: PageFacts], progress: (MigrationProgress) -> Void) throws {
        let fs = fileSystem
        var newDoc = doc
        newDoc.engine = target
        let reader = try DocumentSession.makeEngine(newDoc, package: package, fileSystem: fs)
        defer { reader.closeWithoutTidying() }
        for (i, entry) in doc.pages.enumerated() {
            if Task.isCancelled { throw StoreError.cancelled }
            let found = try PageFacts(try reader.loadPage(entry.id))
            guard let want = expected[entry.id] else { throw MigrationError.verification(page: entry.id, "the page was not read from the old form", number: i + 1) }
            if found.counts != want.counts {
                throw MigrationError.verification(page: entry.id, "\(found.counts.strokes)/\(found.counts.images)/\(found.counts.unknown) strokes/images/unknown elements in the new form, \(want.counts.strokes)/\(want.counts.images)/\(want.counts.unknown) in the old", number: i + 1)
            }
            if found.assets != want.assets { throw MigrationError.verification(page: entry.id, "the assets shown differ between the forms", number: i + 1) }
            if found.hash != want.hash { throw MigrationError.verification(page: entry.id, "content hash \(found.hash) in the new form, \(want.hash) in the old", number: i + 1) }
            progress(MigrationProgress(phase: .verifying, page: i + 1, pageCount: doc.pages.count))
        }
        let onDisk = try PackageReader.scanAssets(package, fileSystem: fs).assets
        for asset in Set(expected.values.flatMap(\.assets)).sortedByUUIDString() where onDisk[asset] == nil {
            throw MigrationError.verification(page: nil, "asset \(asset) is shown by a page but missing from assets/ (run lnote verify)")
        }
    }
}
