// A remote in memory for the sync crash check (tests and `lnote-dev crashcheck`): its writes are
// stamped with the simulated disk's operation count, so the remote can be rebuilt as it was at a crash.

import Foundation
import LulucatSync

/// A remote in memory whose writes are stamped with the simulated disk's operation count, so the
/// remote can be rebuilt as it was when the disk crashed.
public final class MemoryRemote: Remote, @unchecked Sendable {
    public let statistics = RemoteStatistics()
    /// This remote's own name (a copy made by `asOf` is another remote).
    public var identity: String { "memory:\(ObjectIdentifier(self).hashValue)" }
    private let lock = NSLock()
    private var files: [String: [UInt8]] = [:]
    private var folders: Set<String> = []
    private var version = 0
    private var etags: [String: Int] = [:]
    /// Writes as (operations recorded on the disk before the write, path, bytes or nil for a delete).
    public private(set) var log: [(at: Int, path: String, bytes: [UInt8]?)] = []
    public var clock: () -> Int = { 0 }
    /// A blackhole: every `put` answers success and stores nothing (folders are still made), as a
    /// server out of quota behind a proxy that acknowledges anyway. Settable while in use.
    public var dropsWrites: Bool {
        get { lock.withLock { _dropsWrites } }
        set { lock.withLock { _dropsWrites = newValue } }
    }
    private var _dropsWrites = false

    /// An empty remote; `blackhole` makes it acknowledge every `put` and keep nothing (`dropsWrites`).
    public init(blackhole: Bool = false) { _dropsWrites = blackhole }

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

    /// The files and folders held now (for tests that look past the remote's calls).
    public var storedFiles: [String: [UInt8]] { lock.withLock { files } }
    public var storedFolders: Set<String> { lock.withLock { folders } }

    /// Refuses what the other remotes refuse: a path `RemotePath.isSafe` rejects ("" is the root,
    /// as a folder only).
    private func check(_ path: String, folder: Bool = false) throws(RemoteError) {
        if path.isEmpty && folder { return }
        guard RemotePath.isSafe(path) else { throw .failed(path, "unsafe remote path") }
    }

    /// One level: the files directly in `folder`, and its subfolders (made, or holding files).
    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        try check(folder, folder: true)
        statistics.record(sent: 0, received: 0)
        let prefix = folder.isEmpty ? "" : folder + "/"
        let listed: [RemoteEntry]? = lock.withLock {
            guard folder.isEmpty || folders.contains(folder) else { return nil }
            var out: [RemoteEntry] = []
            var subfolders: Set<String> = []
            for (path, bytes) in files where path.hasPrefix(prefix) {
                let rest = path.dropFirst(prefix.count)
                if let slash = rest.firstIndex(of: "/") { subfolders.insert(String(rest[..<slash])) }
                else { out.append(RemoteEntry(name: String(rest), etag: "\"\(etags[path] ?? 0)\"", size: bytes.count)) }
            }
            for f in folders where f.hasPrefix(prefix) && f.count > prefix.count {
                subfolders.insert(String(f.dropFirst(prefix.count).prefix { $0 != "/" }))
            }
            return out + subfolders.sorted().map { RemoteEntry(name: $0, etag: nil, size: nil, isFolder: true) }
        }
        guard let listed else { throw .notFound(folder) }
        return listed
    }

    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        try check(path)
        let found: ([UInt8], String?)? = lock.withLock { files[path].map { ($0, "\"\(etags[path] ?? 0)\"") } }
        statistics.record(sent: 0, received: found?.0.count ?? 0)
        guard let found else { throw .notFound(path) }
        guard found.0.count <= maxBytes else { throw .invalidResponse(path, "\(found.0.count) bytes, more than \(maxBytes)") }
        return found
    }

    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        try check(path)
        let at = clock()
        lock.withLock {
            statistics.record(sent: bytes.count, received: 0)
            if _dropsWrites { return }
            files[path] = bytes
            version += 1
            etags[path] = version
            log.append((at, path, bytes))
        }
    }

    public func delete(_ path: String) async throws(RemoteError) {
        try check(path)
        let at = clock()
        lock.withLock {
            statistics.record(sent: 0, received: 0)
            files[path] = nil
            log.append((at, path, nil))
        }
    }

    public func makeFolder(_ path: String) async throws(RemoteError) {
        try check(path, folder: true)
        statistics.record(sent: 0, received: 0)
        _ = lock.withLock { folders.insert(path) }
    }
}
