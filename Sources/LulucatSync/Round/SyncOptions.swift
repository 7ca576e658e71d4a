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
    /// The limits of each request the round makes (docs/sync.md §9.4): by default a server may
    /// send nothing for 30 s, a reply must come at 1 KiB/s or faster over each 15 s, and one
    /// request ends after 120 s whatever it moves. A limit met ends the request with
    /// `RemoteError.timedOut` (a write's with `ambiguous`), in words.
    public var transfer = TransferLimits()
    /// When the round gives up, counted from when it starts (after waiting for another round):
    /// 120 s by default; nil, never. A request in flight ends by then, no document starts after,
    /// and the round fails with `RemoteError.timedOut(_, .roundDeadline)`; the documents it
    /// finished stay done, the next round goes on. A first sync of a large library over a slow link
    /// may need a longer one.
    public var roundDeadline: Duration? = .seconds(120)
    /// What this device keeps of each page's published states, and its name in history lists
    /// (docs/sync.md §12): by default every version for a week, one a day for a month, one a week
    /// for a year, under the host's name.
    public var history = HistoryOptions()
    /// The options of a round: at most `trashLimit` documents to the trash, sessions opened with `session`, garbage collected as `garbage` says.
    public init(trashLimit: Int = 5, session: SessionOptions = SessionOptions(autosaveDelay: nil),
                garbage: GarbageOptions? = GarbageOptions()) {
        self.trashLimit = trashLimit
        self.session = session
        self.garbage = garbage
    }
}

/// Where a round is: `done` of `total` documents that needed work, and within the document at
/// work, `pagesMoved` of the `pagesToMove` pages whose blobs go up or come down.
public struct SyncProgress: Sendable {
    /// Documents finished.
    public var done: Int
    /// Documents that need work this round.
    public var total: Int
    /// The document being worked on; nil once the round is done.
    public var document: UUID?
    /// Pages of `document` whose blobs went up or came down so far this round.
    public var pagesMoved = 0
    /// Pages of `document` whose blobs the round moves, as far as it knows them yet: the count
    /// grows as the round finds them (a merge fetches the pages it lacks before it uploads the
    /// pages it codes), so `pagesMoved` never passes it. 0 for a document whose pages all stay.
    public var pagesToMove = 0
}
