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
        let doc = DocumentMetadata(id: id, title: title, created: created, modified: Date.storeNow(), engine: engine, codec: codec)
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
        try checkOpen()
        guard index >= 0 && index <= metadata.pages.count else {
            throw .invalidArgument("page index \(index) is outside 0...\(metadata.pages.count)")
        }
        guard !metadata.pages.contains(where: { $0.id == id }) else { throw .invalidArgument("page \(id) exists already") }
        try engine.createPage(id, content: content)
        let now = Date.storeNow()
        var updated = metadata
        let assets = content.assetIDs.sortedByUUIDString()
        updated.pages.insert(PageEntry(id: id, canvas: content.canvasSize, created: now, modified: now,
                                       elementCount: content.elements.count, assets: assets), at: index)
        updated.modified = now
        try commitMetadata(updated)
        loaded[id] = LoadedPage(content: content, lastUse: useClock)
        evictCleanPages(keeping: id)
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

extension DocumentSession {
    /// Puts a merged page in place, as ordinary changes through `apply(_:to:)` in one step of the
    /// session (so the canvas hears `elementsChanged`, and the page saves through the session).
    ///
    /// `seen` is the page as the round read it (its elements in z-order, as id and fingerprint, and
    /// its canvas), or nil when nobody else can have edited it since (the round opened the session
    /// itself). What was edited here after the read is kept: an element erased since stays erased,
    /// one changed since keeps its new version, one added since stays on top, a canvas resized since
    /// keeps its size; everything else becomes what `merged` says.
    ///
    /// - Returns: the page's `modified` when it now holds exactly `merged` with nothing edited
    ///   since the read, nil when edits made since were kept (the next round reads the page again).
    @discardableResult
    package func mergeSyncedContent(of page: UUID, seen: (elements: [(id: UUID, fingerprint: UInt64)], canvas: QuantizedSize)?,
                                   merged: PageContent, fingerprint: @Sendable (Element) -> UInt64) throws(StoreError) -> Date? {
        try checkWritable()
        _ = try pageIndex(page)
        let current = try load(page).content
        var currentByID: [UUID: Element] = [:]
        for e in current.elements { currentByID[e.id] = e }
        var result = merged.elements
        var canvas = merged.canvasSize
        var editedSince = false
        if let seen {
            var seenPrint: [UUID: UInt64] = [:]
            for (id, print) in seen.elements { seenPrint[id] = print }
            var erasedSince = Set<UUID>()
            for (id, _) in seen.elements where currentByID[id] == nil { erasedSince.insert(id) }
            var changedSince: [UUID: Element] = [:]
            for e in current.elements { if let p = seenPrint[e.id], fingerprint(e) != p { changedSince[e.id] = e } }
            if current.canvasSize != seen.canvas { canvas = current.canvasSize; editedSince = true }
            if !erasedSince.isEmpty || !changedSince.isEmpty || current.elements.map(\.id) != seen.elements.map(\.id) { editedSince = true }
            result = []
            var inResult = Set<UUID>()
            for e in merged.elements where !erasedSince.contains(e.id) {
                result.append(changedSince[e.id] ?? e)
                inResult.insert(e.id)
            }
            // Added here since the read: on top, in their order.
            for e in current.elements where seenPrint[e.id] == nil && !inResult.contains(e.id) {
                result.append(e)
                inResult.insert(e.id)
            }
        }
        var changes: [PageChange] = []
        if canvas != current.canvasSize { changes.append(.resize(canvas)) }
        let resultIDs = Set(result.map(\.id))
        let gone = current.elements.map(\.id).filter { !resultIDs.contains($0) }
        if !gone.isEmpty { changes.append(.delete(gone)) }
        let updated = result.filter { e in currentByID[e.id].map { $0 != e } ?? false }
        if !updated.isEmpty { changes.append(.update(updated)) }
        let added = result.filter { currentByID[$0.id] == nil }
        if !added.isEmpty { changes.append(.append(added)) }
        // The order after those changes, then single moves to the merged order (usually none).
        var order = current.elements.map(\.id).filter { resultIDs.contains($0) } + added.map(\.id)
        let target = result.map(\.id)
        if order != target {
            for k in target.indices where order[k] != target[k] {
                let j = order[k...].firstIndex(of: target[k])!
                order.remove(at: j)
                order.insert(target[k], at: k)
                changes.append(.move([target[k]], to: .index(k)))
            }
        }
        if !changes.isEmpty { try apply(changes, to: page) }
        return editedSince ? nil : metadata.pages[try pageIndex(page)].modified
    }

    /// Removes a page the merge removed, unless it was edited here after the round read it
    /// (`seen` as in `mergeSyncedContent`): an edit wins over a removal, and the next round
    /// publishes it. Returns whether the page was removed.
    package func removeSyncedPage(_ page: UUID, seen: (elements: [(id: UUID, fingerprint: UInt64)], canvas: QuantizedSize)?,
                                 fingerprint: @Sendable (Element) -> UInt64) throws(StoreError) -> Bool {
        try checkWritable()
        _ = try pageIndex(page)
        if let seen {
            let current = try load(page).content
            guard current.canvasSize == seen.canvas, current.elements.count == seen.elements.count else { return false }
            for (e, s) in zip(current.elements, seen.elements) where e.id != s.id || fingerprint(e) != s.fingerprint { return false }
        }
        try removePage(page)
        return true
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
    /// - Throws: `.documentInUse` when a session or process holds it, `.documentNotFound`, the
    ///   read errors of document.json.
    package func lockForSyncRead(_ id: UUID) throws(StoreError) -> LockedDocumentReader? {
        let fs = fileSystem
        let package = package(id)
        let lock = try package.lockForWriting(fs)
        do {
            if try fs.checked.fileExists(package.path + "/" + DocumentSession.sessionMarkerName) {
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
