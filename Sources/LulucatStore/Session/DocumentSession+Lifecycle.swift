// The end of a session, with no accepted edit lost: `close()` refuses edits from its first line,
// a session released without `close()` saves and unlocks in its deinit, and failed saves are
// retried with backoff until they succeed or the session closes.

import Foundation
import LulucatInk

extension DocumentSession {
    /// Edits are refused once `close()` has started: each one either throws or is in the flush
    /// `close()` does, never accepted after it and dropped.
    func checkWritable() throws(StoreError) {
        if isClosed || isClosing { throw .sessionClosed }
    }

    /// Whether `close()` has started and not yet finished.
    public var closing: Bool { isClosing }

    /// Flushes (which brings document.json and the manifest up to date), waits for thumbnails,
    /// removes orphan assets and releases the document.
    ///
    /// From the moment it is called, edits throw `StoreError.sessionClosed`; every edit that
    /// returned before is durable when `close()` returns. If saving fails the session stays open,
    /// autosave keeps retrying, and `close()` can be called again. A second `close()` while one is
    /// under way waits for it.
    ///
    /// A session shared by several holders (`Library.openShared`, a second window) closes at its
    /// last holder's `close()`; an earlier holder's `close()` saves everything (a flush) and leaves
    /// the session open for the others.
    public func close() async throws(StoreError) {
        while isClosing { await withCheckedContinuation { closeWaiters.append($0) } }
        guard !isClosed else { return }
        // What was submitted before the close goes in first (`submit`).
        applySubmitted()
        if holders > 1 {
            try flush()
            holders -= 1
            return
        }
        isClosing = true
        defer {
            isClosing = false
            let waiters = closeWaiters
            closeWaiters = []
            for w in waiters { w.resume() }
        }
        try flush()
        // The actor is reentrant here; edits that arrive now are refused (checkWritable), so the
        // flush above holds everything ever accepted.
        await thumbnailWriter?.drain()
        try removeOrphanAssets()
        try engine.close()
        let fs = fileSystem
        try fs.checked.removeIfPresent(package.path + "/" + DocumentSession.sessionMarkerName)
        try fs.checked.syncDirectory(package.path)
        isClosed = true
        autosaveTask?.cancel()
        autosaveTask = nil
        idleTask?.cancel()
        idleTask = nil
        loaded = [:]
        OpenSessions.shared.remove(self)
        if let fd = lockFD { fs.unlock(fd) }
        lockFD = nil
        eventHub.finish(with: .closed)
    }

    /// After a failed save: try again later, each wait twice the last (from the autosave delay up
    /// to 30 s), until a save succeeds or the session closes. No autosave, no retry.
    func scheduleRetry() {
        guard !isClosed, let base = options.autosaveDelay else { return }
        let next = min((retryDelay ?? base) * 2, .seconds(30))
        retryDelay = next
        scheduleAutosave(after: next)
    }

    /// A package deleted or moved while open: saving into its path cannot work, and says so.
    func checkPackageIsThere() throws(StoreError) {
        let fs = fileSystem
        let info = try? fs.info(package.path)
        guard info?.kind == .directory else { throw .documentGone(path: package.path) }
    }

    /// A failed save or load, named for what happened: `documentGone` when the package is no longer
    /// there; else the error with the numbers of the pages it names, so that an app's message says
    /// "page 3".
    func explainFailure(_ error: StoreError) -> StoreError {
        if case .documentGone = error { return error }
        do { try checkPackageIsThere() } catch { return error }
        return error.numberingPages(metadata.pages.map(\.id))
    }

    /// A page's number in the document (1 for the first), for the errors that name it.
    func number(of page: UUID) -> Int? { metadata.pages.firstIndex { $0.id == page }.map { $0 + 1 } }

    /// What a session released without `close()` does in its deinit: saves the pages it accepted,
    /// then document.json and the manifest, closes the engine, removes the open marker and
    /// releases the lock. Synchronous (a deinit cannot await); it runs on the thread that dropped
    /// the last reference. A failure leaves the marker, so the next open reconciles and reports.
    static func finishReleased(package: DocumentPackage, fileSystem fs: any FileSystem, engine: any StorageEngine,
                               metadata: DocumentMetadata, dirtyPages: [PageSave], metadataDirty: Bool,
                               pending: PendingRecord? = nil, wholeWrites: Set<UUID> = [], lock: FileDescriptor) {
        defer { fs.unlock(lock) }
        var dirtyPages = dirtyPages
        do {
            // A committed transaction's writes first; then the pages it wrote, or that must be
            // written whole, are written whole when they changed since.
            if let pending {
                try pending.record.apply(to: package, engine: engine, manifest: PackageJSON.encode(Manifest(metadata)),
                                         contents: pending.contents, fileSystem: fs)
            }
            var whole = wholeWrites
            if let pending { whole.formUnion(pending.contents.keys) }
            for p in dirtyPages where whole.contains(p.id) && pending?.contents[p.id] != p.content {
                try engine.replacePage(p.id, content: p.content)
            }
            dirtyPages.removeAll { whole.contains($0.id) }
            if !dirtyPages.isEmpty {
                if engine.savesPagesTogether {
                    _ = try engine.savePages(dirtyPages)
                } else {
                    for p in dirtyPages { _ = try engine.savePage(p.id, content: p.content, changes: p.changes, reusing: p.reusing) }
                }
            }
            if metadataDirty || !dirtyPages.isEmpty || pending != nil || !wholeWrites.isEmpty {
                var writer = DocumentJSONWriter()
                let doc = writer.encode(metadata)
                let manifest = PackageJSON.encode(Manifest(metadata))
                try fs.checked.writeAtomically(doc, to: package.documentPath)
                try fs.checked.writeAtomically(manifest, to: package.manifestPath)
            }
            try engine.close()
            try fs.checked.removeIfPresent(package.path + "/" + DocumentSession.sessionMarkerName)
            try fs.checked.syncDirectory(package.path)
        } catch {
            try? engine.close()
        }
    }
}

/// The session's engine, for its deinit: only the actor uses it while the session lives, and only
/// the deinit after, when nothing else can reach it.
final class EngineOwnership: @unchecked Sendable {
    let engine: any StorageEngine
    init(_ engine: any StorageEngine) { self.engine = engine }
}
