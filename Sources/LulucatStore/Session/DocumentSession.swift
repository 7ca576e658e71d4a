// An open document: one actor per document, the only writer of its package while it is open.

import Foundation
import LulucatInk

/// An open document. Pages load on demand (one file read each), edits mark pages dirty, and
/// autosave makes dirty pages durable 0.5 s after the last change.
///
/// ```swift
/// let session = try await library.open(documentID)
/// let page = try await session.pageIDs()[0]
/// try await session.append(stroke, to: page)
/// try await session.close()
/// ```
public actor DocumentSession {
    /// The document's package (its id and folder); readable from any thread without `await`.
    public nonisolated let package: DocumentPackage
    let fileSystem: any FileSystem
    let options: SessionOptions
    var metadata: DocumentMetadata
    var engine: any StorageEngine
    /// The engine again, reachable from `deinit` (which may not touch a non-Sendable property).
    let engineForRelease: EngineOwnership
    var loaded: [UUID: LoadedPage] = [:]
    var lockFD: FileDescriptor?
    /// document.json (and the manifest) lag behind the pages in memory.
    var metadataDirty = false
    var autosaveTask: Task<Void, Never>?
    var autosaveGeneration: UInt64 = 0
    /// The engine's idle work after a quiet autosave (DocumentSession+Together.swift).
    var idleTask: Task<Void, Never>?
    /// How many times the engine's idle work ran.
    package internal(set) var idleCount = 0
    var useClock: UInt64 = 0
    var isClosed = false
    /// `close()` has started: edits are refused from here on (DocumentSession+Lifecycle.swift).
    var isClosing = false
    /// Callers of `close()` waiting for a close already under way.
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    /// The delay before the next autosave retry after failed saves (nil after a save succeeds).
    var retryDelay: Duration?
    var saveSequence: UInt64 = 0
    /// Holders sharing this session (Library.openShared, OpenSessions.swift); `close()` closes at the last.
    var holders = 1
    /// The subscribers of `events()` (SessionEvents.swift).
    nonisolated let eventHub = EventHub<SessionEvent>(merge: SessionEvent.merge, commutes: SessionEvent.commutes)
    /// Batches submitted in order (`submit`), waiting for their turn.
    nonisolated let submissions = SubmissionQueue()
    /// The session's own undo history (`SessionOptions.undoLevels`).
    var undoHistory = UndoHistory()
    /// While a transaction runs: the steps that undo what it did so far, newest first.
    var transactionLog: [UndoStep]?
    /// Page-structure changes of a transaction under way, kept in memory until it commits
    /// (DocumentSession+Transactions.swift).
    var deferredStructure: DeferredStructure?
    /// A committed transaction whose writes have not all happened (one failed after the commit):
    /// finished before anything else is written.
    var pendingRecord: PendingRecord?
    /// Pages whose next save writes them whole: their recorded changes no longer lead from what
    /// is stored to what they hold (a page put back by a rollback, one changed after a record).
    var wholeWrites: Set<UUID> = []
    /// Writes thumbnails off the saving path (nil when the options turn them off, or when this
    /// build draws none: `ThumbnailWriter.isAvailable`).
    let thumbnailWriter: ThumbnailWriter?
    /// The package's assets (id: extension), read once when first needed (DocumentSession+Assets.swift).
    var knownAssets: [UUID: String]?
    /// Page files found on disk that document.json does not list (kept, reported).
    var unlistedPages: [UUID] = []
    /// Makes document.json's bytes, encoding only the pages whose entry changed since the last
    /// write: a page-structure change costs one page's encoding, not the notebook's (issue 34).
    var documentWriter = DocumentJSONWriter()

    /// What the open-time checks found and repaired, and then what loading each page found about
    /// its damage (per page: what was salvaged, what was lost, what was kept aside).
    public internal(set) var openReport: [Finding] = []
    /// How long each page save took, in seconds, since the session opened (autosave and flush).
    package internal(set) var saveDurations: [Double] = []
    /// The error of the last autosave that failed, cleared by the next save that succeeds.
    public internal(set) var lastSaveError: StoreError?

    struct LoadedPage {
        var content: PageContent
        var changes: [PageChange] = []
        var dirty = false
        var lastUse: UInt64 = 0
        /// The coded strokes of the page as last read or written, so a save re-codes only new ones.
        var encoded: EncodedStrokes?
        /// The ids of `content`'s elements, built at the first edit that adds elements, so an
        /// append checks its ids without scanning the page (`PageContent.apply(_:ids:)`).
        var ids: Set<UUID>?
        /// Elements transformed while the page is loaded, mapped from their state before the first
        /// transform so steps compose instead of each rounding the last (DocumentSession+Editing.swift).
        var transformed: [UUID: TransformedElement] = [:]
    }

    /// An element as it was before its first transform, the transforms since composed, and what
    /// they gave; when the page's element no longer equals `current` (an undo, a sync merge), the
    /// next transform starts again from the element as it is.
    struct TransformedElement {
        var original: Element
        var total: SimilarityTransform
        var current: Element
    }

    /// The marker that says a session has the document open; found at open, it means the last
    /// session did not close (a crash), so page metadata in document.json may lag its pages.
    package static let sessionMarkerName = ".session"

    init(package: DocumentPackage, fileSystem: any FileSystem, options: SessionOptions,
         metadata: DocumentMetadata, engine: any StorageEngine, lockFD: FileDescriptor) {
        self.package = package
        self.fileSystem = fileSystem
        self.options = options
        self.metadata = metadata
        self.engine = engine
        self.engineForRelease = EngineOwnership(engine)
        self.lockFD = lockFD
        let hub = eventHub
        // No renderer in this build (LulucatStoreThumbnails not enabled): no thumbnails are written.
        self.thumbnailWriter = ThumbnailWriter.isAvailable ? options.thumbnails.map {
            ThumbnailWriter(options: $0, fileSystem: fileSystem, onWritten: { hub.send(.thumbnailWritten(page: $0)) })
        } : nil
    }

    /// A session released without `close()` saves what it accepted and releases its lock here
    /// (DocumentSession+Lifecycle.swift). Nothing else can reach the actor's state any more.
    deinit {
        autosaveTask?.cancel()
        idleTask?.cancel()
        defer {
            eventHub.finish(with: .closed)
            // Last: passing `self` on ends the deinit's access to the actor's state.
            OpenSessions.shared.remove(path: package.path, ObjectIdentifier(self))
        }
        guard !isClosed, let lock = lockFD else { return }
        // Queued thumbnails are not written into a package this session no longer holds.
        if let writer = thumbnailWriter { Task { await writer.stop() } }
        let pages = loaded
        let dirty = metadata.pages.compactMap { entry -> PageSave? in
            guard let p = pages[entry.id], p.dirty else { return nil }
            return PageSave(id: entry.id, content: p.content, changes: p.changes, reusing: p.encoded)
        }
        // An open of this package meanwhile waits for the lock rather than being refused.
        OpenSessions.shared.beginRelease(package.path)
        DocumentSession.finishReleased(package: package, fileSystem: fileSystem, engine: engineForRelease.engine, metadata: metadata,
                                       dirtyPages: dirty, metadataDirty: metadataDirty, pending: pendingRecord,
                                       wholeWrites: wholeWrites, lock: lock)
        OpenSessions.shared.endRelease(package.path)
    }

    /// Opens a document package for writing.
    ///
    /// - Throws: `StoreError.documentInUse` when another session has it open,
    ///   `StoreError.corruptFile` when document.json cannot be read (the package is left untouched),
    ///   `StoreError.unsupportedVersion` for a newer format, `StoreError.engineNotAvailable` for a
    ///   document whose engine this build does not include (the package is left untouched).
    package static func open(_ package: DocumentPackage, fileSystem: any FileSystem = PosixFileSystem(),
                            options: SessionOptions = SessionOptions()) async throws(StoreError) -> DocumentSession {
        let fs = fileSystem
        if Task.isCancelled { throw .cancelled }
        guard let info = try fs.checked.info(package.path) else {
            throw .documentNotFound(package.path)
        }
        guard info.kind == .directory else { throw .unexpectedFileKind(path: package.path, found: info.kind) }
        let lock = try await lockHandedOver(package, fs)
        let session: DocumentSession
        var findings: [Finding] = []
        do throws(StoreError) {
            // A transaction a crash interrupted is finished first (docs/package-format.md).
            try package.completeTransaction(fileSystem: fs, journal: options.journal, findings: &findings)
            let metadata: DocumentMetadata
            do throws(StoreError) { metadata = try PackageReader.readDocument(package, fileSystem: fs) } catch {
                // The library view shows it needs repair (its manifest alone may look fine).
                if case .corruptFile = error { package.markNeedsRepair("document.json cannot be read: \(error)", fileSystem: fs) }
                throw error
            }
            // A document of an engine this build lacks is refused before anything is tidied.
            try metadata.engine.requireAvailable(package)
            try removeStaleTemporaries(package, fileSystem: fs, findings: &findings)
            try EngineForm.cleanUpInterruptedMigration(package, engine: metadata.engine, fileSystem: fs, findings: &findings)
            do {
                var created = false
                for dir in package.contentFolders(metadata.engine) where try fs.checked.info(dir)?.kind != .directory {
                    try fs.checked.ensureDirectory(dir)  // throws when a file or link is in its place
                    created = true
                }
                // A recreated folder must survive a crash before anything is written into it.
                if created { try fs.checked.syncDirectory(package.path) }
            }
            let engine = try makeEngine(metadata, package: package, fileSystem: fs, journal: options.journal)
            session = DocumentSession(package: package, fileSystem: fs, options: options,
                                      metadata: metadata, engine: engine, lockFD: lock)
        } catch {
            fs.unlock(lock)
            throw error
        }
        // From here the session owns the lock: it is released by `abandon()` or `close()`, once.
        do {
            try await session.openTimeRepair(findings: findings)
        } catch {
            await session.abandon()
            throw error
        }
        // A cancelled task must not be handed a locked session: it is closed again, cleanly.
        if Task.isCancelled {
            do { try await session.close() } catch { await session.abandon() }
            throw .cancelled
        }
        OpenSessions.shared.register(session)
        return session
    }

    /// The package's writer lock. A session of this process released without `close()` saves
    /// in its deinit before it lets go: the lock is waited for while it does (and for 100 ms
    /// after the last reference went, before the deinit marks the release), instead of
    /// refusing the open as `documentInUse`. Held elsewhere (another process): refused.
    static func lockHandedOver(_ package: DocumentPackage, _ fs: any FileSystem) async throws(StoreError) -> FileDescriptor {
        let start = ContinuousClock.now
        let deadline = start + .seconds(60)
        while true {
            do { return try package.lockForWriting(fs) } catch {
                guard case .documentInUse = error else { throw error }
                let releasing = OpenSessions.shared.isReleasing(package.path)
                guard releasing || ContinuousClock.now < start + .milliseconds(100), ContinuousClock.now < deadline else { throw error }
                if Task.isCancelled { throw .cancelled }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    package static func makeEngine(_ metadata: DocumentMetadata, package: DocumentPackage, fileSystem: any FileSystem,
                           journal: JournalOptions = JournalOptions(), readOnly: Bool = false) throws(StoreError) -> any StorageEngine {
        try metadata.engine.makeEngine(package, codec: metadata.sampleCodec, fileSystem: fileSystem, journal: journal, readOnly: readOnly)
    }

    package static func removeStaleTemporaries(_ package: DocumentPackage, fileSystem fs: any FileSystem, findings: inout [Finding]) throws(StoreError) {
        for dir in [package.path, package.pagesPath, package.assetsPath, package.thumbnailsPath] {
            guard try fs.checked.info(dir)?.kind == .directory else { continue }
            let names = try fs.checked.contentsOfDirectory(dir)
            var removed = false
            for name in names where name.hasPrefix(temporaryFilePrefix) {
                try fs.checked.removeIfPresent(dir + "/" + name)
                findings.append(Finding(.repaired, dir + "/" + name, "removed a stale temporary file"))
                removed = true
            }
            if removed { try fs.checked.syncDirectory(dir) }
        }
    }

    /// Reconciles what a crash can leave behind: page metadata that lags its pages, a stale or
    /// corrupt manifest, page files document.json does not list. Then marks the document open.
    func openTimeRepair(findings: [Finding]) throws(StoreError) {
        var report = findings
        let fs = fileSystem
        let markerPath = package.path + "/" + DocumentSession.sessionMarkerName
        let uncleanShutdown = try fs.checked.fileExists(markerPath)
        if uncleanShutdown {
            // The last session did not close: its saved pages are the truth for counts and sizes.
            var changed = false
            for (i, entry) in metadata.pages.enumerated() {
                do {
                    if metadata.pages[i].reconcile(with: try engine.loadPage(entry.id)) { changed = true }
                } catch {
                    report.append(Finding(.error, package.pagePath(entry.id), "\(error)"))
                }
            }
            if changed {
                report.append(Finding(.repaired, package.documentPath, "page metadata brought in line with the pages saved before an unclean shutdown"))
                try writeMetadata()
            }
        }
        // The source of truth wins: a manifest that is missing, corrupt or stale is rewritten.
        let expected = Manifest(metadata)
        let current = PackageReader.readManifest(package, fileSystem: fs)
        if current != expected {
            try fs.checked.writeAtomically(PackageJSON.encode(expected), to: package.manifestPath)
            report.append(Finding(.repaired, package.manifestPath, current == nil ? "manifest was missing or corrupt; rebuilt from document.json" : "manifest disagreed with document.json; rebuilt"))
        }
        let layout = try PackageReader.scanPages(package, fileSystem: fs)
        let listed = Set(metadata.pages.map(\.id))
        unlistedPages = layout.pageFiles.subtracting(listed).sortedByUUIDString()
        for id in unlistedPages {
            report.append(Finding(.warning, package.pagePath(id), "page file is not listed in document.json; kept (lnote repair moves it to recovered/)"))
        }
        if !uncleanShutdown {
            try fs.checked.writeAtomically([UInt8](), to: markerPath)
        }
        if let damage = report.first(where: { $0.severity == .error }) {
            package.markNeedsRepair(damage.message, fileSystem: fs)
        }
        openReport = report
    }

    // MARK: Reading

    /// The document's metadata as it is now (including unsaved edits).
    public var document: DocumentMetadata { metadata }
    /// The document's title, including a rename not yet saved (`rename(to:)`).
    public var title: String { metadata.title }
    /// The ids of the pages in reading order, including pages added, moved or removed since the
    /// last save.
    public func pageIDs() -> [UUID] { metadata.pages.map(\.id) }
    /// Each page's entry (canvas size, times, element count) in reading order, as of the latest
    /// edits.
    public func pageEntries() -> [PageEntry] { metadata.pages }
    /// The engine the document's pages are stored with (`EngineMigration` moves a closed document
    /// to another).
    public var engineKind: EngineKind { metadata.engine }
    /// What the storage engine found while loading and repairing pages (a torn journal tail after
    /// a crash, a damaged journal kept aside).
    package var engineFindings: [Finding] { engine.findings }
    /// Pages with changes not yet durable.
    public var dirtyPageIDs: [UUID] { metadata.pages.map(\.id).filter { loaded[$0]?.dirty == true } }
    /// How many pages are loaded in memory now.
    package var loadedPageCount: Int { loaded.count }

    /// A page's content, loading it (one file read) when it is not in memory.
    public func content(of page: UUID) throws(StoreError) -> PageContent {
        try checkOpen()
        return try load(page).content
    }

    func checkOpen() throws(StoreError) { if isClosed { throw .sessionClosed } }

    func pageIndex(_ page: UUID) throws(StoreError) -> Int {
        guard let i = metadata.pages.firstIndex(where: { $0.id == page }) else { throw .pageNotFound(page) }
        return i
    }

    @discardableResult
    func load(_ page: UUID) throws(StoreError) -> LoadedPage {
        _ = try pageIndex(page)
        useClock += 1
        if var p = loaded[page] {
            p.lastUse = useClock
            loaded[page] = p
            return p
        }
        var content: PageContent, encoded: EncodedStrokes?
        var salvaged = false
        let reported = openReport.count
        do { (content, encoded) = try engine.loadPageForEditing(page) } catch {
            // A damaged page keeps its place with every element whose own bytes check; the damaged
            // bytes are kept in recovered/ first, and the next save writes what was salvaged.
            guard case .corruptPage = error else { throw explainFailure(error) }
            let i = try pageIndex(page)
            guard let s = try engine.salvagePage(page, canvas: metadata.pages[i].canvasSize, keep: true) else { throw explainFailure(error) }
            content = s.content
            encoded = nil
            salvaged = true
            let finding = Finding(s.finding.severity, s.finding.path, "page \(i + 1): " + s.finding.message)
            openReport.append(finding)
            eventHub.send(.findings([finding]))
        }
        // Damage found while loading (what was salvaged and lost) joins the open report.
        for f in engine.findings where (f.severity == .error || f.severity == .repaired) && !openReport.contains(f) {
            openReport.append(f)
            eventHub.send(.findings([f]))
        }
        // And the library view shows the document needs repair until `lnote repair` runs.
        if let damage = openReport[reported...].first(where: { $0.severity == .error }) ?? (salvaged ? openReport.last : nil) {
            package.markNeedsRepair(damage.message, fileSystem: fileSystem)
        }
        var p = LoadedPage(content: content, lastUse: useClock, encoded: encoded)
        if salvaged {
            let i = try pageIndex(page)
            p.dirty = true
            if metadata.pages[i].reconcile(with: content) { metadataDirty = true }
            scheduleAutosave()
        }
        loaded[page] = p
        evictCleanPages(keeping: page)
        return p
    }

    func evictCleanPages(keeping page: UUID) {
        guard loaded.count > options.maxLoadedPages else { return }
        let clean = loaded.filter { !$0.value.dirty && $0.key != page }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (id, _) in clean.prefix(loaded.count - options.maxLoadedPages) {
            loaded[id] = nil
            engine.pageUnloaded(id)
        }
    }
}

/// Something a check found or a repair did: what a session's open found (`openReport`), what
/// `DocumentVerifier` and `DocumentRepair` report, what an import met.
public struct Finding: Sendable, Equatable, CustomStringConvertible {
    /// How much a finding matters.
    public enum Severity: String, Sendable {
        /// The document is damaged there (or, after a crash, stale until its next open repairs it).
        case error
        /// Something is off but nothing is lost (a thumbnail not written, a leftover file).
        case warning
        /// Something was damaged and has been mended (or its bytes kept aside in `recovered/`).
        case repaired
        /// For the record only.
        case info
    }
    /// How much it matters.
    public var severity: Severity
    /// The file or folder it is about (the package's folder for the document as a whole).
    public var path: String
    /// What was found or done, as a sentence fragment for a log or a report.
    public var message: String
    /// A finding of `severity` about `path`.
    public init(_ severity: Severity, _ path: String, _ message: String) {
        self.severity = severity
        self.path = path
        self.message = message
    }
    public var description: String { "\(severity.rawValue): \(path): \(message)" }
}
