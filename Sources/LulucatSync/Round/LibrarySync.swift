// Syncing a library with a remote (docs/sync.md): the face an app calls. A round itself is
// LibraryRound (the library) and DocumentRound (each document that needs work).

import Foundation
import LulucatCrypto
import LulucatInk
import LulucatStore

/// Syncs one library with one remote, encrypted or not as the library was set up: one call for an
/// app either way. One round at a time per library.
///
/// A library that holds a key (`RemoteEncryption.setUp`) syncs end-to-end encrypted
/// (docs/encryption.md): every object the round will use is fetched, opened and checked before
/// anything here changes. Any other library syncs in clear.
///
/// A synced library receives the documents of every device, whichever engine made them: an app
/// whose devices may make SQLite documents calls `Library.enableSQLiteEngine()` at launch, as it
/// does to open them (without it such a document is skipped, with the reason, until it is).
///
/// ```swift
/// let remote = try SyncConfiguration(remote: "https://dav.example.org/notes/").makeRemote()
/// let report = try await LibrarySync(library: library, remote: remote).sync { progress in
///     print(progress.done, "of", progress.total)
/// }
/// ```
///
/// A value is cheap to make and `Sendable`; every call may come from any task. Rounds of one
/// library never overlap, in this process or another: a second waits for the first
/// (`SyncOptions.waitForOtherRound`). An app's open sessions stay usable during a round: a document
/// open in this process is merged through its session, between the app's edits.
public struct LibrarySync: Sendable {
    /// The library this syncs.
    public let library: Library
    /// The remote as given (for an encrypted library, the server that holds sealed objects).
    public let remote: any Remote
    /// This library's device id (`.sync/device.json`), made on first use: it names this device's heads.
    public let device: UUID
    let store: SyncStateStore
    /// The library key, when the library syncs encrypted.
    let key: LibraryKey?

    /// Whether this library syncs end-to-end encrypted (it holds a key).
    public var isEncrypted: Bool { key != nil }

    /// Prepares `library` to sync with `remote`: makes `.sync/` and this library's device id on
    /// first use, and reads the library key when encryption was set up (`RemoteEncryption.setUp`).
    /// Makes no request.
    /// - Throws: `SyncError.store` or `.localState` when `.sync/` cannot be prepared;
    ///   `.encryption` when the library's key cannot be read.
    public init(library: Library, remote: any Remote) throws(SyncError) {
        let key = RemoteEncryption.isSetUp(library) ? try LocalEncryption.readKey(library) : nil
        try self.init(library: library, remote: remote, key: key)
    }

    /// `key` nil: the plain round over `remote` (which, under an encrypted round, is the
    /// `EncryptedRemote`).
    init(library: Library, remote: any Remote, key: LibraryKey?) throws(SyncError) {
        self.library = library
        self.remote = remote
        self.key = key
        try SyncError.store { () throws(StoreError) in try library.prepare() }
        store = SyncStateStore(library: library)
        try store.prepare()
        device = try store.deviceID()
    }

    static let headsFolder = "heads"
    static let blobsFolder = "blobs"

    /// One round: lists the remote's heads, merges every document changed here or elsewhere (a
    /// join: concurrent edits are all kept, docs/sync.md §5), writes the result here and
    /// publishes this device's heads and blobs. Cancellable between documents (a document is
    /// applied and published whole). One round per library at a time, across processes: a round
    /// waits for another that is running (`SyncOptions.waitForOtherRound`), so two never reuse a
    /// stamp or race on `.sync/`.
    ///
    /// A round that fails leaves every document either as it was or merged whole; the next
    /// round repeats what did not finish (a write that may or may not have happened is written
    /// again). A document that cannot be worked on this round is listed in
    /// `SyncReport.skipped` with the reason, and nothing of it is lost.
    /// - Parameters:
    ///   - options: the round's limits, deadlines, history and garbage collection.
    ///   - progress: called on the round's tasks (not the main actor) before each document, as
    ///     each page of it goes up or comes down (in order, under a lock: return quickly), and
    ///     once at the end.
    /// - Returns: what the round did.
    /// - Throws: `SyncError`: `.remote` when the server cannot be reached or refuses (in words a
    ///   person can act on), `.anotherRoundRunning`, `.massDeletion` when the round would move
    ///   more than `SyncOptions.trashLimit` documents to the trash, `.encryption` for an encrypted
    ///   remote's refusals, `.store`/`.localState` for the library's own files.
    public func sync(options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(SyncError) -> SyncReport {
        let lock = try await store.lockRounds(waiting: options.waitForOtherRound)
        defer { store.unlockRounds(lock) }
        // Every request of the round, in any of its tasks, obeys its limits and its deadline.
        let budget = TransferBudget(limits: options.transfer, roundDeadline: options.roundDeadline)
        let result: Result<SyncReport, SyncError> = await TransferBudget.$current.withValue(budget) {
            do throws(SyncError) {
                if let key { return .success(try await EncryptedRound(library: library, inner: remote, key: key).sync(options: options, progress: progress)) }
                return .success(try await plainRound(options: options, progress: progress))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The round's deadline, when it has passed, as the error that stops the round.
    static func checkRoundDeadline() throws(SyncError) {
        if let over = TransferBudget.current?.roundOver("the sync round") { throw .remote(over) }
    }

    /// The plain round, the library's round lock held by the caller.
    func plainRound(options: SyncOptions, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(SyncError) -> SyncReport {
        var round = LibraryRound(self, options: options)
        return try await round.run(progress: progress)
    }

    /// The report with the requests and bytes counted since `start`.
    func finish(_ r: SyncReport, _ start: RemoteCounts) -> SyncReport {
        var r = r
        r.requests = remote.statistics.requests - start.requests
        r.bytesSent = remote.statistics.bytesSent - start.bytesSent
        r.bytesReceived = remote.statistics.bytesReceived - start.bytesReceived
        return r
    }

    static func attempt<T>(_ body: () async throws(RemoteError) -> T) async -> Result<T, RemoteError> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}

extension Library {
    /// Syncs this library with a remote: `LibrarySync(library:remote:).sync(options:progress:)`,
    /// which is the one public name of a round (this shorthand is for the package's tests and tools).
    package func sync(with remote: any Remote, options: SyncOptions = SyncOptions(),
                     progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws(SyncError) -> SyncReport {
        try await LibrarySync(library: self, remote: remote).sync(options: options, progress: progress)
    }
}
