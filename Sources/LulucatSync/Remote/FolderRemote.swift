// A remote that is a mounted folder (a USB drive, a Syncthing folder, iCloud Drive's container on
// Apple, where every access goes through NSFileCoordinator: FileCoordination.swift). Writes are our
// atomic durable writes.

import Foundation
import LulucatStore

public struct FolderRemote: Remote {
    public let root: String
    public let statistics = RemoteStatistics()
    let fs: any FileSystem

    public init(root: String) { self.init(root: root, fileSystem: PosixFileSystem()) }

    /// Through another file system (tests: one that watches or cuts a write); `list` still reads
    /// entries' facts with lstat, so it must be the real one underneath.
    package init(root: String, fileSystem: any FileSystem) {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        self.root = r
        fs = fileSystem
    }

    func absolute(_ path: String) throws(RemoteError) -> String {
        guard RemotePath.isSafe(path) else { throw .failed(path, "unsafe remote path") }
        return root + "/" + path
    }

    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        let dir = try absolute(folder)
        statistics.record(sent: 0, received: 0)
        let names: [String]
        do {
            guard try fs.info(dir)?.kind == .directory else { throw RemoteError.notFound(folder) }
            names = try fs.contentsOfDirectory(dir)
        } catch let e as RemoteError { throw e } catch { throw .failed(folder, "\(error)") }
        var out: [RemoteEntry] = []
        for name in names where RemotePath.isSafeName(name) {
            var st = stat()
            guard lstat(dir + "/" + name, &st) == 0 else { continue }
            let isDir = (st.st_mode & S_IFMT) == S_IFDIR
            #if canImport(Darwin)
            let ns = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
            #else
            let ns = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            #endif
            out.append(RemoteEntry(name: name, etag: "\"\(st.st_ino)-\(st.st_size)-\(ns)\"", size: Int(st.st_size), isFolder: isDir))
        }
        return out
    }

    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let p = try absolute(path)
        do {
            // A read that finds nothing, or too much, was still a request.
            var bytes: [UInt8] = []
            defer { statistics.record(sent: 0, received: bytes.count) }
            bytes = try FileCoordination.run(p, .reading) { p in
                guard let info = try fs.info(p), info.kind == .file else { throw RemoteError.notFound(path) }
                guard info.size <= maxBytes else { throw RemoteError.invalidResponse(path, "\(info.size) bytes, more than \(maxBytes)") }
                return try fs.readFile(p, limit: maxBytes)
            }
            return (bytes, nil)
        } catch let e as RemoteError { throw e } catch { throw .failed(path, "\(error)") }
    }

    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: bytes.count, received: 0)
        // A failed local write leaves the old file or the new one (rename is the commit point).
        do { try FileCoordination.run(p, .writing) { p in try fs.writeAtomically(bytes, to: p) } } catch { throw .ambiguous(path, "\(error)") }
    }

    public func delete(_ path: String) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: 0, received: 0)
        do { try FileCoordination.run(p, .deleting) { p in try fs.removeIfPresent(p) } } catch { throw .ambiguous(path, "\(error)") }
    }

    public func makeFolder(_ path: String) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: 0, received: 0)
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try fs.ensureDirectory(p)
        } catch { throw .ambiguous(path, "\(error)") }
    }
}
