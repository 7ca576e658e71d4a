// The sessions open in this process, by package path: a second window of the app shares the
// first one's session (Library.openShared) instead of getting documentInUse, duplicate, rename
// and trash of an open document go through the session that holds its lock, and a sync round
// merges into an open document through its session (Library.openSession).

import Foundation
import LulucatInk

/// The process's open sessions, held weakly (a session released without `close()` still saves and
/// unlocks in its deinit).
final class OpenSessions: @unchecked Sendable {
    static let shared = OpenSessions()
    private struct Weak { weak var session: DocumentSession? }
    private let lock = NSLock()
    private var sessions: [String: Weak] = [:]
    /// Packages a task of this process is opening through `Library.openShared`.
    private var opening: Set<String> = []

    /// Paths are compared in their standard form (no `.`, `..` or doubled slashes).
    private static func key(_ path: String) -> String { (path as NSString).standardizingPath }

    func register(_ session: DocumentSession) {
        let k = Self.key(session.package.path)
        lock.withLock { sessions[k] = Weak(session: session) }
    }

    /// Forgets `session` (only it: a newer session of the same package stays).
    func remove(_ session: DocumentSession) {
        remove(path: session.package.path, ObjectIdentifier(session))
    }

    func remove(path: String, _ id: ObjectIdentifier) {
        let k = Self.key(path)
        lock.withLock {
            guard let entry = sessions[k] else { return }
            if let s = entry.session, ObjectIdentifier(s) != id { return }
            sessions[k] = nil
        }
    }

    /// Packages whose session was released without `close()` and is saving in its deinit: an
    /// open of the same package waits for it to let go of the lock (a hand-over, no refusal).
    private var releasing: [String: Int] = [:]

    func beginRelease(_ path: String) {
        let k = Self.key(path)
        lock.withLock { releasing[k, default: 0] += 1 }
    }

    func endRelease(_ path: String) {
        let k = Self.key(path)
        lock.withLock {
            releasing[k, default: 1] -= 1
            if releasing[k] == 0 { releasing[k] = nil }
        }
    }

    func isReleasing(_ path: String) -> Bool {
        let k = Self.key(path)
        return lock.withLock { releasing[k] != nil }
    }

    /// Marks `path` as being opened by the caller; false when another task is opening it.
    func beginOpening(_ path: String) -> Bool {
        let k = Self.key(path)
        return lock.withLock { opening.insert(k).inserted }
    }

    func endOpening(_ path: String) {
        let k = Self.key(path)
        _ = lock.withLock { opening.remove(k) }
    }

    func session(at path: String) -> DocumentSession? {
        let k = Self.key(path)
        return lock.withLock { sessions[k]?.session }
    }

    /// The live sessions of packages directly in `folder`, by package name: one look at the table
    /// instead of one per package.
    func sessions(in folder: String) -> [String: DocumentSession] {
        let prefix = Self.key(folder) + "/"
        return lock.withLock {
            var out: [String: DocumentSession] = [:]
            for (k, w) in sessions where k.hasPrefix(prefix) {
                let name = k.dropFirst(prefix.count)
                if !name.contains("/"), let s = w.session { out[String(name)] = s }
            }
            return out
        }
    }
}

extension DocumentSession {
    /// One more holder (a second window): it gets this session, and its `close()` saves without
    /// closing while another holder remains. False once `close()` has started.
    func share() -> Bool {
        guard !isClosed, !isClosing else { return false }
        holders += 1
        return true
    }

    /// How many holders share this session (1 unless `Library.openShared` handed it out again).
    public var holderCount: Int { holders }

    /// Runs `body` with every accepted edit saved and the package quiet: no save of this session
    /// can run in between (the actor runs `body` without suspending), and a SQLite database is
    /// checkpointed into its one file. Duplicate and export of an open document copy here.
    func withSavedPackage<T: Sendable>(_ body: @Sendable () throws(StoreError) -> T) throws(StoreError) -> T {
        try checkWritable()
        try flush()
        try engine.prepareForCopyWhileOpen()
        return try body()
    }

    /// Closes for every holder (the document is being trashed): saves, then closes; the events of
    /// every holder end with `.closed`.
    func closeForEveryHolder() async throws(StoreError) {
        holders = 1
        try await close()
    }
}

extension Library {
    /// The session that has the document open in this process, if one has (a sync round merges
    /// into it instead of opening the document). A session in another process is not found here:
    /// `open` then throws `StoreError.documentInUse`.
    public func openSession(_ id: UUID) -> DocumentSession? {
        OpenSessions.shared.session(at: package(id).path)
    }

    /// Every session open in this process on a document of this library, by id: what
    /// `openSession` answers for each, in one look (a sync round asks about every document).
    package func openSessions() -> [UUID: DocumentSession] {
        var out: [UUID: DocumentSession] = [:]
        for (name, s) in OpenSessions.shared.sessions(in: root) {
            if let id = DocumentPackage.id(fromDirectoryName: name) { out[id] = s }
        }
        return out
    }
}

/// One window's hold on a shared session (`Library.openWindow`): its `close()` lets go of this
/// window's hold once, however often it is called, and the session closes at its last holder's.
/// A holder dropped without `close()` lets go by itself (saving, as a close does).
public final class SessionHolder: @unchecked Sendable {
    /// The document's session, shared by every holder of it in this process.
    public let session: DocumentSession
    private let lock = NSLock()
    private var letGo = false

    init(_ session: DocumentSession) { self.session = session }

    /// Whether this holder has let go.
    public var isClosed: Bool { lock.withLock { letGo } }

    /// Lets go of this window's hold: the session saves, and closes if this was its last holder.
    /// A second call does nothing (it never closes another window's session).
    public func close() async throws(StoreError) {
        guard letGoOnce() else { return }
        try await session.close()
    }

    /// Lets go of this window's hold from synchronous code (a `deinit`, a UIKit callback that
    /// cannot `await`): the close takes its place in the session's line of submitted batches at
    /// once (`DocumentSession.close()`, the synchronous overload), and the handle's `value()`
    /// returns when it is done. A second call does nothing (its handle is done at once).
    @discardableResult
    public func close() -> SubmittedClose {
        guard letGoOnce() else { return SubmittedClose(.success(())) }
        return session.close()
    }

    /// True the first time it is called.
    private func letGoOnce() -> Bool {
        lock.withLock { () -> Bool in
            defer { letGo = true }
            return !letGo
        }
    }

    deinit {
        guard !letGo else { return }
        // Queued behind every batch this window submitted.
        session.close()
    }
}

extension Library {
    /// Opens a document for one window: a holder of the session this process has open for it,
    /// shared, or of a new one. Each window closes its own holder (`SessionHolder.close()`, once
    /// however often it is called, so a window closing twice never closes another's session); the
    /// session closes with the last holder. A holder dropped without `close()` lets go by itself.
    ///
    /// ```swift
    /// let window = try await library.openShared(id)
    /// try await window.session.append(stroke, to: page)
    /// try await window.close()
    /// ```
    /// - Throws: `StoreError.documentInUse` only when another process has it open.
    public func openShared(_ id: UUID, options: SessionOptions = SessionOptions()) async throws(StoreError) -> SessionHolder {
        SessionHolder(try await openSharedSession(id, options: options))
    }
}
