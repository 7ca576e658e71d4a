// The WAL write buffer: our VFS shim (Sources/CLulucatVFS, docs/sqlite-engine.md §6.1) that hands a
// WAL's frames to the file in large pieces instead of two write() calls a frame.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import CLulucatVFS

/// The VFS that can coalesce a WAL's writes. A connection opened through it behaves exactly as one
/// opened through the default VFS until `Connection.setWALWriteBuffer(bytes:)` turns the buffer on.
package enum CoalescingVFS {
    /// The name to open a connection with (`Connection(path:flags:vfs:)`).
    package static let name = LULUCAT_VFS_NAME

    /// Registers the VFS (once per process; later calls return at once).
    ///
    /// - Throws: `SQLiteError` when SQLite refuses the registration.
    package static func register() throws(SQLiteError) {
        let rc = lulucat_vfs_register()
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "cannot register the \(name) VFS: \(String(cString: sqlite3_errstr(rc)))")
        }
    }
}

/// What a connection's WAL files have done through `CoalescingVFS` since it opened.
package struct WALWriteStatistics: Equatable, Sendable {
    /// `xWrite` calls SQLite made on the WAL, and their bytes.
    package var writeCalls: UInt64
    package var writeBytes: UInt64
    /// Writes handed to the operating system for the WAL.
    package var fileWrites: UInt64
    /// Buffers written out at a WAL index barrier: commits published without a sync before them.
    package var barrierFlushes: UInt64
    /// Nanoseconds in the WAL's write(2) calls and in its syncs, and how many syncs.
    package var writeNanoseconds: UInt64 = 0
    package var syncs: UInt64 = 0
    package var syncNanoseconds: UInt64 = 0
    /// The database file's own writes and syncs (checkpoints), and their nanoseconds.
    package var databaseWrites: UInt64 = 0
    package var databaseWriteBytes: UInt64 = 0
    package var databaseSyncs: UInt64 = 0
    package var databaseNanoseconds: UInt64 = 0
    /// Early writebacks started on the WAL (`setWALWriteback(bytes:)`).
    package var writebacks: UInt64 = 0

    package init(writeCalls: UInt64, writeBytes: UInt64, fileWrites: UInt64, barrierFlushes: UInt64) {
        self.writeCalls = writeCalls
        self.writeBytes = writeBytes
        self.fileWrites = fileWrites
        self.barrierFlushes = barrierFlushes
    }
}

extension Connection {
    /// What this connection's WAL files have done through `CoalescingVFS`.
    ///
    /// - Throws: `SQLiteError` when the connection was not opened through `CoalescingVFS`.
    package func walWriteStatistics() throws(SQLiteError) -> WALWriteStatistics {
        let db = try openHandle()
        var s = lulucat_vfs_stats()
        let rc = sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_STATS, &s)
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "WAL write statistics need a connection opened through the \(CoalescingVFS.name) VFS", path: path)
        }
        var out = WALWriteStatistics(writeCalls: s.wal_write_calls, writeBytes: s.wal_write_bytes,
                                     fileWrites: s.wal_file_writes, barrierFlushes: s.barrier_flushes)
        out.writeNanoseconds = s.wal_write_ns
        out.syncs = s.wal_syncs
        out.syncNanoseconds = s.wal_sync_ns
        out.databaseWrites = s.db_writes
        out.databaseWriteBytes = s.db_write_bytes
        out.databaseSyncs = s.db_syncs
        out.databaseNanoseconds = s.db_io_ns
        out.writebacks = s.wal_writebacks
        return out
    }

    /// Sets the WAL write buffer of this connection's database: `bytes` > 0 collects consecutive
    /// WAL writes into a buffer of that size (at most 65,536: the unix VFS writes at
    /// most 128 KiB - 1 bytes in one call), 0 turns it off. The buffer is
    /// written out before every sync, read, truncate or size query of the WAL, and before a commit
    /// is published to other connections, so nothing but the number of write() calls changes.
    ///
    /// - Returns: the setting now in force.
    /// - Throws: `SQLiteError` (`.notFound`-coded) when the connection was not opened through
    ///   `CoalescingVFS`.
    @discardableResult
    package func setWALWriteBuffer(bytes: Int) throws(SQLiteError) -> Int {
        try walWriteBufferControl(Int32(clamping: max(0, bytes)))
    }

    /// Starts the kernel's writeback of this database's WAL every `bytes` contiguous bytes written
    /// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`: no wait, no metadata, no error consumed),
    /// so that a commit's sync finds most of its frames on their way already; 0 turns it off.
    /// Durability is unchanged: the commit still syncs the WAL.
    ///
    /// - Returns: the setting now in force (always 0 where the system has no sync_file_range).
    /// - Throws: `SQLiteError` when the connection was not opened through `CoalescingVFS`.
    @discardableResult
    package func setWALWriteback(bytes: Int) throws(SQLiteError) -> Int {
        let db = try openHandle()
        var value = Int32(clamping: max(0, bytes))
        let rc = sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_WRITEBACK, &value)
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "WAL writeback needs a connection opened through the \(CoalescingVFS.name) VFS", path: path)
        }
        return Int(value)
    }

    /// The WAL write buffer in force (0: off).
    package func walWriteBuffer() throws(SQLiteError) -> Int {
        try walWriteBufferControl(-1)
    }

    private func walWriteBufferControl(_ value: Int32) throws(SQLiteError) -> Int {
        let db = try openHandle()
        var bytes = value
        let rc = sqlite3_file_control(db, "main", LULUCAT_FCNTL_WAL_BUFFER, &bytes)
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "the WAL write buffer needs a connection opened through the \(CoalescingVFS.name) VFS", path: path)
        }
        return Int(bytes)
    }
}
