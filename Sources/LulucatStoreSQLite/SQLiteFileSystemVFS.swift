// SQLite's file I/O through the store's `FileSystem` seam: the backend of a `FileBackedVFS`, and
// one VFS per file system instance, so that under a `SimulatedFileSystem` every byte SQLite writes
// lands in the simulated disk (and in its trace, for the crash checker).

import Foundation
import LulucatSQLite
import LulucatStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FileSystem` calls in the shape SQLite's VFS asks for (positioned reads and writes become a seek
/// and a read or write). Errors carry the seam's errno; the VFS maps it to SQLite's codes.
struct FileSystemSQLiteBackend: SQLiteFileBackend {
    let fileSystem: any FileSystem

    private func call<T>(_ body: () throws(FileError) -> T) throws(SQLiteFileBackendError) -> T {
        do { return try body() } catch { throw SQLiteFileBackendError(errno: error.errno) }
    }

    func open(_ path: String, create: Bool, exclusive: Bool, readOnly: Bool) throws(SQLiteFileBackendError) -> (handle: Int64, created: Bool) {
        try call { () throws(FileError) in
            var created = false
            if create, try fileSystem.info(path) == nil {
                // The seam creates only exclusively; the new file is then reopened for reading too.
                try fileSystem.close(try fileSystem.open(path, .createExclusive))
                created = true
            } else if exclusive {
                throw FileError("open", path: path, errno: EEXIST)
            }
            let fd = try fileSystem.open(path, readOnly ? .read : .readWrite)
            return (Int64(fd.rawValue), created)
        }
    }

    func close(_ handle: Int64) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in try fileSystem.close(Self.fd(handle)) }
    }

    func read(_ handle: Int64, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SQLiteFileBackendError) -> Int {
        try call { () throws(FileError) in
            let fd = Self.fd(handle)
            try fileSystem.seek(fd, to: Int(offset))
            var got = 0
            while got < buffer.count {
                let n = try fileSystem.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[got...]))
                if n == 0 { break }
                got += n
            }
            return got
        }
    }

    func write(_ handle: Int64, at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in
            let fd = Self.fd(handle)
            try fileSystem.seek(fd, to: Int(offset))
            try fileSystem.write(fd, bytes)
        }
    }

    func truncate(_ handle: Int64, to size: Int64) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in try fileSystem.truncate(Self.fd(handle), to: Int(size)) }
    }

    func sync(_ handle: Int64, dataOnly: Bool) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in
            if dataOnly { try fileSystem.syncData(Self.fd(handle)) } else { try fileSystem.sync(Self.fd(handle)) }
        }
    }

    func size(_ handle: Int64) throws(SQLiteFileBackendError) -> Int64 {
        try call { () throws(FileError) in Int64(try fileSystem.size(Self.fd(handle))) }
    }

    func syncDirectory(_ path: String) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in try fileSystem.syncDirectory(path) }
    }

    func remove(_ path: String) throws(SQLiteFileBackendError) {
        try call { () throws(FileError) in try fileSystem.unlink(path) }
    }

    func info(_ path: String) throws(SQLiteFileBackendError) -> (isFile: Bool, size: Int64)? {
        try call { () throws(FileError) in try fileSystem.info(path).map { ($0.kind == .file, Int64($0.size)) } }
    }

    private static func fd(_ handle: Int64) -> FileDescriptor { FileDescriptor(rawValue: Int32(truncatingIfNeeded: handle)) }
}

/// The VFS of each file system instance the SQLite engine is opened on: connections to the same
/// file system share one (its locks and WAL index), and it goes when the last of them closes, so a
/// reopen after a simulated crash starts with a fresh WAL index.
enum SQLiteFileSystemVFS {
    private final class Registry: @unchecked Sendable {
        let mutex = NSLock()
        var entries: [ObjectIdentifier: Weak] = [:]
    }
    private struct Weak { weak var vfs: FileBackedVFS? }
    private static let registry = Registry()

    /// Whether opening on `fileSystem` is today's direct path (SQLite's own VFS on the real disk).
    static func isDirect(_ fileSystem: (any FileSystem)?) -> Bool {
        fileSystem == nil || fileSystem is PosixFileSystem
    }

    /// The VFS for `fileSystem`: the live one of this instance, or a new one.
    static func vfs(for fileSystem: any FileSystem) throws(SQLiteError) -> FileBackedVFS {
        // A file system that is a value has no identity to share: each connection gets its own VFS.
        guard type(of: fileSystem) is AnyClass else { return try FileBackedVFS(FileSystemSQLiteBackend(fileSystem: fileSystem)) }
        let key = ObjectIdentifier(fileSystem as AnyObject)
        registry.mutex.lock()
        defer { registry.mutex.unlock() }
        if let live = registry.entries[key]?.vfs { return live }
        let vfs = try FileBackedVFS(FileSystemSQLiteBackend(fileSystem: fileSystem))
        registry.entries = registry.entries.filter { $0.value.vfs != nil }
        registry.entries[key] = Weak(vfs: vfs)
        return vfs
    }
}
