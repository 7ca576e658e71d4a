// A file system that passes every call through and counts the files opened and the bytes written,
// so a test or a benchmark can prove how many files an operation touches and what it writes.

import Foundation
import LulucatStore

/// Wraps another `FileSystem` and records the paths opened for reading and for writing, and the
/// folders listed.
public final class CountingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var reads: [String] = []
    private var writes: [String] = []
    private var written = 0
    private var listed: [String] = []

    public override init(_ base: any FileSystem = PosixFileSystem()) { super.init(base) }

    /// Paths opened for reading since the last reset, in order.
    public var readOpens: [String] { lock.withLock { reads } }
    /// Paths opened for writing since the last reset, in order.
    public var writeOpens: [String] { lock.withLock { writes } }
    /// Bytes passed to `write` since the last reset.
    public var bytesWritten: Int { lock.withLock { written } }
    /// Folders listed (`contentsOfDirectory`) since the last reset, in order.
    public var listings: [String] { lock.withLock { listed } }
    public func reset() { lock.withLock { reads = []; writes = []; written = 0; listed = [] } }

    public override func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        let fd = try base.open(path, mode)
        lock.withLock { if mode == .read { reads.append(path) } else { writes.append(path) } }
        return fd
    }
    public override func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        let names = try base.contentsOfDirectory(path)
        lock.withLock { listed.append(path) }
        return names
    }
    public override func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        try base.write(fd, bytes)
        lock.withLock { written += bytes.count }
    }
}
