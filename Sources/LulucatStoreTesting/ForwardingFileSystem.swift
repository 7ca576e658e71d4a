// The one base for file system test doubles (LevelDB's EnvWrapper): every call goes to `base`, so
// a double overrides only the calls it counts or fails, and a call added to `FileSystem` is added
// here once instead of in every double.

import Foundation
import LulucatStore

open class ForwardingFileSystem: FileSystem, @unchecked Sendable {
    public let base: any FileSystem

    public init(_ base: any FileSystem = PosixFileSystem()) { self.base = base }

    open func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor { try base.open(path, mode) }
    open func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) { try base.write(fd, bytes) }
    open func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int { try base.read(fd, into: buffer) }
    open func sync(_ fd: FileDescriptor) throws(FileError) { try base.sync(fd) }
    open func syncData(_ fd: FileDescriptor) throws(FileError) { try base.syncData(fd) }
    open func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError) { try base.truncate(fd, to: length) }
    open func seek(_ fd: FileDescriptor, to offset: Int) throws(FileError) { try base.seek(fd, to: offset) }
    open func size(_ fd: FileDescriptor) throws(FileError) -> Int { try base.size(fd) }
    open func close(_ fd: FileDescriptor) throws(FileError) { try base.close(fd) }
    open func rename(_ from: String, to: String) throws(FileError) { try base.rename(from, to: to) }
    open func unlink(_ path: String) throws(FileError) { try base.unlink(path) }
    open func makeDirectory(_ path: String) throws(FileError) { try base.makeDirectory(path) }
    open func removeDirectory(_ path: String) throws(FileError) { try base.removeDirectory(path) }
    open func syncDirectory(_ path: String) throws(FileError) { try base.syncDirectory(path) }
    open func contentsOfDirectory(_ path: String) throws(FileError) -> [String] { try base.contentsOfDirectory(path) }
    open func info(_ path: String) throws(FileError) -> FileInfo? { try base.info(path) }
    open func lock(_ path: String) throws(FileError) -> FileDescriptor { try base.lock(path) }
    open func unlock(_ fd: FileDescriptor) { base.unlock(fd) }
}
