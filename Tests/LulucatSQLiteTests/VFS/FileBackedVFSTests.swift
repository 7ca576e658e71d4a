// FileBackedVFS over an in-memory backend: the VFS methods SQLite relies on (a short read, the
// in-process locks and WAL index shared by two connections, the VFS going with its last connection).

import Foundation
import Testing
@testable import LulucatSQLite

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// Files as byte arrays, and a log of the calls made (one process, one lock).
final class MemoryBackend: SQLiteFileBackend, @unchecked Sendable {
    private let lock = NSLock()
    private var files: [String: [UInt8]] = [:]
    private var open: [Int64: String] = [:]
    private var next: Int64 = 1
    private(set) var calls: [String] = []

    func bytes(_ path: String) -> [UInt8]? { lock.withLock { files[path] } }
    func setBytes(_ path: String, _ bytes: [UInt8]) { lock.withLock { files[path] = bytes } }
    var openCount: Int { lock.withLock { open.count } }

    private func path(_ h: Int64) throws(SQLiteFileBackendError) -> String {
        guard let p = lock.withLock({ open[h] }) else { throw SQLiteFileBackendError(errno: EBADF) }
        return p
    }

    func open(_ path: String, create: Bool, exclusive: Bool, readOnly: Bool) throws(SQLiteFileBackendError) -> (handle: Int64, created: Bool) {
        lock.lock()
        defer { lock.unlock() }
        do {
            calls.append("open \(path)")
            var created = false
            if files[path] == nil {
                guard create else { throw SQLiteFileBackendError(errno: ENOENT) }
                files[path] = []
                created = true
            } else if exclusive {
                throw SQLiteFileBackendError(errno: EEXIST)
            }
            let h = next
            next += 1
            open[h] = path
            return (h, created)
        }
    }

    func close(_ handle: Int64) throws(SQLiteFileBackendError) { _ = lock.withLock { open.removeValue(forKey: handle) } }

    func read(_ handle: Int64, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SQLiteFileBackendError) -> Int {
        let p = try path(handle)
        return lock.withLock {
            let data = files[p] ?? []
            let n = max(0, min(buffer.count, data.count - Int(offset)))
            if n > 0 { data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) } }
            return n
        }
    }

    func write(_ handle: Int64, at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(SQLiteFileBackendError) {
        let p = try path(handle)
        lock.withLock {
            var data = files[p] ?? []
            let end = Int(offset) + bytes.count
            if data.count < end { data.append(contentsOf: [UInt8](repeating: 0, count: end - data.count)) }
            data.replaceSubrange(Int(offset)..<end, with: bytes)
            files[p] = data
        }
    }

    func truncate(_ handle: Int64, to size: Int64) throws(SQLiteFileBackendError) {
        let p = try path(handle)
        lock.withLock {
            var data = files[p] ?? []
            if data.count > Int(size) { data.removeLast(data.count - Int(size)) } else {
                data.append(contentsOf: [UInt8](repeating: 0, count: Int(size) - data.count))
            }
            files[p] = data
        }
    }

    func sync(_ handle: Int64, dataOnly: Bool) throws(SQLiteFileBackendError) {
        let p = try path(handle)
        lock.withLock { calls.append("sync \(p)") }
    }

    func size(_ handle: Int64) throws(SQLiteFileBackendError) -> Int64 {
        let p = try path(handle)
        return lock.withLock { Int64(files[p]?.count ?? 0) }
    }

    func syncDirectory(_ path: String) throws(SQLiteFileBackendError) { lock.withLock { calls.append("sync directory \(path)") } }

    func remove(_ path: String) throws(SQLiteFileBackendError) {
        lock.lock()
        defer { lock.unlock() }
        calls.append("remove \(path)")
        guard files.removeValue(forKey: path) != nil else { throw SQLiteFileBackendError(errno: ENOENT) }
    }

    func info(_ path: String) throws(SQLiteFileBackendError) -> (isFile: Bool, size: Int64)? {
        lock.withLock { files[path].map { (true, Int64($0.count)) } }
    }
}

@Suite struct FileBackedVFSTests {
    private func openWAL(_ path: String, _ vfs: FileBackedVFS) throws -> Connection {
        let db = try Connection(path: path, vfs: vfs)
        try db.setJournalMode(.wal)
        try db.setSynchronous(.full)
        return db
    }

    @Test("a read past the end is short: zero-filled, SQLITE_IOERR_SHORT_READ")
    func shortRead() throws {
        let backend = MemoryBackend()
        let vfs = try FileBackedVFS(backend)
        let db = try openWAL("/m/a.sqlite", vfs)
        try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        let size = backend.bytes("/m/a.sqlite")!.count
        #expect(size > 0)
        var file: UnsafeMutablePointer<sqlite3_file>?
        #expect(sqlite3_file_control(db.handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK)
        let methods = try #require(file?.pointee.pMethods)
        var buffer = [UInt8](repeating: 0xEE, count: 100)
        let rc = buffer.withUnsafeMutableBytes { methods.pointee.xRead(file, $0.baseAddress, 100, Int64(size - 40)) }
        #expect(rc == 522)  // SQLITE_IOERR_SHORT_READ
        #expect(Array(buffer[0..<40]) == Array(backend.bytes("/m/a.sqlite")![(size - 40)...]))
        #expect(buffer[40...].allSatisfy { $0 == 0 })
        let full = buffer.withUnsafeMutableBytes { methods.pointee.xRead(file, $0.baseAddress, 100, 0) }
        #expect(full == SQLITE_OK)
        #expect(methods.pointee.xSectorSize(file) == 4096)
        #expect(methods.pointee.xDeviceCharacteristics(file) == 0)
        try db.close()
    }

    @Test("two connections share the WAL index and the locks of one VFS")
    func twoConnections() throws {
        let backend = MemoryBackend()
        let vfs = try FileBackedVFS(backend)
        let writer = try openWAL("/m/b.sqlite", vfs)
        try writer.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        let reader = try openWAL("/m/b.sqlite", vfs)
        try reader.setBusyTimeout(milliseconds: 0)
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (2)")
        // The write lock is held: a second writer is refused; a reader sees the last commit.
        #expect(throws: SQLiteError.self) { try reader.execute("BEGIN IMMEDIATE") }
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
        try writer.execute("COMMIT")
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 2)
        // The -shm file is never on the backend: the index is memory of the VFS.
        #expect(backend.bytes("/m/b.sqlite-shm") == nil)
        try reader.close()
        try writer.close()
        // The last close checkpoints and removes the WAL; every file is closed.
        #expect(backend.bytes("/m/b.sqlite-wal") == nil)
        #expect(backend.openCount == 0)
        #expect(backend.calls.contains("sync directory /m"))
    }

    @Test("the VFS is unregistered and its backend released when the last owner goes")
    func lifetime() throws {
        weak var weakBackend: MemoryBackend?
        var name = ""
        do {
            let backend = MemoryBackend()
            weakBackend = backend
            let vfs = try FileBackedVFS(backend)
            name = vfs.name
            #expect(sqlite3_vfs_find(name) != nil)
            let db = try Connection(path: "/m/c.sqlite", vfs: vfs)
            try db.execute("CREATE TABLE t(a)")
            try db.close()
        }
        #expect(name.hasPrefix("lulucat-fs-"))
        #expect(sqlite3_vfs_find(name) == nil)
        #expect(weakBackend == nil)
    }
}
