// A document opened for reading only (previews, share extensions, Quick Look): no lock, no open
// marker, no repair, nothing written, so it works on a read-only volume and while another session
// or process has the document open for writing.

import Foundation
import LulucatInk

/// A document read without taking it: it has no editing calls at all, takes no lock and writes
/// nothing (not the open marker, not a repair, not a SQLite checkpoint). Each `content(of:)` reads
/// the page as it is saved now, so while a writer is at work it shows the writer's last save.
///
/// ```swift
/// let preview = try await library.openReadOnly(documentID)
/// let first = try await preview.content(of: preview.pageIDs()[0])
/// await preview.close()
/// ```
public actor ReadOnlySession {
    /// The document's package (its id and folder); readable from any thread without `await`.
    public nonisolated let package: DocumentPackage
    let fileSystem: any FileSystem
    var metadata: DocumentMetadata
    /// The pages of a transaction record found at open or reload (TransactionOverlay).
    var overlay: [UUID: PageContent] = [:]
    /// The engine, reachable from `deinit` (which may not touch a non-Sendable property).
    let owned: EngineOwnership
    var isClosed = false
    var engine: (any StorageEngine)? { isClosed ? nil : owned.engine }

    init(package: DocumentPackage, fileSystem: any FileSystem, metadata: DocumentMetadata, engine: any StorageEngine,
         overlay: [UUID: PageContent] = [:]) {
        self.overlay = overlay
        self.package = package
        self.fileSystem = fileSystem
        self.metadata = metadata
        self.owned = EngineOwnership(engine)
    }

    deinit { if !isClosed { owned.engine.closeWithoutTidying() } }

    /// Opens a document for reading.
    ///
    /// - Throws: `StoreError.documentNotFound`, `.corruptFile` when document.json cannot be read,
    ///   `.unsupportedVersion` for a newer format, `.cancelled` in a cancelled task. Never
    ///   `.documentInUse`.
    package static func open(_ package: DocumentPackage, fileSystem: any FileSystem = PosixFileSystem()) async throws(StoreError) -> ReadOnlySession {
        if Task.isCancelled { throw .cancelled }
        let fs = fileSystem
        guard let info = try fs.checked.info(package.path) else {
            throw .documentNotFound(package.path)
        }
        guard info.kind == .directory else { throw .unexpectedFileKind(path: package.path, found: info.kind) }
        // A committed transaction whose writes may not all have happened is read from its record.
        let overlay = TransactionOverlay.read(package, fileSystem: fs)
        let metadata: DocumentMetadata
        if let overlay { metadata = overlay.document } else { metadata = try PackageReader.readDocument(package, fileSystem: fs) }
        let engine = try DocumentSession.makeEngine(metadata, package: package, fileSystem: fs, readOnly: true)
        return ReadOnlySession(package: package, fileSystem: fs, metadata: metadata, engine: engine, overlay: overlay?.pages ?? [:])
    }

    /// The document's title as read at open (or at the last `reload()`).
    public var title: String { metadata.title }
    /// The document's metadata (title, engine, pages in order) as read at open or at the last
    /// `reload()`: a writer's later changes to the page list appear after a `reload()`.
    public var document: DocumentMetadata { metadata }
    /// The engine the document's pages are stored with.
    public var engineKind: EngineKind { metadata.engine }
    /// The ids of the pages in reading order, as read at open or at the last `reload()`.
    public func pageIDs() -> [UUID] { metadata.pages.map(\.id) }
    /// Each page's entry (size, times, element count) in reading order, as read at open or at the
    /// last `reload()`.
    public func pageEntries() -> [PageEntry] { metadata.pages }
    /// What loading pages found (a torn journal tail a writer is still appending, a damaged row).
    public var findings: [Finding] { engine?.findings ?? [] }

    /// A page's content as saved now.
    /// - Throws: `.sessionClosed` after `close()`; `.pageNotFound`, or the page's read error.
    public func content(of page: UUID) throws(StoreError) -> PageContent {
        guard let engine else { throw .sessionClosed }
        guard metadata.pages.contains(where: { $0.id == page }) else { throw .pageNotFound(page) }
        if let content = overlay[page] { return content }
        do { return try engine.loadPage(page) } catch { throw error.numberingPages(metadata.pages.map(\.id)) }
    }

    /// Reads document.json again (a writer added, removed or renamed pages since).
    public func reload() throws(StoreError) {
        guard engine != nil else { throw .sessionClosed }
        let found = TransactionOverlay.read(package, fileSystem: fileSystem)
        if let found { metadata = found.document } else { metadata = try PackageReader.readDocument(package, fileSystem: fileSystem) }
        overlay = found?.pages ?? [:]
    }

    /// Lets go of the files (a SQLite connection closed without a checkpoint). Calling it again does nothing.
    public func close() {
        engine?.closeWithoutTidying()
        isClosed = true
    }
}

extension Library {
    /// Opens a document for reading only: no lock, nothing written, so it works on a read-only
    /// volume and while a session (of this process or another) writes it. See `ReadOnlySession`.
    @concurrent
    public func openReadOnly(_ id: UUID) async throws(StoreError) -> ReadOnlySession {
        try await ReadOnlySession.open(package(id), fileSystem: fileSystem)
    }
}
