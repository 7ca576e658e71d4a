// The file layer as the store calls it: each `FileSystem` call with its `FileError` turned into
// `StoreError.file` here, once, at the boundary between the two layers, instead of a bridging
// closure at every call site. Store code writes `try fs.checked.info(path)`; the file layer and
// its test doubles keep their own typed `FileError`.

import Foundation

/// A `FileSystem` whose calls throw `StoreError`. Made by `FileSystem.checked`; holds nothing else.
package struct StoreFiles {
    package let files: any FileSystem

    @inline(__always)
    private func convert<T>(_ body: () throws(FileError) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw .file(error) }
    }

    package func open(_ path: String, _ mode: OpenMode) throws(StoreError) -> FileDescriptor { try convert { () throws(FileError) in try files.open(path, mode) } }
    package func write(_ fd: FileDescriptor, _ bytes: [UInt8]) throws(StoreError) { try convert { () throws(FileError) in try files.write(fd, bytes) } }
    package func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(StoreError) -> Int { try convert { () throws(FileError) in try files.read(fd, into: buffer) } }
    package func seek(_ fd: FileDescriptor, to offset: Int) throws(StoreError) { try convert { () throws(FileError) in try files.seek(fd, to: offset) } }
    package func sync(_ fd: FileDescriptor) throws(StoreError) { try convert { () throws(FileError) in try files.sync(fd) } }
    package func syncData(_ fd: FileDescriptor) throws(StoreError) { try convert { () throws(FileError) in try files.syncData(fd) } }
    package func truncate(_ fd: FileDescriptor, to length: Int) throws(StoreError) { try convert { () throws(FileError) in try files.truncate(fd, to: length) } }
    package func size(_ fd: FileDescriptor) throws(StoreError) -> Int { try convert { () throws(FileError) in try files.size(fd) } }
    package func close(_ fd: FileDescriptor) throws(StoreError) { try convert { () throws(FileError) in try files.close(fd) } }
    package func rename(_ from: String, to: String) throws(StoreError) { try convert { () throws(FileError) in try files.rename(from, to: to) } }
    package func unlink(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.unlink(path) } }
    package func makeDirectory(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.makeDirectory(path) } }
    package func removeDirectory(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.removeDirectory(path) } }
    package func syncDirectory(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.syncDirectory(path) } }
    package func contentsOfDirectory(_ path: String) throws(StoreError) -> [String] { try convert { () throws(FileError) in try files.contentsOfDirectory(path) } }
    package func info(_ path: String) throws(StoreError) -> FileInfo? { try convert { () throws(FileError) in try files.info(path) } }
    package func lock(_ path: String) throws(StoreError) -> FileDescriptor { try convert { () throws(FileError) in try files.lock(path) } }
    package func unlock(_ fd: FileDescriptor) { files.unlock(fd) }

    package func readFile(_ path: String, limit: Int = 1 << 31) throws(StoreError) -> [UInt8] { try convert { () throws(FileError) in try files.readFile(path, limit: limit) } }
    package func writeAtomically(_ bytes: [UInt8], to path: String) throws(StoreError) { try convert { () throws(FileError) in try files.writeAtomically(bytes, to: path) } }
    package func writeRenamedUnsynced(_ bytes: [UInt8], to path: String) throws(StoreError) { try convert { () throws(FileError) in try files.writeRenamedUnsynced(bytes, to: path) } }
    package func writeAtomically(_ data: Data, to path: String) throws(StoreError) { try convert { () throws(FileError) in try files.writeAtomically(data, to: path) } }
    package func ensureDirectory(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.ensureDirectory(path) } }
    package func removeTree(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.removeTree(path) } }
    package func removeIfPresent(_ path: String) throws(StoreError) { try convert { () throws(FileError) in try files.removeIfPresent(path) } }
    package func fileExists(_ path: String) throws(StoreError) -> Bool { try convert { () throws(FileError) in try files.fileExists(path) } }
}

extension FileSystem {
    /// This file system with `StoreError` for its errors (see `StoreFiles`).
    package var checked: StoreFiles { StoreFiles(files: self) }
}
