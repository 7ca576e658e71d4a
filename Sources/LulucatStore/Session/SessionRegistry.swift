// The sessions open in this process, by package: a sync round that finds a document open merges
// into it through its session (the one writer) instead of skipping it (Library.openSession).

import Foundation
import LulucatInk

/// Open sessions by package path. Weak: a session released without `close()` leaves by itself.
enum SessionRegistry {
    private final class Entry {
        weak var session: DocumentSession?
        let identity: ObjectIdentifier
        init(_ session: DocumentSession) {
            self.session = session
            identity = ObjectIdentifier(session)
        }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var byPath: [String: Entry] = [:]

    static func key(_ path: String) -> String { (path as NSString).standardizingPath }

    static func register(_ session: DocumentSession) {
        let k = key(session.package.path)
        lock.withLock { byPath[k] = Entry(session) }
    }

    /// Removes the entry only when it is still this session's (a newer session may hold the path).
    static func unregister(path: String, identity: ObjectIdentifier) {
        let k = key(path)
        lock.withLock {
            if let e = byPath[k], e.identity == identity { byPath[k] = nil }
        }
    }

    /// From a deinit: removes the entry when its session is gone (a weak reference to a session
    /// being released already reads nil).
    static func removeReleased(path: String) {
        let k = key(path)
        lock.withLock {
            if let e = byPath[k], e.session == nil { byPath[k] = nil }
        }
    }

    static func session(at path: String) -> DocumentSession? {
        let k = key(path)
        return lock.withLock { byPath[k]?.session }
    }
}

extension Library {
    /// The session that has the document open in this process, if one has (a sync round merges
    /// into it instead of opening the document). A session in another process is not found here:
    /// `open` then throws `StoreError.documentInUse`.
    public func openSession(_ id: UUID) -> DocumentSession? {
        SessionRegistry.session(at: package(id).path)
    }
}
