// What an app sets for a round (SyncOptions) and hears while it runs (SyncProgress).

import Foundation
import LulucatStore

/// How a round runs.
public struct SyncOptions: Sendable {
    /// A round that would move more documents than this to the trash stops before applying anything.
    public var trashLimit: Int
    /// Options of the sessions the round opens (thumbnails, journal thresholds).
    public var session: SessionOptions
    /// For tests: runs after a document open in this process was read and joined and before the
    /// join is applied to it, where an app's edits race the round.
    var beforeApplyingToOpenSession: (@Sendable (UUID) async -> Void)?
    /// Garbage collection of unreferenced blobs (§8), at the end of a round that did work, when
    /// due; nil: never in a round (`LibrarySync.collectGarbage` still can).
    public var garbage: GarbageOptions?
    /// How long a round waits for another round of the same library to finish (in this process or
    /// another: one round per library at a time) before it gives up with `SyncError.anotherRoundRunning`.
    public var waitForOtherRound: Duration = .seconds(60)
    /// The options of a round: at most `trashLimit` documents to the trash, sessions opened with `session`, garbage collected as `garbage` says.
    public init(trashLimit: Int = 5, session: SessionOptions = SessionOptions(autosaveDelay: nil),
                garbage: GarbageOptions? = GarbageOptions()) {
        self.trashLimit = trashLimit
        self.session = session
        self.garbage = garbage
    }
}

/// Where a round is: `done` of `total` documents that needed work.
public struct SyncProgress: Sendable {
    /// Documents finished.
    public var done: Int
    /// Documents that need work this round.
    public var total: Int
    /// The document being worked on; nil once the round is done.
    public var document: UUID?
}
