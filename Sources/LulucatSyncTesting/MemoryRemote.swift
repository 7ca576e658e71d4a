// A remote in memory for the sync crash check (tests and `lnote-dev crashcheck`): its writes are
// stamped with the simulated disk's operation count, so the remote can be rebuilt as it was at a crash.

import Foundation
import LulucatSync

/// A remote in memory whose writes are stamped with the simulated disk's operation count, so the
/// remote can be rebuilt as it was when the disk crashed.
public final class MemoryRemote: Remote, @unchecked Sendable {
    public let statistics = RemoteStatistics()
    private let lock = NSLock()
    private var files: [String: [UInt8]] = [:]
    private var folders: Set<String> = []
    private var version = 0
    private var etags: [String: Int] = [:]
    /// Writes as (operations recorded on the disk before the write, path, bytes or nil for a delete).
    public private(set) var log: [(at: Int, path: String, bytes: [UInt8]?)] = []
    public var clock: () -> Int = { 0 }

    public init() {}

    /// The remote as it was once every write before `operations` disk operations had happened.
    public func asOf(_ operations: Int) -> MemoryRemote {
        lock.withLock {
            let r = MemoryRemote()
            r.folders = folders
            for w in log where w.at <= operations {
                if let b = w.bytes { r.files[w.path] = b } else { r.files[w.path] = nil }
                r.version += 1
                r.etags[w.path] = r.version
            }
            return r
        }
    }

    /// Makes the current content the starting point (no log).
    public func settle() { lock.withLock { log = files.map { (0, $0.key, $0.value) } } }

    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        statistics.record(sent: 0, received: 0)
        let listed: [RemoteEntry]? = lock.withLock {
            guard folders.contains(folder) else { return nil }
            return files.keys.filter { $0.hasPrefix(folder + "/") }.map {
                RemoteEntry(name: String($0.dropFirst(folder.count + 1)), etag: "\"\(etags[$0] ?? 0)\"", size: files[$0]!.count)
            }
        }
        guard let listed else { throw .notFound(folder) }
        return listed
    }

    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let found: ([UInt8], String?)? = lock.withLock { files[path].map { ($0, "\"\(etags[path] ?? 0)\"") } }
        guard let found else { throw .notFound(path) }
        statistics.record(sent: 0, received: found.0.count)
        return found
    }

    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let at = clock()
        lock.withLock {
            statistics.record(sent: bytes.count, received: 0)
            files[path] = bytes
            version += 1
            etags[path] = version
            log.append((at, path, bytes))
        }
    }

    public func delete(_ path: String) async throws(RemoteError) {
        let at = clock()
        lock.withLock {
            files[path] = nil
            log.append((at, path, nil))
        }
    }

    public func makeFolder(_ path: String) async throws(RemoteError) { _ = lock.withLock { folders.insert(path) } }
}
