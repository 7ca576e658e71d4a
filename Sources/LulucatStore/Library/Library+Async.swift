// The library as an app calls it: every operation that does file I/O (listing, creating, copying,
// trashing: fsyncs among them) has an `async` overload under the synchronous one's name, which an
// `async` caller gets and which runs off the caller's actor, so none blocks the main thread;
// documents open in this process are shared, copied, renamed and trashed through their session
// instead of failing with documentInUse. Synchronous code (the CLI, a sync closure) gets the
// synchronous overload.

import Foundation
import LulucatInk

extension Library {
    /// The shared session of `openShared`, without a holder: each call counts one more holder of
    /// the session, and each `close()` of the session lets one go (the package's own callers,
    /// which pair them; an app gets a `SessionHolder` per window from `openShared`).
    ///
    /// - Throws: `StoreError.documentInUse` only when another process has it open.
    @concurrent
    package func openSharedSession(_ id: UUID, options: SessionOptions = SessionOptions()) async throws(StoreError) -> DocumentSession {
        let path = package(id).path
        // Tasks of this process opening the same document at once: one opens, the others wait for
        // its session (bounded: 60 s of 2 ms waits) instead of meeting its lock half-way.
        for _ in 0..<30_000 {
            if let open = OpenSessions.shared.session(at: path), await open.share() { return open }
            guard OpenSessions.shared.beginOpening(path) else {
                if Task.isCancelled { throw .cancelled }
                try? await Task.sleep(nanoseconds: 2_000_000)
                continue
            }
            do {
                let session = try await open(id, options: options)
                OpenSessions.shared.endOpening(path)
                return session
            } catch {
                OpenSessions.shared.endOpening(path)
                // Another task of this process opened it in between (with `open`): share that one.
                guard case .documentInUse = error, OpenSessions.shared.session(at: path) != nil else { throw error }
            }
        }
        throw .documentInUse(path: path)
    }

    /// The documents, as the synchronous `documents()` gives them, read off the caller's actor.
    @concurrent
    public func documents() async throws(StoreError) -> [LibraryEntry] {
        try synchronous { () throws(StoreError) in try documents() }
    }

    /// The documents in the trash, as the synchronous `trashedDocuments()` gives them, read off the
    /// caller's actor.
    @concurrent
    public func trashedDocuments() async throws(StoreError) -> [LibraryEntry] {
        try synchronous { () throws(StoreError) in try trashedDocuments() }
    }

    /// Creates a document with one empty page, as the synchronous `createDocument(title:)` does,
    /// off the caller's actor.
    @concurrent @discardableResult
    public func createDocument(title: String, engine: EngineKind = .snapshot, codec: SampleCodecID = .compact,
                               firstPage canvas: QuantizedSize? = .letter) async throws(StoreError) -> DocumentPackage {
        try synchronous { () throws(StoreError) in try createDocument(title: title, engine: engine, codec: codec, firstPage: canvas) }
    }

    /// Creates a document holding `pages`, as the synchronous `createDocument(title:pages:)` does,
    /// off the caller's actor.
    @concurrent @discardableResult
    public func createDocument(title: String, pages contents: [PageContent], engine: EngineKind = .snapshot,
                               codec: SampleCodecID = .compact) async throws(StoreError) -> DocumentPackage {
        try synchronous { () throws(StoreError) in try createDocument(title: title, pages: contents, engine: engine, codec: codec) }
    }

    /// Copies a document under a new id, also one open in this process (which the synchronous
    /// `duplicate` refuses with `documentInUse`): its session saves every accepted edit and stays
    /// still while the files are copied (its SQLite database checkpointed). Progress and
    /// cancellation are the synchronous overload's.
    @concurrent @discardableResult
    public func duplicate(_ id: UUID, title: String? = nil,
                          progress: @escaping @Sendable (OperationProgress) -> Void = { _ in }) async throws(StoreError) -> DocumentPackage {
        let source = package(id)
        if let open = OpenSessions.shared.session(at: source.path) {
            let library = self
            do {
                return try await open.withSavedPackage { () throws(StoreError) in try library.copyDocument(source, title: title, progress: progress) }
            } catch {
                // Closed in between: copy it as a closed document.
                guard case .sessionClosed = error else { throw error }
            }
        }
        return try synchronous { () throws(StoreError) in try duplicate(id, title: title, progress: progress) }
    }

    /// Runs `body` over a document's files as a person sees the document: when a session of this
    /// process has it open, every edit it accepted is saved first and none of its saves runs
    /// until `body` returns (a SQLite database checkpointed into its one file), as
    /// `duplicate` copies. Export reads an open document here.
    package func withSavedDocument<T: Sendable>(_ id: UUID, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        if let open = OpenSessions.shared.session(at: package(id).path) {
            do {
                let result: Result<T, any Error> = try await open.withSavedPackage { () throws(StoreError) in Result { try body() } }
                return try result.get()
            } catch StoreError.sessionClosed {
                // Closed in between: its files are the document.
            }
        }
        return try body()
    }

    /// Moves a document to the trash, also one open in this process (which the synchronous
    /// `moveToTrash` refuses with `documentInUse`): its session saves and closes first (for every
    /// holder; their events end with `.closed`), then the package moves.
    @concurrent
    public func moveToTrash(_ id: UUID) async throws(StoreError) {
        if let open = OpenSessions.shared.session(at: package(id).path) {
            try await open.closeForEveryHolder()
        }
        try synchronous { () throws(StoreError) in try moveToTrash(id) }
    }

    /// Brings a document back from the trash, as the synchronous `restoreFromTrash` does, off the
    /// caller's actor.
    @concurrent
    public func restoreFromTrash(_ id: UUID) async throws(StoreError) {
        try synchronous { () throws(StoreError) in try restoreFromTrash(id) }
    }

    /// Removes what crashes left of packages being built, as the synchronous
    /// `removeStaleStagingFolders(olderThan:)` does, off the caller's actor: the explicit background
    /// step for an app that stays open for days (the library's open, its first `prepare`, does it
    /// once). Lists the root and the trash. Returns the folders removed.
    @concurrent @discardableResult
    public func removeStaleStagingFolders(olderThan age: TimeInterval = 3600) async -> [String] {
        synchronous { () -> [String] in removeStaleStagingFolders(olderThan: age) }
    }

    /// Deletes the documents in the trash for good, as the synchronous `emptyTrash()` does, off the
    /// caller's actor.
    @concurrent
    public func emptyTrash() async throws(StoreError) {
        try synchronous { () throws(StoreError) in try emptyTrash() }
    }
}

/// Calls a library operation's synchronous overload from its `async` one of the same name: in a
/// closure that is not `async`, Swift picks the synchronous overload (in an `async` function it
/// would pick the `async` one, itself).
private func synchronous<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T { try body() }
