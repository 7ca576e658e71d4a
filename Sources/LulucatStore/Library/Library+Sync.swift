// What LulucatSync needs of the store and cannot do through the app's API: make a document and
// its pages under ids another device chose, put a merged page in place, read a closed document
// under its lock, and hash bytes. `package`, not `public`: no app calls these.

import Foundation
import LulucatInk

/// SHA-256 for names that must agree across devices (sync's content-addressed blobs).
package enum ContentDigest {
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(bytes) }
}

extension Library {
    /// Creates an empty document (no pages) under an id another device made. It appears whole or
    /// not at all, like `createDocument`.
    /// - Throws: `StoreError.invalidArgument` when the document already exists or the title is too long.
    @discardableResult
    package func createSyncedDocument(id: UUID, title: String, created: Date, engine: EngineKind,
                                     codec: SampleCodecID) throws(StoreError) -> DocumentPackage {
        guard title.utf8.count <= PackageJSON.maxTitleLength else {
            throw .invalidArgument("a title may be at most \(PackageJSON.maxTitleLength) bytes")
        }
        try prepare()
        let fs = fileSystem
        let target = package(id)
        if try fs.checked.info(target.path) != nil {
            throw .invalidArgument("document \(id) exists already")
        }
        // Another device's creation time (shown only) is held within the times a package can hold.
        let created = min(max(created, Date.storableRange.lowerBound), Date.storableRange.upperBound)
        let doc = DocumentMetadata(id: id, title: title, created: created, modified: try Date.storeNow(), engine: engine, codec: codec)
        try buildPackage(id: id, document: doc) { (package) throws(StoreError) in
            try engine.createPages([], in: package, codec: codec, fileSystem: fs)
        }
        return target
    }
}

extension DocumentSession {
    /// Inserts a page under an id another device made, with its content; the content is durable
    /// before document.json lists it.
    package func insertSyncedPage(id: UUID, content: PageContent, at index: Int) throws(StoreError) {
        try insertSyncedPages([(id, content, index)])
    }

    /// Inserts pages another device made, as `insertSyncedPage` one after the other would (each
    /// index counted after the pages before it were inserted), with one write of document.json:
    /// every page's content is durable before document.json lists them. All are checked before
    /// anything is written. A new document's pages arriving from sync cost a page file each
    /// and one document.json a batch, not a document.json each (which grew with every page).
    package func insertSyncedPages(_ pages: [(id: UUID, content: PageContent, index: Int)]) throws(StoreError) {
        try checkOpen()
        guard !pages.isEmpty else { return }
        let now = try Date.storeNow()
        var updated = metadata
        var ids = Set(updated.pages.map(\.id))
        for p in pages {
            guard p.index >= 0 && p.index <= updated.pages.count else {
                throw .invalidArgument("page index \(p.index) is outside 0...\(updated.pages.count)")
            }
            guard ids.insert(p.id).inserted else { throw .invalidArgument("page \(p.id) exists already") }
            let assets = p.content.assetIDs.sortedByUUIDString()
            updated.pages.insert(PageEntry(id: p.id, canvas: p.content.canvasSize, created: now, modified: now,
                                           elementCount: p.content.elements.count, assets: assets), at: p.index)
        }
        if deferredStructure == nil { for p in pages { try engine.createPage(p.id, content: p.content) } }
        updated.modified = now
        try commitMetadata(updated)
        for p in pages {
            loaded[p.id] = LoadedPage(content: p.content, lastUse: useClock)
            deferWholePage(p.id)
            evictCleanPages(keeping: p.id)
            // Observers heard of an empty page (`documentEdited`): its elements follow.
            if !p.content.elements.isEmpty { eventHub.send(.elementsEdited(ElementChanges(page: p.id, edits: [.append(p.content.elements)]))) }
        }
    }

    /// Makes a page hold `content` (a merged page), as ordinary edits every engine saves: the new
    /// elements appended when the old ones are a prefix of the new, else all replaced.
    package func replaceSyncedContent(of page: UUID, with content: PageContent) throws(StoreError) {
        let old = try self.content(of: page)
        if old == content { return }
        if old.canvasSize != content.canvasSize { try edit(page, .resize(content.canvasSize)) }
        if old.elements.count <= content.elements.count && Array(content.elements.prefix(old.elements.count)) == old.elements {
            let added = Array(content.elements.dropFirst(old.elements.count))
            if !added.isEmpty { try edit(page, .append(added)) }
            return
        }
        if !old.elements.isEmpty { try edit(page, .delete(old.elements.map(\.id))) }
        if !content.elements.isEmpty { try edit(page, .append(content.elements)) }
    }

    /// A page's content and, when the engine keeps them, its coded strokes: a sync copies the
    /// unchanged strokes into its blob instead of coding the page again.
    package func contentForSync(of page: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        try checkOpen()
        let p = try load(page)
        return (p.content, p.encoded)
    }

    /// Writes an asset another device made, under its id, before any page shows it.
    package func importSyncedAsset(_ data: Data, id: UUID, fileExtension ext: String) throws(StoreError) {
        try checkOpen()
        guard DocumentPackage.assetExtensions.contains(ext) else {
            throw .invalidArgument("image type '\(ext)' is not one of \(DocumentPackage.assetExtensions.sorted())")
        }
        try writeAsset(data, id: id, ext: ext)
    }
}

/// What `DocumentSession.updatePage(_:_:)`'s closure decides for a page.
package enum PageUpdate: Sendable {
    /// Leave the page as it is.
    case keep
    /// Apply these changes, as one batch.
    case change([PageChange])
    /// Remove the page.
    case remove
}

extension DocumentSession {
    /// Sync's one primitive for merging into a session: `decide` runs on the session's actor with
    /// the page's current content, and what it returns is applied there and then (changes as one
    /// step of the session, through `apply(_:to:)`, so the canvas hears `elementsChanged` and the
    /// page saves through the session), so no edit of the app can slip between the read and the
    /// write. The merge rule itself is sync's (LulucatSync's `PageMerge`).
    /// - Returns: what `decide` returned beside the update, and the page's `modified` after it
    ///   (nil when the page was removed).
    package func updatePage<R: Sendable>(_ page: UUID, _ decide: @Sendable (PageContent) -> (update: PageUpdate, result: R))
        throws(StoreError) -> (result: R, modified: Date?) {
        try checkWritable()
        _ = try pageIndex(page)
        let current = try load(page).content
        let (update, result) = decide(current)
        switch update {
        case .keep: break
        case .change(let changes): if !changes.isEmpty { try apply(changes, to: page) }
        case .remove:
            try removePage(page)
            return (result, nil)
        }
        return (result, metadata.pages[try pageIndex(page)].modified)
    }
}

/// A closed document read under its writer lock without a session (sync's round over a document
/// that only changed here, which writes nothing to it): no open marker written or removed, no
/// repair, no engine tidying. Holding the lock keeps every writer out until `release()`.
/// Opened only for a document that was shut down cleanly (no open marker): one that needs the
/// open-time repair is read through a `DocumentSession`.
package final class LockedDocumentReader: @unchecked Sendable {
    package let package: DocumentPackage
    package let document: DocumentMetadata
    let fileSystem: any FileSystem
    let engine: any StorageEngine
    var lock: FileDescriptor?
    let mutex = NSLock()

    init(package: DocumentPackage, document: DocumentMetadata, fileSystem: any FileSystem, engine: any StorageEngine, lock: FileDescriptor) {
        self.package = package
        self.document = document
        self.fileSystem = fileSystem
        self.engine = engine
        self.lock = lock
    }

    deinit { release() }

    /// A page's content and the engine's coded strokes, as a session's `contentForSync` gives them.
    /// - Throws: the page's read error; `.corruptFile` when loading it found damage (a session
    ///   must salvage or repair it).
    package func contentForSync(of page: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        mutex.lock()
        defer { mutex.unlock() }
        guard lock != nil else { throw .sessionClosed }
        guard document.pages.contains(where: { $0.id == page }) else { throw .pageNotFound(page) }
        let r = try engine.loadPageForEditing(page)
        if let f = engine.findings.first(where: { $0.severity == .error || $0.severity == .repaired }) {
            throw .corruptFile(path: f.path, reason: f.message)
        }
        return r
    }

    /// `contentForSync`, with the strokes `hollowing` picks possibly hollow (no samples decoded:
    /// `PageFile.decodeKeepingStrokes(_:hollowing:)`); returns their ids.
    package func contentForSync(of page: UUID, hollowing: (UUID, UInt64, SampleCodecID) -> Bool) throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        mutex.lock()
        defer { mutex.unlock() }
        guard lock != nil else { throw .sessionClosed }
        guard document.pages.contains(where: { $0.id == page }) else { throw .pageNotFound(page) }
        let r = try engine.loadPageForSync(page, hollowing: hollowing)
        if let f = engine.findings.first(where: { $0.severity == .error || $0.severity == .repaired }) {
            throw .corruptFile(path: f.path, reason: f.message)
        }
        return r
    }

    /// Lets go of the engine and the lock. Calling it again does nothing.
    package func release() {
        mutex.lock()
        defer { mutex.unlock() }
        guard let fd = lock else { return }
        engine.closeWithoutTidying()
        fileSystem.unlock(fd)
        lock = nil
    }
}

extension Library {
    /// Takes a closed document's writer lock and reads it without opening a session, or returns
    /// nil when it was not shut down cleanly (its open marker is there: a session repairs it).
    /// With `inTrash`, the document's copy in the trash (sync records what was erased on it
    /// before it was deleted here).
    /// - Throws: `.documentInUse` when a session or process holds it, `.documentNotFound`, the
    ///   read errors of document.json.
    package func lockForSyncRead(_ id: UUID, inTrash: Bool = false) throws(StoreError) -> LockedDocumentReader? {
        let fs = fileSystem
        let package = inTrash ? DocumentPackage(id: id, libraryRoot: trashPath) : package(id)
        let lock = try package.lockForWriting(fs)
        do {
            let unclean = try fs.checked.fileExists(package.path + "/" + DocumentSession.sessionMarkerName)
            let inTransaction = try fs.checked.fileExists(package.transactionPath)
            if unclean || inTransaction {
                fs.unlock(lock)
                return nil
            }
            let metadata = try PackageReader.readDocument(package, fileSystem: fs)
            let engine = try DocumentSession.makeEngine(metadata, package: package, fileSystem: fs)
            return LockedDocumentReader(package: package, document: metadata, fileSystem: fs, engine: engine, lock: lock)
        } catch {
            fs.unlock(lock)
            throw error
        }
    }
}
