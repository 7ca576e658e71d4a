// The content database of the SQLite engine: `<package>/content.sqlite`, one connection, opened
// with the pragmas docs/sqlite-engine.md chooses, closed with a checked TRUNCATE checkpoint.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore

/// The pages, strokes, images and unknown elements of one document, in one SQLite database.
///
/// ```swift
/// let store = try SQLiteContentStore(packageDirectory: packageURL)
/// try store.applyChanges(to: pageID, [.append([.stroke(stroke)])])   // one INSERT, one transaction
/// let content = try store.loadPage(pageID)
/// try store.close()                                                   // checkpoints: one file again
/// ```
///
/// Not `Sendable`: the document's actor owns it. Every call that writes is one transaction.
package final class SQLiteContentStore {
    /// The database's file name inside a document package.
    package static let fileName = DocumentPackage.contentDatabaseFileName

    /// How to open the database file.
    package enum OpenMode: Sendable {
        /// The file must exist (a document already using the SQLite engine).
        case openExisting
        /// Created with the current schema when missing.
        case openOrCreate
    }

    /// The knobs docs/sqlite-engine.md measured. The defaults are the engine's choice.
    package struct Configuration: Sendable {
        /// FULL: a save that returned survives a power loss (the WAL is synced at each commit).
        package var synchronous: SynchronousLevel = .full
        /// Page size of a new database. 4 KiB (schema 3): a document at rest is mostly small
        /// compact rows, and every table or index costs at least one page (an empty database is 9
        /// pages: 36 KiB, against 224 KiB at 16 KiB); the seed's commit, in fixed16 BLOBs that
        /// overflow either way, stays within its bound (docs/sqlite-engine.md §3.3, §10).
        package var pageSize: Int = 4_096
        /// After a checkpoint resets the WAL, the file is truncated back to at most this size.
        /// Kept equal to the autocheckpoint threshold: while a document is open, the WAL file
        /// keeps its blocks and the next save overwrites them instead of growing the file.
        package var journalSizeLimit: Int64 = 16 << 20
        /// A commit that leaves the WAL beyond this many bytes checkpoints it (passively) itself,
        /// so the WAL stays bounded even if nobody calls `checkpointTruncate()` at idle. 16 MiB:
        /// far above one page's save, so a normal save never pays for a checkpoint.
        package var walAutocheckpointBytes: Int = 16 << 20
        /// How long a statement waits for another connection's lock before `.inUse`.
        package var busyTimeoutMilliseconds: Int32 = 1_000
        /// WAL is the engine's mode. DELETE (a rollback journal) is here only so the benchmark can
        /// measure the alternative docs/sqlite-engine.md compares; close() checkpoints only in WAL.
        package var journalMode: JournalMode = .wal
        /// The page cache in KiB. 4 MiB: a save larger than that spills its dirty pages into the
        /// WAL before COMMIT (the same frames, written earlier, still one sync), and the cache
        /// recycles warm memory instead of touching fresh memory for every page: a 16 MiB cache
        /// cost a 5.4 MB save about 2 ms more CPU and reading it back 2.5x the time
        /// (docs/sqlite-engine.md §10.2).
        package var cacheSizeKiB: Int = 4_096
        /// Bytes of the database file read through a memory map (`PRAGMA mmap_size`); 0: `pread`.
        /// Off: reads got about 1.6x faster with it, but an I/O error or a file shortened behind
        /// our back becomes SIGBUS (a crash) instead of an error (docs/sqlite-engine.md §6).
        package var memoryMapBytes: Int64 = 0
        /// The WAL write buffer (docs/sqlite-engine.md §6.1): SQLite writes each WAL frame as two
        /// write() calls; through our VFS shim consecutive frames reach the file in pieces of this
        /// many bytes (at most 64 KiB), written out before every sync, read or size query of the WAL. Used only with
        /// WAL and synchronous FULL or EXTRA, where every commit syncs (so a commit is in the file
        /// before other connections can see it, and a write error fails that commit); 0 turns it off.
        package var walWriteBufferBytes: Int = 64 << 10
        /// Early writeback of the WAL (docs/sqlite-engine.md §6.2): with the write buffer on, the
        /// kernel is told to start writing the WAL out every this many bytes, so the commit's
        /// sync could wait for less while SQLite still builds the later frames; 0 turns it off.
        /// Off: on this loaded machine it made the seed's commit slower (the writeback calls
        /// block on a busy disk). Linux only; the commit still syncs (durability unchanged).
        package var walWritebackBytes: Int = 0
        /// Whether `close()` recodes fixed16 stroke rows in the compact codec first (§3.3). Off
        /// only for benchmarks that measure the commit alone.
        package var compactsAtClose: Bool = true
        package init() {}

        /// Whether this configuration buffers WAL writes.
        package var buffersWALWrites: Bool {
            walWriteBufferBytes > 0 && journalMode == .wal && synchronous.rawValue >= SynchronousLevel.full.rawValue
        }
    }

    /// The database file.
    package let path: String
    package let configuration: Configuration
    /// Opened read-only because the database's place cannot be written (a read-only volume):
    /// reads work, writes fail with SQLite's read-only error, closing does not checkpoint.
    package let isReadOnly: Bool
    let connection: Connection
    /// The connection is an in-memory copy of the file (a reader's open of an older schema, which
    /// was brought up to date there): nothing it does reaches the file.
    package let keepsFileUnchanged: Bool
    /// Opened by a reader (`readOnly`, or a place that cannot be written): it never migrates the
    /// file, and reads a version-3 file as it is.
    let isReader: Bool
    /// Whether the WAL write buffer is on (only through SQLite's own I/O: see `init`).
    let usesWALWriteBuffer: Bool
    /// Where the last `save` spent its time (`lnote-dev bench sqlite` prints it).
    package internal(set) var lastSave = SaveBreakdown()

    /// What the WAL write buffer's VFS shim counted on this connection (nil when the connection
    /// does not go through it: buffer off, NORMAL, or another file system).
    package func walStatistics() -> WALWriteStatistics? {
        usesWALWriteBuffer ? try? connection.walWriteStatistics() : nil
    }

    /// The parts of one save, in nanoseconds of the monotonic clock: preparing its statements,
    /// validating, coding and checksumming its rows, SQLite's inserts (record building, b-tree
    /// and overflow pages, spilling pages into the WAL), the COMMIT (the WAL's last frames, its
    /// checksums and sync), and the whole.
    package struct SaveBreakdown: Sendable, Equatable {
        package var prepare: UInt64 = 0
        package var validateAndChecksum: UInt64 = 0
        package var insert: UInt64 = 0
        package var commit: UInt64 = 0
        package var total: UInt64 = 0
        package init() {}
        static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
    }

    /// Opens `<packageDirectory>/content.sqlite`.
    package convenience init(packageDirectory: URL, mode: OpenMode = .openOrCreate,
                            configuration: Configuration = Configuration()) throws(SQLiteEngineError) {
        try self.init(path: packageDirectory.appendingPathComponent(Self.fileName).path, mode: mode,
                      configuration: configuration)
    }

    /// Opens (or creates) the content database at `path`, sets its pragmas and brings its schema
    /// to the current version.
    ///
    /// - Parameter fileSystem: where the database's files are. nil or `PosixFileSystem`: SQLite's
    ///   own I/O on the real disk (through the WAL write buffer when configured). Any other: every
    ///   file operation goes through it (`SQLiteFileSystemVFS`), without the WAL write buffer.
    /// - Throws: `SQLiteEngineError`: `.missing`, `.corrupt` (not a database or damaged),
    ///   `.newerSchema`, `.unexpectedSchema`, `.inUse`, or `.database` for anything else.
    /// - Parameter readOnly: a reader's open (`ReadOnlySession`): the file is never changed. An
    ///   older schema is brought up to date in a private in-memory copy, not in the file; through
    ///   a file system other than `PosixFileSystem` the connection is read-only (its place may
    ///   refuse writes, as a read-only volume does).
    package init(path: String, mode: OpenMode = .openOrCreate,
                configuration: Configuration = Configuration(), fileSystem: (any FileSystem)? = nil,
                readOnly: Bool = false) throws(SQLiteEngineError) {
        self.path = path
        self.configuration = configuration
        let direct = SQLiteFileSystemVFS.isDirect(fileSystem)
        usesWALWriteBuffer = direct && configuration.buffersWALWrites
        if direct {
            // SQLite opens the file itself: a FIFO, device or link there (or a linked folder on the
            // way, inside a package) is refused first, through the file layer's walk.
            let kind: FileKind?
            do { kind = try PosixFileSystem().info(path)?.kind } catch {
                throw .database(file: path, SQLiteError(extendedCode: ResultCode.cantOpen.rawValue, message: "\(error)", path: path))
            }
            if let kind, kind != .file {
                throw .database(file: path, SQLiteError(extendedCode: ResultCode.cantOpen.rawValue,
                                                        message: "\(path) is not a regular file (\(kind)): refused", path: path))
            }
        }
        if mode == .openExisting {
            let exists: Bool
            if direct { exists = FileManager.default.fileExists(atPath: path) } else {
                do { exists = try fileSystem!.info(path) != nil } catch {
                    throw .database(file: path, SQLiteError(extendedCode: ResultCode.ioError.rawValue, message: "\(error)", path: path))
                }
            }
            if !exists { throw .missing(file: path) }
        }
        var flags: OpenFlags = [.readWrite, .noMutex, .noFollow]
        if mode == .openOrCreate { flags.insert(.create) }
        // A document on a read-only volume (or in a folder this user cannot write) is still read:
        // read-only, without the pragmas that write, and immutable when no WAL is left.
        isReadOnly = mode == .openExisting && (direct ? Self.isReadOnlyPlace(path) : readOnly)
        isReader = isReadOnly || (readOnly && mode == .openExisting)
        var opened: Connection
        do throws(SQLiteError) {
            if isReadOnly {
                let wal: Int
                if direct { wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0 } else {
                    wal = Int((try? fileSystem!.info(path + "-wal"))??.size ?? 0)
                }
                let uri = Self.fileURI(path, query: wal == 0 ? "immutable=1" : "mode=ro")
                let readOnlyFlags: OpenFlags = [.readOnly, .noMutex, .noFollow, OpenFlags(rawValue: 0x40)]  // SQLITE_OPEN_URI
                if direct { opened = try Connection(path: uri, flags: readOnlyFlags) } else {
                    opened = try Connection(path: uri, flags: readOnlyFlags, vfs: SQLiteFileSystemVFS.vfs(for: fileSystem!))
                }
            } else if direct {
                opened = try Connection(path: path, flags: flags,
                                        vfs: configuration.buffersWALWrites ? CoalescingVFS.name : nil)
            } else {
                opened = try Connection(path: path, flags: flags, vfs: SQLiteFileSystemVFS.vfs(for: fileSystem!))
            }
            // A reader never migrates the file: an older schema is brought up to date in memory.
            // A version-3 file is read as it is (it lacks only the index writes use: prepareSchema).
            if (readOnly || isReadOnly), mode == .openExisting, try opened.userVersion() < Self.oldestReadInPlace {
                let copy = try opened.copyIntoMemory()
                try? opened.close()
                opened = copy
                keepsFileUnchanged = true
            } else {
                keepsFileUnchanged = false
            }
        } catch {
            throw SQLiteEngineError(error, file: path)
        }
        connection = opened
        do {
            try guarded {
                if isReadOnly || keepsFileUnchanged {
                    try connection.execute("PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON")
                } else {
                    try configure()
                }
                try prepareSchema()
            }
        } catch {
            try? connection.close()
            throw error
        }
    }

    private func configure() throws {
        func firstValue(_ sql: String) throws -> Int64 {
            let s = try connection.prepare(sql)
            try s.step()
            return s.int64(at: 0)
        }
        // A database file can come from another device: never let its schema run functions with
        // side effects, and check cell sizes as pages are read.
        try connection.execute("PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON")
        // A deleted row's bytes are zeroed where that costs no I/O (its b-tree page is written
        // anyway): a raw pass over the file (SQLiteFileSalvage) must not find an erased stroke
        // with a valid checksum and bring it back.
        try connection.execute("PRAGMA secure_delete = FAST")
        try connection.setBusyTimeout(milliseconds: configuration.busyTimeoutMilliseconds)
        // Applies only while the file is empty; an existing database keeps its page size.
        try connection.setPageSize(configuration.pageSize)
        // Likewise, only for a new (empty) file: it can give pages back (compactSamples frees most
        // of a recoded stroke's pages). Setting it on an existing file would write its header, and
        // a look such as verify must not write; a version-1 file is converted by one VACUUM
        // (prepareSchema). Reading page_count is also the first read of the file.
        if try firstValue("PRAGMA page_count") == 0 {
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        }
        // The first statement that reads the file: a file that is not a database fails here.
        try connection.setJournalMode(configuration.journalMode)
        try connection.setSynchronous(configuration.synchronous)
        try connection.setJournalSizeLimit(bytes: configuration.journalSizeLimit)
        let pageSize = Int(try connection.pageSize())
        try connection.setWALAutocheckpoint(pages: max(1, configuration.walAutocheckpointBytes / pageSize))
        try connection.setCacheSize(-configuration.cacheSizeKiB)
        if configuration.memoryMapBytes > 0 { try connection.setMemoryMapSize(bytes: configuration.memoryMapBytes) }
        if usesWALWriteBuffer {
            try connection.setWALWriteBuffer(bytes: configuration.walWriteBufferBytes)
            try connection.setWALWriteback(bytes: configuration.walWritebackBytes)
        }
    }

    /// Runs `body`, turning wrapper and format errors into this layer's error.
    func guarded<R>(_ body: () throws -> R) throws(SQLiteEngineError) -> R {
        do {
            return try body()
        } catch let error as SQLiteEngineError {
            throw error
        } catch let error as SQLiteError {
            throw SQLiteEngineError(error, file: path)
        } catch let error as PageFormatError {
            throw .unencodable(error.description)
        } catch {
            throw .database(file: path, SQLiteError(extendedCode: ResultCode.error.rawValue, message: "\(error)", path: path))
        }
    }

    /// Copies every committed change from the WAL into the database file and empties the WAL, so
    /// the database file alone holds the document's content (before a copy or an export, at idle).
    ///
    /// - Throws: `.inUse` when another connection kept the checkpoint from finishing.
    package func checkpointTruncate() throws(SQLiteEngineError) {
        try guarded { _ = try connection.checkpoint(.truncate) }
    }

    /// The idle checkpoint (the session calls it after a save has settled): copies the WAL into
    /// the database file without waiting for readers and without truncating the WAL, so the next
    /// save reuses the WAL file's blocks from its start. Incomplete (a reader) is not an error here.
    @discardableResult
    package func checkpointIdle() throws(SQLiteEngineError) -> CheckpointResult {
        try guarded { try connection.walCheckpoint(.passive) }
    }

    /// `PRAGMA quick_check`: the problems SQLite finds in the file, empty when it is sound.
    ///
    /// - Throws: `.corrupt` when the file cannot even be read.
    package func integrityProblems() throws(SQLiteEngineError) -> [String] {
        try guarded { try connection.quickCheck() }
    }

    /// Writes a consistent one-file copy of the database (WAL content included) to `destination`.
    package func backup(to destination: String) throws(SQLiteEngineError) {
        try guarded { try connection.backup(to: destination) }
    }

    /// Checkpoints (so the database is one file again) and closes the connection. The connection
    /// is closed even when the checkpoint fails; the data is committed either way, and the first
    /// error is thrown.
    package func close() throws(SQLiteEngineError) {
        var first: SQLiteEngineError?
        if configuration.journalMode == .wal && !isReadOnly && !keepsFileUnchanged {
            // Small at rest: the fixed16 rows of this session's saves recoded (compact), their
            // pages released. Not an error when it cannot run (another writer): the rows are
            // valid as they are and the next close recodes them.
            if configuration.compactsAtClose {
                _ = try? compactSamples()
                // Pages a deleted page or an erase freed (compactSamples releases its own).
                if let free = try? freePageCount(), free > 0 { try? releaseFreePages() }
            }
            do { try checkpointTruncate() } catch { first = error }
        }
        do { try connection.close() } catch { first = first ?? SQLiteEngineError(error, file: path) }
        if let first { throw first }
    }
}

extension SQLiteContentStore {
    /// Whether the database file, or its folder, cannot be written: a read-only mount (EROFS,
    /// even for root) or permissions.
    static func isReadOnlyPlace(_ path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        return access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0
    }

    /// `file:` URI of a path, percent-encoded so that `?`, `#` and `%` in folder names stay path.
    static func fileURI(_ path: String, query: String) -> String {
        var out = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out + "?" + query
    }
}
