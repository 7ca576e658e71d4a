// A round's progress as the library's callback sees it (`SyncProgress`): the document at work
// and, within it, the pages whose blobs the round moves, counted as each goes up or comes down.

import Foundation

/// What a round tells its progress callback. The document's turn starts a new count; the pages to
/// move are registered by their blob paths as the round finds them (a merge fetches the pages it
/// lacks, then uploads the pages it codes) and counted once each as its transfer ends, from the
/// round's concurrent uploads too. The callback is called under a lock, so an app sees the
/// counts in order.
final class RoundProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var callback: (@Sendable (SyncProgress) -> Void)?
    private var current = SyncProgress(done: 0, total: 0, document: nil)
    private var pending: Set<String> = []
    /// Blobs that went up before their document's turn (its early uploads, while the listing was
    /// on its way), by document: counted as moved when the turn registers them.
    private var early: [UUID: Set<String>] = [:]

    /// Where the counts go from now on.
    func start(_ callback: @escaping @Sendable (SyncProgress) -> Void) { lock.withLock { self.callback = callback } }

    /// A document's turn (or, with nil, the end of the round): its page counts start at zero.
    func document(done: Int, total: Int, document: UUID?) {
        lock.withLock {
            current = SyncProgress(done: done, total: total, document: document)
            pending = []
            callback?(current)
        }
    }

    /// Page blobs of `document` the round is about to move (paths under `blobs/`); those already
    /// registered count once.
    func willMove(_ paths: some Sequence<String>, of document: UUID) {
        lock.withLock {
            guard current.document == document else { return }
            var added = 0
            for p in paths where pending.insert(p).inserted {
                added += 1
                if early[document]?.remove(p) != nil {
                    pending.remove(p)
                    current.pagesMoved += 1
                }
            }
            guard added > 0 else { return }
            current.pagesToMove += added
            callback?(current)
        }
    }

    /// A transfer of `path` ended well: counted when it is one of the document's registered pages.
    func moved(_ path: String, of document: UUID) {
        lock.withLock {
            guard current.document == document else {
                early[document, default: []].insert(path)
                return
            }
            guard pending.remove(path) != nil else { return }
            current.pagesMoved += 1
            callback?(current)
        }
    }

    /// No more calls to the callback (the round is over; its early uploads may still end).
    func stop() { lock.withLock { callback = nil } }
}
