// A file system that passes every call through and counts the files opened and the bytes written,
// so a test or a benchmark can prove how many files an operation touches and what it writes.

import Foundation

/// Wraps another `FileSystem` and records the paths opened for reading and for writing.
public final class CountingFileSystem: FileSystem, @unchecked Sendable {
    public let base: any FileSystem
    private let lock = NSLock()
    private var reads: [String] = []
    private var writes: [String] = []
    private var written = 0

    public init(_ base: any FileSystem = PosixFileSystem()) { self.base = base }

    /// Paths opened for reading since the last reset, in order.
    public var readOpens: [String] { lock.withLock { reads } }
    /// Paths opened for writing since the last reset, in order.
    public var writeOpens: [String] { lock.withLock { writes } }
    /// Bytes passed to `write` since the last reset.
    public var bytesWritten: Int { lock.withLock { written } }
    public func reset() { lock.withLock { reads = []; writes = []; written = 0 } }

    public func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        let fd = try base.open(path, mode)
        lock.withLock { if mode == .read { reads.append(path) } else { writes.append(path) } }
        return fd
    }
    public func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        try base.write(fd, bytes)
        lock.withLock { written += bytes.count }
    }
    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int { try base.read(fd, into: buffer) }
    public func sync(_ fd: FileDescriptor) throws(FileError) { try base.sync(fd) }
    public func syncData(_ fd: FileDescriptor) throws(FileError) { try base.syncData(fd) }
    public func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError) { try base.truncate(fd, to: length) }
    public func seek(_ fd: FileDescriptor, to offset: Int) throws(FileError) { try base.seek(fd, to: offset) }
    public func size(_ fd: FileDescriptor) throws(FileError) -> Int { try base.size(fd) }
    public func close(_ fd: FileDescriptor) throws(FileError) { try base.close(fd) }
    public func rename(_ from: String, to: String) throws(FileError) { try base.rename(from, to: to) }
    public func unlink(_ path: String) throws(FileError) { try base.unlink(path) }
    public func makeDirectory(_ path: String) throws(FileError) { try base.makeDirectory(path) }
    public func removeDirectory(_ path: String) throws(FileError) { try base.removeDirectory(path) }
    public func syncDirectory(_ path: String) throws(FileError) { try base.syncDirectory(path) }
    public func contentsOfDirectory(_ path: String) throws(FileError) -> [String] { try base.contentsOfDirectory(path) }
    public func info(_ path: String) throws(FileError) -> FileInfo? { try base.info(path) }
    public func lock(_ path: String) throws(FileError) -> FileDescriptor { try base.lock(path) }
    public func unlock(_ fd: FileDescriptor) { base.unlock(fd) }
}
