// Saving for engines that make all dirty pages durable at once (SQLite: one transaction), and the
// idle step after a quiet autosave (SQLite: a WAL checkpoint, kept off the saving path).

import Foundation
import LulucatInk

extension DocumentSession {
    /// All dirty pages in one call of the engine: all durable, or all still dirty and the error
    /// thrown. The one duration recorded is the whole save's.
    func saveDirtyPagesTogether() throws(StoreError) {
        let dirty = metadata.pages.compactMap { entry in loaded[entry.id].flatMap { $0.dirty ? (entry.id, $0) : nil } }
        guard !dirty.isEmpty else { lastSaveError = nil; return }
        let start = DispatchTime.now().uptimeNanoseconds
        let encoded: [EncodedStrokes?]
        do {
            encoded = try engine.savePages(dirty.map { PageSave(id: $0.0, content: $0.1.content, changes: $0.1.changes, reusing: $0.1.encoded) })
        } catch {
            let explained = explainFailure(error)
            lastSaveError = explained
            throw explained
        }
        saveDurations.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        for ((id, p), e) in zip(dirty, encoded) { markSaved(id, p, encoded: e) }
        lastSaveError = nil
        retryDelay = nil
    }

    /// After an autosave, waits until the document has been quiet for four autosave delays, then
    /// lets the engine do its idle work. Any edit in between (a new autosave generation) skips it.
    func scheduleIdle(after delay: Duration) {
        let generation = autosaveGeneration
        idleTask?.cancel()
        idleTask = Task { [weak self] in
            try? await Task.sleep(for: delay * 4)
            guard !Task.isCancelled else { return }
            await self?.settle(generation: generation)
        }
    }

    func settle(generation: UInt64) {
        guard generation == autosaveGeneration, !isClosed, dirtyPageIDs.isEmpty else { return }
        idleTask = nil
        // Idle work is an optimisation (the WAL is bounded without it); a failure is kept for the
        // caller to see and the next close checkpoints again.
        do { try engine.idle(); idleCount += 1 } catch { lastSaveError = error }
    }

    /// Runs the engine's idle work now (what a quiet moment after autosave does): for a SQLite
    /// document a passive checkpoint that moves its write-ahead log into the database; the other
    /// engines have none. For an app going to the background, after `flush()`.
    /// - Throws: `.sessionClosed`, or the checkpoint's failure (nothing is lost: the log stays).
    public func idle() throws(StoreError) {
        try checkOpen()
        try engine.idle()
        idleCount += 1
    }
}

extension DocumentSession {
    /// Saves of a SQLite document that had to rewrite their pages instead of applying the
    /// recorded changes (0 unless the session and the database disagreed; for tests).
    var sqliteRewriteFallbacks: Int { engine.rewriteFallbacks }
}
