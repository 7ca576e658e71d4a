// A remote that is a mounted folder (a USB drive, a Syncthing folder, iCloud Drive's container on
// Apple, where every access goes through NSFileCoordinator: FileCoordination.swift). Writes are our
// atomic durable writes.

import Foundation
import LulucatStore

/// A remote that is a folder on this device (a USB drive, a Syncthing or iCloud Drive folder): writes are atomic and durable, ETags come from each file's inode, size and modification time.
public struct FolderRemote: Remote {
    /// The folder's absolute path, without a trailing slash.
    public let root: String
    /// `file://` and the folder's path.
    public var identity: String { "file://" + root }
    /// Requests made and bytes moved (each call counts as one request).
    public let statistics = RemoteStatistics()
    let fs: any FileSystem

    /// A remote at the folder `root` (made, with its parents, by the first `makeFolder`).
    public init(root: String) { self.init(root: root, fileSystem: PosixFileSystem()) }

    /// Through another file system (tests: one that watches or cuts a write). Entries' ETags come
    /// from its `stamp` (inode, size, modification time), so it should report one.
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

    /// The entries of `folder` with safe names; `.notFound` when it is not there, a refusal
    /// (`RemoteRefusal.notAFolder`) when it, or the remote's folder, is a file.
    public func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        try await list(folder, maxBytes: RemoteLimits.listingBytes)
    }

    /// The entries of `folder`, each counted as its name plus 64 bytes: more than `maxBytes` is
    /// `.invalidResponse`, as a listing reply that large would be.
    public func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry] {
        let dir = try absolute(folder)
        statistics.record(sent: 0, received: 0)
        let info: FileInfo?
        do { info = try fs.info(dir) } catch {
            if let file = fileInTheWay(to: folder, including: true) { throw .refused(folder, .notAFolder(file)) }
            throw .failed(folder, "\(error)")
        }
        guard info?.kind == .directory else {
            if let file = fileInTheWay(to: folder, including: true) { throw .refused(folder, .notAFolder(file)) }
            throw .notFound(folder)
        }
        let names: [String]
        do { names = try fs.contentsOfDirectory(dir) } catch { throw .failed(folder, "\(error)") }
        let listed = names.reduce(0) { $0 + $1.utf8.count + 64 }
        guard listed <= maxBytes else { throw .invalidResponse(folder, "a listing of \(listed) bytes, more than \(maxBytes)") }
        var out: [RemoteEntry] = []
        for name in names where RemotePath.isSafeName(name) {
            guard let st = try? fs.stamp(dir + "/" + name) else { continue }
            out.append(RemoteEntry(name: name, etag: "\"\(st.inode)-\(st.size)-\(st.modifiedNanoseconds)\"", size: st.size,
                                   isFolder: st.kind == .directory))
        }
        return out
    }

    /// A file's bytes (no ETag: the listing gives it); `.notFound`, or `.invalidResponse` when larger than `maxBytes`.
    public func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let p = try absolute(path)
        // A read that finds nothing, or too much, was still a request.
        var bytes: [UInt8] = []
        defer { statistics.record(sent: 0, received: bytes.count) }
        bytes = try FileCoordination.run(p, .reading) { (p) throws(RemoteError) in
            let info: FileInfo?
            do { info = try fs.info(p) } catch { throw .failed(path, "\(error)") }
            guard let info, info.kind == .file else { throw .notFound(path) }
            guard info.size <= maxBytes else { throw .invalidResponse(path, "\(info.size) bytes, more than \(maxBytes)") }
            do { return try fs.readFile(p, limit: maxBytes) } catch { throw .failed(path, "\(error)") }
        }
        return (bytes, nil)
    }

    /// Replaces a file whole, atomically and durably; a failure is `.ambiguous`, but a file where a
    /// folder on the way should be, which is refused as such (see `writeFailure`).
    public func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: bytes.count, received: 0)
        // A failed local write leaves the old file or the new one (rename is the commit point).
        try FileCoordination.run(p, .writing) { (p) throws(RemoteError) in
            do throws(FileError) { try fs.writeAtomically(bytes, to: p) } catch { throw writeFailure(path, error) }
        }
    }

    /// Removes a file; one already gone is success.
    public func delete(_ path: String) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: 0, received: 0)
        try FileCoordination.run(p, .deleting) { (p) throws(RemoteError) in
            do throws(FileError) { try fs.removeIfPresent(p) } catch { throw writeFailure(path, error) }
        }
    }

    /// Creates a folder (and the root with its parents); one that exists is success.
    /// The root itself is never created here: a missing root (an unmounted drive, a mistyped
    /// path) fails the round instead of filling an empty folder where the drive should be
    /// (`createRoot()` makes it, when the person asked).
    public func makeFolder(_ path: String) async throws(RemoteError) {
        let p = try absolute(path)
        statistics.record(sent: 0, received: 0)
        // "root/." so that a root that is a symbolic link to a folder (a synced folder elsewhere)
        // is followed, as every path under it is.
        guard (try? fs.info(root + "/."))??.kind == .directory else {
            if let file = fileInTheWay(to: "", including: false) { throw .refused(path, .notAFolder(file)) }
            throw .failed(path, "the remote folder \(root) does not exist (an unmounted drive, or a mistyped path?)")
        }
        do throws(FileError) { try fs.ensureDirectory(p) } catch { throw writeFailure(path, error, makingFolder: true) }
    }

    /// A write's failure. When a file is where a folder must be (a folder on the way to `path` is
    /// a file: ENOTDIR; or, making a folder, something else is where it goes), nothing can have
    /// been written: a refusal naming that file (`RemoteRefusal.notAFolder`), never a write that may
    /// have happened. Anything else may or may not have happened: `.ambiguous`.
    func writeFailure(_ path: String, _ error: FileError, makingFolder: Bool = false) -> RemoteError {
        guard error.errno == ENOTDIR || (makingFolder && error.errno == EEXIST) else { return .ambiguous(path, "\(error)") }
        if let file = fileInTheWay(to: path, including: makingFolder) { return .refused(path, .notAFolder(file)) }
        return .failed(path, "a folder on the way to it in the remote folder is a file, not a folder (\(error))")
    }

    /// The remote's folder, or the first folder on the way from it to `path` (`path` itself when
    /// `including`), that is a file or something else than a folder; nil when none is.
    func fileInTheWay(to path: String, including: Bool) -> String? {
        func isFile(_ p: String) -> Bool {
            guard let kind = (try? fs.info(p))??.kind else { return false }
            return kind == .file || kind == .other
        }
        if isFile(root) { return root }
        let parts = path.split(separator: "/").map(String.init)
        var prefix = root
        for part in including ? parts : Array(parts.dropLast()) {
            prefix += "/" + part
            if isFile(prefix) { return prefix }
        }
        return nil
    }

    /// Makes the root folder and the folders above it, as `mkdir -p` would (`lnote remote add
    /// FOLDER --create`); a file on the way is refused as such (`RemoteRefusal.notAFolder`).
    public func createRoot() throws(RemoteError) {
        var prefix = ""
        do throws(FileError) {
            for part in root.split(separator: "/") {
                prefix += "/" + part
                let kind = try fs.info(prefix)?.kind
                if kind == nil { try fs.ensureDirectory(prefix) } else if kind == .file || kind == .other {
                    throw FileError("create directory", path: prefix, errno: ENOTDIR)
                }
            }
        } catch {
            if error.errno == ENOTDIR || error.errno == EEXIST, let kind = (try? fs.info(prefix))??.kind, kind == .file || kind == .other {
                throw .refused(root, .notAFolder(prefix))
            }
            throw .failed(root, "\(error)")
        }
    }
}
