// Autosave, flush and close: only dirty pages are written; document.json and the manifest follow
// at flush, close and page-structure changes.

import Foundation
import LulucatInk

extension DocumentSession {
    /// Schedules a save `autosaveDelay` after the last change (each change pushes it back).
    func scheduleAutosave(after delay: Duration? = nil) {
        guard let delay = delay ?? options.autosaveDelay else { return }
        autosaveGeneration &+= 1
        let generation = autosaveGeneration
        autosaveTask?.cancel()
        autosaveTask = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.autosave(generation: generation, delay: delay)
        }
    }

    func autosave(generation: UInt64, delay: Duration) {
        guard generation == autosaveGeneration, !isClosed else { return }
        autosaveTask = nil
        do {
            try saveDirtyPages()
            scheduleIdle(after: delay)
        } catch {
            // The session stays usable; the pages stay dirty and the save is tried again later.
            saveFailed(error)
        }
    }

    /// Writes every dirty page now, what autosave does: the pages only, not document.json.
    /// Pages that fail stay dirty; the first error is thrown.
    public func save() throws(StoreError) {
        try checkOpen()
        applySubmitted()
        do { try saveDirtyPages() } catch { saveFailed(error); throw error }
    }

    func saveDirtyPages() throws(StoreError) {
        // A transaction under way saves at its commit.
        guard deferredStructure == nil else { return }
        try checkPackageIsThere()
        do { try finishPendingRecord() } catch {
            let explained = explainFailure(error)
            lastSaveError = explained
            throw explained
        }
        try saveWholePages()
        if engine.savesPagesTogether { return try saveDirtyPagesTogether() }
        var firstError: StoreError?
        // The dirty pages, in the document's order, are among the loaded ones (a few): found
        // there, not by looking every page of a long notebook up.
        let dirty = loaded.compactMap { id, p -> (index: Int, id: UUID)? in
            guard p.dirty, let i = metadata.pages.firstIndex(where: { $0.id == id }) else { return nil }
            return (i, id)
        }.sorted { $0.index < $1.index }
        for entry in dirty {
            guard var p = loaded[entry.id], p.dirty else { continue }
            // The page's coded strokes are handed over, no copy of them left here: a save that
            // only appended extends the page's file in place instead of copying it.
            var reusing = p.encoded.take()
            loaded[entry.id]?.encoded = nil
            do {
                let start = DispatchTime.now().uptimeNanoseconds
                let encoded = try engine.savePage(entry.id, content: p.content, changes: p.changes, takingOver: &reusing)
                saveDurations.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                markSaved(entry.id, p, encoded: encoded)
            } catch {
                loaded[entry.id]?.encoded = reusing
                if firstError == nil { firstError = error }
            }
        }
        if let e = firstError {
            let explained = explainFailure(e)
            lastSaveError = explained
            throw explained
        }
        lastSaveError = nil
        retryDelay = nil
    }

    /// The pages whose next save must write them whole (`wholeWrites`), before the others.
    func saveWholePages() throws(StoreError) {
        for id in wholeWrites.sortedByUUIDString() {
            guard let p = loaded[id], p.dirty else { wholeWrites.remove(id); continue }
            do { try engine.replacePage(id, content: p.content) } catch {
                let explained = explainFailure(error)
                lastSaveError = explained
                throw explained
            }
            wholeWrites.remove(id)
            markSaved(id, p, encoded: nil)
        }
    }

    /// The page is durable as `p` was: clean in memory, its thumbnail queued.
    func markSaved(_ id: UUID, _ p: LoadedPage, encoded: EncodedStrokes?) {
        var saved = p
        saved.encoded = encoded
        saved.changes = []
        saved.dirty = false
        loaded[id] = saved
        saveSequence += 1
        eventHub.send(.pageSaved(page: id, sequence: saveSequence))
        if let thumbnails = thumbnailWriter, let index = metadata.pages.firstIndex(where: { $0.id == id }) {
            thumbnails.enqueue(PageSavedEvent(package: package, pageID: id, pageIndex: index,
                                              content: p.content, sequence: saveSequence))
        }
    }

    /// Saves every dirty page now, then document.json and the manifest (the app is going to the
    /// background). Returns only when everything is durable.
    public func flush() throws(StoreError) {
        try checkOpen()
        applySubmitted()
        autosaveTask?.cancel()
        autosaveTask = nil
        do {
            try saveDirtyPages()
            if metadataDirty { try writeMetadata() }
        } catch {
            // What could not be saved stays dirty, and autosave keeps trying with backoff.
            saveFailed(error)
            throw error
        }
    }

    /// Saves every dirty page, then merges each page's journal into its snapshot (journal
    /// documents; a snapshot document has nothing to merge).
    /// - Returns: the pages whose files were rewritten.
    @discardableResult
    package func compact() throws(StoreError) -> [UUID] {
        try checkWritable()
        try flush()
        var compacted: [UUID] = []
        for entry in metadata.pages where try engine.compact(entry.id) { compacted.append(entry.id) }
        return compacted
    }

    /// Writes document.json, then the manifest (the cache follows the truth).
    func writeMetadata() throws(StoreError) {
        guard deferredStructure == nil else { return }
        try finishPendingRecord()
        let fs = fileSystem
        let doc = documentWriter.encode(metadata)
        let manifest = PackageJSON.encode(Manifest(metadata))
        try fs.checked.writeAtomically(doc, to: package.documentPath)
        try fs.checked.writeAtomically(manifest, to: package.manifestPath)
        metadataDirty = false
        sendLibraryEvent(.changed(package.id))
    }

    /// Removes asset files no page refers to (what a crash or a deleted image leaves behind).
    func removeOrphanAssets() throws(StoreError) {
        // Pages kept outside the list (unlisted, recovered) keep their assets until someone decides.
        let referenced = Set(metadata.pages.flatMap(\.assets))
            .union(PackageReader.assetsOfKeptPages(package, unlisted: unlistedPages, engine: engine, fileSystem: fileSystem))
        let (assets, _) = try PackageReader.scanAssets(package, fileSystem: fileSystem)
        let orphans = assets.filter { !referenced.contains($0.key) }
        guard !orphans.isEmpty else { return }
        let fs = fileSystem
        for (id, ext) in orphans { try fs.checked.removeIfPresent(package.assetPath(id, ext: ext)) }
        try fs.checked.syncDirectory(package.assetsPath)
        // Their checksums go too (a checksum of a missing asset is harmless, so this may fail).
        if var sums = metadata.assetChecksums, orphans.keys.contains(where: { sums[$0.uuidString] != nil }) {
            for id in orphans.keys { sums[id.uuidString] = nil }
            metadata.assetChecksums = sums.isEmpty ? nil : sums
            try? writeMetadata()
        }
    }

    /// Waits until the thumbnails of the pages saved so far are written (they never hold up a save).
    package func waitForThumbnails() async {
        await thumbnailWriter?.drain()
    }

    /// Releases the lock without saving (for tests of crash recovery and for abandoning edits).
    /// Queued thumbnails are dropped and one being written is waited for, so nothing of this
    /// session writes into the package after it returns (as after a kill).
    public func abandon() async {
        eventHub.finish(with: .closed)
        autosaveTask?.cancel()
        idleTask?.cancel()
        isClosed = true
        OpenSessions.shared.remove(self)
        if let fd = lockFD { fileSystem.unlock(fd) }
        lockFD = nil
        await thumbnailWriter?.stop()
    }
}
