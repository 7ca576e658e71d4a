// The sessions open in this process, by package path: a second window of the app shares the
// first one's session (Library.openShared) instead of getting documentInUse, and duplicate, rename
// and trash of an open document go through the session that holds its lock.

import Foundation
import LulucatInk

/// The process's open sessions, held weakly (a session released without `close()` still saves and
/// unlocks in its deinit).
final class OpenSessions: @unchecked Sendable {
    static let shared = OpenSessions()
    private struct Weak { weak var session: DocumentSession? }
    private let lock = NSLock()
    private var sessions: [String: Weak] = [:]

    func register(_ session: DocumentSession) {
        lock.withLock { sessions[session.package.path] = Weak(session: session) }
    }

    /// Forgets `session` (only it: a newer session of the same package stays).
    func remove(_ session: DocumentSession) {
        remove(path: session.package.path, ObjectIdentifier(session))
    }

    func remove(path: String, _ id: ObjectIdentifier) {
        lock.withLock {
            guard let entry = sessions[path] else { return }
            if let s = entry.session, ObjectIdentifier(s) != id { return }
            sessions[path] = nil
        }
    }

    func session(at path: String) -> DocumentSession? {
        lock.withLock { sessions[path]?.session }
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
