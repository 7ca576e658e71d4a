// Test support: temporary libraries, sample strokes, and a file system wrapper that counts calls
// and injects errors.

import Foundation
import LulucatInk
@testable import LulucatStore
import LulucatStoreSQLite
import LulucatStoreThumbnails
import LulucatStoreTesting
#if canImport(Glibc)
import Glibc
#endif

/// A fresh temporary folder, removed when the value is released. Every library the tests make
/// has the SQLite engine and draws thumbnails (suites that use them also enable them in their init).
final class TemporaryFolder: @unchecked Sendable {
    let path: String
    init() {
        Library.enableSQLiteEngine()
        Library.enableThumbnails()
        path = NSTemporaryDirectory() + "lnote-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Wraps the real file system: counts opens and writes per path, and fails chosen calls.
final class InstrumentedFileSystem: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var _reads: [String] = []
    private var _writes: [String] = []
    private var fdPaths: [Int32: String] = [:]
    /// When set, any write/sync/rename whose path contains this string fails with `failErrno`.
    var failPathContaining: String?
    var failErrno: Int32 = ENOSPC

    init() { super.init(PosixFileSystem()) }

    var readOpens: [String] { lock.withLock { _reads } }
    /// Paths of files created for writing (temporary files are named after their target).
    var writtenFiles: [String] { lock.withLock { _writes } }
    func resetCounts() { lock.withLock { _reads = []; _writes = [] } }

    private func shouldFail(_ path: String) -> Bool {
        lock.withLock { failPathContaining.map { path.contains($0) } ?? false }
    }

    override func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        if mode != .read, shouldFail(path) { throw FileError("open", path: path, errno: failErrno) }
        let fd = try base.open(path, mode)
        lock.withLock {
            fdPaths[fd.rawValue] = path
            if mode == .read { _reads.append(path) } else { _writes.append(path) }
        }
        return fd
    }
    override func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        let path = lock.withLock { fdPaths[fd.rawValue] ?? "" }
        if shouldFail(path) { throw FileError("write", path: path, errno: failErrno) }
        try base.write(fd, bytes)
    }
    override func close(_ fd: FileDescriptor) throws(FileError) {
        lock.withLock { fdPaths[fd.rawValue] = nil }
        try base.close(fd)
    }
    override func rename(_ from: String, to: String) throws(FileError) {
        if shouldFail(to) { throw FileError("rename", path: to, errno: failErrno) }
        try base.rename(from, to: to)
    }
}
