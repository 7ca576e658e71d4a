// Syncing a library with a remote (docs/sync.md): the face an app calls. A round itself is
// LibraryRound (the library) and DocumentRound (each document that needs work).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite

/// Syncs one library with one remote. One round at a time per library.
public struct LibrarySync: Sendable {
    public let library: Library
    public let remote: any Remote
    public let device: UUID
    let store: SyncStateStore

    /// Enables the SQLite engine (`Library.enableSQLiteEngine()`): a synced library holds the
    /// documents of every device, whichever engine made them.
    public init(library: Library, remote: any Remote) throws {
        Library.enableSQLiteEngine()
        self.library = library
        self.remote = remote
        try library.prepare()
        store = SyncStateStore(library: library)
        try store.prepare()
        device = try store.deviceID()
    }

    static let headsFolder = "heads"
    static let blobsFolder = "blobs"

    /// One round. Cancellable between documents (a document is applied and published whole).
    public func sync(options: SyncOptions = SyncOptions(),
                     progress: @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
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
    /// Syncs this library with a remote: see `LibrarySync`.
    public func sync(with remote: any Remote, options: SyncOptions = SyncOptions(),
                     progress: @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
        try await LibrarySync(library: self, remote: remote).sync(options: options, progress: progress)
    }
}
