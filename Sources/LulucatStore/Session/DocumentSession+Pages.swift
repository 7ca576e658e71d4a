// Page structure: add, insert, remove and reorder pages; rename the document. These change
// document.json and are made durable before they return.

import Foundation
import LulucatInk

extension DocumentSession {
    /// Adds an empty page at `index` (the end by default); its file is durable before
    /// document.json lists it.
    @discardableResult
    public func addPage(canvas: QuantizedSize = .letter, at index: Int? = nil) throws(StoreError) -> UUID {
        try checkWritable()
        let at = index ?? metadata.pages.count
        guard at >= 0 && at <= metadata.pages.count else {
            throw .invalidArgument("page index \(at) is outside 0...\(metadata.pages.count)")
        }
        guard canvas.width >= 0, canvas.height >= 0 else { throw .invalidArgument("negative canvas size") }
        let id = UUID()
        let content = PageContent(canvasSize: canvas)
        let now = try Date.storeNow()
        // In a transaction the page is written at its commit, with the page list.
        if deferredStructure == nil { try engine.createPage(id, content: content) }
        var updated = metadata
        updated.pages.insert(PageEntry(id: id, canvas: canvas, created: now, modified: now, elementCount: 0), at: at)
        updated.modified = now
        try commitMetadata(updated)
        loaded[id] = LoadedPage(content: content, lastUse: useClock)
        deferWholePage(id)
        evictCleanPages(keeping: id)
        if at == 0 { queueCoverThumbnailIfMissing() }
        recordUndo(.removePage(id), name: "Add Page")
        return id
    }

    /// Removes a page: document.json stops listing it first, then its content is removed.
    public func removePage(_ page: UUID) throws(StoreError) {
        let i = try pageIndex(page)
        let content = recordingInverses ? try self.content(of: page) : nil
        try removePageUnrecorded(page)
        if let content { recordUndo(.insertPage(page, content: content, at: i), name: "Remove Page") }
    }

    /// `removePage` without a record in the undo history (sync's merges, the history's replays).
    package func removePageUnrecorded(_ page: UUID) throws(StoreError) {
        try checkWritable()
        let i = try pageIndex(page)
        var updated = metadata
        updated.pages.remove(at: i)
        updated.modified = try Date.storeNow()
        try commitMetadata(updated)
        loaded[page] = nil
        wholeWrites.remove(page)
        // In a transaction the file goes at its commit, after the page list.
        if deferredStructure != nil {
            deferredStructure!.wholePages.remove(page)
            return
        }
        // document.json no longer lists the page: the removal has happened. A content file that
        // cannot be removed now is an unlisted page, kept and reported by the next open.
        do { try engine.removePage(page) } catch { lastSaveError = error }
        let fs = fileSystem
        try? fs.removeIfPresent(package.thumbnailPath(page))
        if i == 0 { queueCoverThumbnailIfMissing() }
    }

    /// Moves a page to `index` in the page order.
    public func movePage(_ page: UUID, to index: Int) throws(StoreError) {
        let from = try pageIndex(page)
        try movePageUnrecorded(page, to: index)
        if from != index { recordUndo(.movePage(page, to: from), name: "Move Page") }
    }

    /// `movePage` without a record in the undo history (sync's merges, the history's replays).
    package func movePageUnrecorded(_ page: UUID, to index: Int) throws(StoreError) {
        try checkWritable()
        let i = try pageIndex(page)
        guard index >= 0 && index < metadata.pages.count else {
            throw .invalidArgument("page index \(index) is outside 0..<\(metadata.pages.count)")
        }
        var updated = metadata
        let entry = updated.pages.remove(at: i)
        updated.pages.insert(entry, at: index)
        updated.modified = try Date.storeNow()
        try commitMetadata(updated)
        if i == 0 || index == 0 { queueCoverThumbnailIfMissing() }
    }

    /// A page added during a transaction: dirty, and written whole at its commit (no file holds it).
    func deferWholePage(_ id: UUID) {
        guard deferredStructure != nil else { return }
        loaded[id]?.dirty = true
        deferredStructure!.wholePages.insert(id)
    }

    /// The library grid shows the first page's thumbnail (the manifest's cover). A page gets one
    /// when a save makes it durable, so a page added empty, or one never drawn on, that becomes
    /// the first page would leave the cover path naming a missing file: its thumbnail is queued
    /// here instead. Called when a change may have made another page first (one `stat` when its
    /// thumbnail is there; nothing without thumbnails).
    func queueCoverThumbnailIfMissing() {
        guard let thumbnails = thumbnailWriter, let cover = metadata.pages.first else { return }
        let fs = fileSystem
        if (try? fs.info(package.thumbnailPath(cover.id))) != nil { return }
        // A cover with unsaved changes gets its thumbnail when they are saved.
        guard loaded[cover.id]?.dirty != true, let page = try? load(cover.id) else { return }
        thumbnails.enqueue(PageSavedEvent(package: package, pageID: cover.id, pageIndex: 0,
                                          content: page.content, sequence: saveSequence))
    }

    /// Renames the document.
    public func rename(to title: String) throws(StoreError) {
        let old = metadata.title
        try renameUnrecorded(to: title)
        if old != title { recordUndo(.rename(old), name: "Rename") }
    }

    func renameUnrecorded(to title: String) throws(StoreError) {
        try checkWritable()
        guard title.utf8.count <= PackageJSON.maxTitleLength else {
            throw .invalidArgument("a title may be at most \(PackageJSON.maxTitleLength) bytes")
        }
        var updated = metadata
        updated.title = title
        updated.modified = try Date.storeNow()
        try commitMetadata(updated)
    }

    /// Makes `updated` the document's metadata durably; on failure memory keeps the old one.
    /// document.json is the commit point: once it is written the change has happened, and a
    /// manifest that cannot follow now is rewritten by the next flush, close or open.
    func commitMetadata(_ updated: DocumentMetadata) throws(StoreError) {
        if deferredStructure != nil {
            // A transaction under way: written at its commit (DocumentSession+Transactions.swift).
            let old = metadata
            metadata = updated
            metadataDirty = true
            deferredStructure!.metadataChanged = true
            eventHub.send(.documentEdited(DocumentChanges(from: old, to: updated)))
            return
        }
        try finishPendingRecord()
        let old = metadata
        try writeDocumentFiles(updated, old: old) {
            metadata = updated
            eventHub.send(.documentEdited(DocumentChanges(from: old, to: updated)))
        }
    }

    /// Writes `updated` as document.json (the commit point; `committed` runs right after), then
    /// the manifest (one that cannot follow now is rewritten by the next flush, close or open),
    /// then tells the library.
    func writeDocumentFiles(_ updated: DocumentMetadata, old: DocumentMetadata, committed: () -> Void = {}) throws(StoreError) {
        let fs = fileSystem
        try fs.checked.writeAtomically(documentWriter.encode(updated), to: package.documentPath)
        committed()
        do {
            try fs.checked.writeAtomically(PackageJSON.encode(Manifest(updated)), to: package.manifestPath)
            metadataDirty = false
        } catch {
            metadataDirty = true
            lastSaveError = error
        }
        // After the manifest, so the entry the event carries is the one a listing reads now.
        let (id, title) = (package.id, updated.title)
        sendLibraryEvent(old.title != title ? .renamed(id, title: title) : .changed(id))
    }
}
