// Transactions (issue 32, item 4): a transaction, and an undo or redo of a group, is all or none
// against errors and against a crash. While one runs, page-structure changes stay in memory; at its
// end a change that touches more than one file is committed by one atomic write of a transaction
// record (`.transaction`, docs/package-format.md), then written to the package's files, then the
// record is removed. A crash after the commit is rolled forward by the next open.

import Foundation
import LulucatInk

/// What a transaction under way changed of the page structure, kept in memory until it ends.
struct DeferredStructure: Sendable {
    /// The metadata when it began.
    var before: DocumentMetadata
    /// Whether document.json must be written (a page added, removed or moved, the title).
    var metadataChanged = false
    /// Pages added (or put back) during it: written whole at its commit, since no file holds them.
    var wholePages: Set<UUID> = []
}

/// A transaction committed (its record durable) whose writes have not all happened yet.
struct PendingRecord: Sendable {
    var record: TransactionRecord
    /// The content of each page of the record, as the session had it at the commit.
    var contents: [UUID: PageContent]
}

extension DocumentSession {
    /// Runs `body` as one transaction over the document (GRDB's `write`): edits on any pages,
    /// pages added, removed and moved, the title, all or none, against errors and against a crash.
    ///
    /// `body` runs on the session without suspending, so nothing else (an autosave, another
    /// caller, a sync merge) runs in between. When it throws, every change it made is undone,
    /// newest first, and the error is rethrown: nothing of it was written. When it returns, a
    /// transaction that changed more than one page, or pages and the page list, is durable: it is
    /// committed by one atomic write of a transaction record in the package before its pages and
    /// document.json are written, so a crash at any moment leaves all of it (the next open
    /// finishes the writes) or none of it. A transaction of one page's edits is saved as any edit
    /// is (by autosave, `save()` or `flush()`), whole since a page is always written whole. In the
    /// undo history it is one group named `name`, and undoing or redoing that group is all or
    /// none the same way.
    ///
    /// ```swift
    /// try await session.transaction("Cut and paste") { s in
    ///     try s.delete(selection.map(\.id), from: source)
    ///     try s.append(selection, to: target)
    /// }
    /// ```
    /// - Throws: what `body` throws, or the error of writing the record (`StoreError.file`: the
    ///   disk is full, say); in both cases nothing of the transaction stays, in memory or on disk.
    ///   A write after the commit that fails is not an error of the transaction (it has happened):
    ///   it is retried as a failed save is (`lastSaveError`, `SessionEvent.saveFailed`), and the
    ///   next open finishes it if the app does not live that long.
    public func transaction<T: Sendable>(_ name: String = "", _ body: @Sendable (isolated DocumentSession) throws -> T) throws -> T {
        try checkWritable()
        guard transactionLog == nil else { return try body(self) }  // nested: part of the outer one
        transactionLog = []
        beginUndoGroup(name)
        let outermost = beginDeferring()
        do {
            let result = try body(self)
            if outermost { try commitDeferred() }
            transactionLog = nil
            endUndoGroup()
            return result
        } catch {
            let steps = transactionLog ?? []
            transactionLog = nil
            // The group gathered so far is dropped with the changes it undoes.
            if undoEnabled, undoHistory.depth > 0 {
                undoHistory.depth = 0
                undoHistory.open = nil
            }
            for step in steps { _ = try? perform(step) }
            if outermost { settleRolledBack() }
            throw error
        }
    }

    /// Starts keeping page-structure changes in memory. Returns false when a transaction already
    /// does (the caller is part of it and leaves the commit to it).
    func beginDeferring() -> Bool {
        guard deferredStructure == nil else { return false }
        deferredStructure = DeferredStructure(before: metadata)
        return true
    }

    /// Ends the transaction: nothing to write, one file's write (atomic by itself), or a record
    /// then its writes. Throws only while nothing of it is on disk; the deferral then stays on
    /// for the rollback.
    func commitDeferred() throws(StoreError) {
        guard let d = deferredStructure else { return }
        // An earlier transaction's writes first: this one's record replaces its record.
        try finishPendingRecord()
        let order = metadata.pages.map(\.id)
        let listed = Set(order)
        let removed = d.before.pages.map(\.id).filter { !listed.contains($0) }
        let dirty = order.filter { loaded[$0]?.dirty == true }
        let whole = d.wholePages.intersection(listed)
        if whole.isEmpty && removed.isEmpty && dirty.count + (d.metadataChanged ? 1 : 0) <= 1 {
            // One page's edits (saved as any edit is) or document.json alone.
            if d.metadataChanged {
                try writeDocumentFiles(metadata, old: d.before)
            }
            deferredStructure = nil
            return
        }
        var pages: [(id: UUID, file: [UInt8])] = []
        var contents: [UUID: PageContent] = [:]
        for id in dirty {
            let content = loaded[id]!.content
            do { pages.append((id, try PageFile.encode(content, codec: metadata.sampleCodec))) } catch {
                throw .invalidArgument("page \(number(of: id).map { "\($0)" } ?? id.uuidString): \(error)")
            }
            contents[id] = content
        }
        let record = TransactionRecord(document: documentWriter.encode(metadata), pages: pages, removed: removed)
        try checkPackageIsThere()
        // The commit point: from the rename of the record on, the transaction has happened.
        let fs = fileSystem
        try fs.checked.writeRenamedUnsynced(record.encoded(), to: package.transactionPath)
        var unsynced: StoreError?
        do { try fs.checked.syncDirectory(package.path) } catch {
            // The rename may or may not outlive a crash: the record is taken back if it can be
            // (the transaction then fails, none of it anywhere); if not, it stays committed, and
            // the writes below sync the folder again.
            let removed = (try? fs.checked.removeIfPresent(package.transactionPath)) != nil
                && (try? fs.checked.syncDirectory(package.path)) != nil
            if removed { throw error }
            unsynced = error
        }
        deferredStructure = nil
        pendingRecord = PendingRecord(record: record, contents: contents)
        for id in dirty { wholeWrites.remove(id) }
        do throws(StoreError) {
            if let unsynced { throw unsynced }
            try finishPendingRecord(old: d.before)
        } catch {
            // Committed: what is left is written by the next save, close or open.
            let explained = explainFailure(error)
            lastSaveError = explained
            saveFailed(explained)
        }
        if !removed.isEmpty || order.first != d.before.pages.first?.id { queueCoverThumbnailIfMissing() }
    }

    /// After a transaction's rollback: memory holds the structure it began with again and the disk
    /// never stopped holding it. Pages that were removed and put back are written whole by the
    /// next save (their recorded changes went with them).
    func settleRolledBack() {
        guard let d = deferredStructure else { return }
        deferredStructure = nil
        let listed = Set(metadata.pages.map(\.id))
        for id in d.wholePages where listed.contains(id) { wholeWrites.insert(id) }
        if d.metadataChanged && metadata != d.before { metadataDirty = true }
    }

    /// Writes a committed record's pages whole, document.json and the manifest, removes its
    /// removed pages, then the record. The session's pages that still hold what the record wrote
    /// become clean; one changed since is written whole by its next save.
    func finishPendingRecord(old: DocumentMetadata? = nil) throws(StoreError) {
        guard let pending = pendingRecord else { return }
        let fs = fileSystem
        try pending.record.apply(to: package, engine: engine, manifest: PackageJSON.encode(Manifest(metadata)),
                                   contents: pending.contents, fileSystem: fs)
        pendingRecord = nil
        metadataDirty = documentWriter.encode(metadata) != pending.record.document
        for (id, content) in pending.contents {
            guard let p = loaded[id] else { continue }
            if p.content == content {
                markSaved(id, p, encoded: nil)
            } else {
                wholeWrites.insert(id)
            }
        }
        let title = metadata.title
        sendLibraryEvent(old.map { $0.title != title } == true ? .renamed(package.id, title: title) : .changed(package.id))
    }
}

extension TransactionRecord {
    /// Writes what the record holds into the package, then removes the record: the pages whole,
    /// document.json, the manifest (`manifest`: its bytes), the removed pages' files and
    /// thumbnails. The same writes again after a crash halfway.
    package func apply(to package: DocumentPackage, engine: any StorageEngine, manifest: [UInt8],
                       contents: [UUID: PageContent], fileSystem fs: any FileSystem) throws(StoreError) {
        for p in pages {
            // Every caller holds the pages decoded (the session's, or TransactionOverlay.parse's).
            guard let content = contents[p.id] else {
                throw .corruptFile(path: package.transactionPath, reason: "page \(p.id) in it was not read")
            }
            try engine.replacePage(p.id, content: content)
        }
        try fs.checked.writeAtomically(document, to: package.documentPath)
        try fs.checked.writeAtomically(manifest, to: package.manifestPath)
        for id in removed {
            try engine.removePage(id)
            try? fs.removeIfPresent(package.thumbnailPath(id))
        }
        try fs.checked.removeIfPresent(package.transactionPath)
        try fs.checked.syncDirectory(package.path)
    }
}
