// A SQLite VFS whose file operations are a Swift `SQLiteFileBackend` (the store's `FileSystem`
// seam), so a database can live on a simulated disk. The C half is Sources/CLulucatVFS/lulucat_fsvfs.c.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import CLulucatVFS

/// A failed backend call: the errno the file system returned. The VFS turns it into SQLite's code
/// for the operation (ENOSPC and EDQUOT: `SQLITE_FULL`; otherwise `SQLITE_IOERR_WRITE`, `_FSYNC`, ...).
package struct SQLiteFileBackendError: Error, Sendable, Equatable {
    package var errno: Int32
    package init(errno: Int32) { self.errno = errno }
}

/// The file operations a `FileBackedVFS` makes. Handles are the backend's own; paths are the
/// database paths as given to `Connection` (plus SQLite's "-wal" and "-journal" suffixes).
package protocol SQLiteFileBackend: Sendable {
    /// Opens `path` for reading and writing (reading only with `readOnly`); with `create`, creates a
    /// missing file (and says so); with `exclusive`, an existing file is an error (EEXIST).
    func open(_ path: String, create: Bool, exclusive: Bool, readOnly: Bool) throws(SQLiteFileBackendError) -> (handle: Int64, created: Bool)
    func close(_ handle: Int64) throws(SQLiteFileBackendError)
    /// Reads up to `buffer.count` bytes at `offset`; returns how many (fewer only at the end of the file).
    func read(_ handle: Int64, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SQLiteFileBackendError) -> Int
    func write(_ handle: Int64, at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(SQLiteFileBackendError)
    func truncate(_ handle: Int64, to size: Int64) throws(SQLiteFileBackendError)
    /// fsync, or fdatasync with `dataOnly`.
    func sync(_ handle: Int64, dataOnly: Bool) throws(SQLiteFileBackendError)
    func size(_ handle: Int64) throws(SQLiteFileBackendError) -> Int64
    func syncDirectory(_ path: String) throws(SQLiteFileBackendError)
    func remove(_ path: String) throws(SQLiteFileBackendError)
    /// What is at `path`: nil when nothing, else whether it is a regular file, and its size.
    func info(_ path: String) throws(SQLiteFileBackendError) -> (isFile: Bool, size: Int64)?
}

/// A registered VFS over one backend, under a name of its own (`name`). A `Connection` opened with
/// it keeps it alive; it is unregistered when the last owner lets go (and freed once SQLite has
/// closed every file it opened through it). Its WAL index and locks live in memory, per instance.
package final class FileBackedVFS: @unchecked Sendable {
    /// The name SQLite knows it by ("lulucat-fs-<n>").
    package let name: String
    private let raw: OpaquePointer

    /// Registers a new VFS over `backend`.
    ///
    /// - Throws: `SQLiteError` when SQLite refuses the registration.
    package init(_ backend: any SQLiteFileBackend) throws(SQLiteError) {
        let context = Unmanaged.passRetained(BackendBox(backend)).toOpaque()
        var callbacks = Self.callbacks(context)
        var rc: Int32 = SQLITE_OK
        guard let vfs = lulucat_fsvfs_create(&callbacks, &rc) else {
            Unmanaged<BackendBox>.fromOpaque(context).release()
            throw SQLiteError(extendedCode: rc, message: "cannot register a file system VFS: \(String(cString: sqlite3_errstr(rc)))")
        }
        raw = vfs
        name = String(cString: lulucat_fsvfs_name(vfs))
    }

    deinit { lulucat_fsvfs_destroy(raw) }

    /// The callback table: each entry unwraps the backend from the context and calls it.
    private static func callbacks(_ context: UnsafeMutableRawPointer) -> lulucat_fs_callbacks { lulucat_fs_callbacks(
        context: context,
        open: { ctx, path, create, exclusive, readOnly, handle, created in
            backendCall(ctx) { b throws(SQLiteFileBackendError) in
                let r = try b.open(String(cString: path!), create: create != 0, exclusive: exclusive != 0, readOnly: readOnly != 0)
                handle!.pointee = r.handle
                created!.pointee = r.created ? 1 : 0
            }
        },
        close: { ctx, handle in backendCall(ctx) { b throws(SQLiteFileBackendError) in try b.close(handle) } },
        read: { ctx, handle, buffer, amount, offset, got in
            backendCall(ctx) { b throws(SQLiteFileBackendError) in
                got!.pointee = Int32(try b.read(handle, at: offset, into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(amount))))
            }
        },
        write: { ctx, handle, buffer, amount, offset in
            backendCall(ctx) { b throws(SQLiteFileBackendError) in
                try b.write(handle, at: offset, UnsafeRawBufferPointer(start: buffer, count: Int(amount)))
            }
        },
        truncate: { ctx, handle, size in backendCall(ctx) { b throws(SQLiteFileBackendError) in try b.truncate(handle, to: size) } },
        sync: { ctx, handle, dataOnly in backendCall(ctx) { b throws(SQLiteFileBackendError) in try b.sync(handle, dataOnly: dataOnly != 0) } },
        size: { ctx, handle, size in backendCall(ctx) { b throws(SQLiteFileBackendError) in size!.pointee = try b.size(handle) } },
        sync_directory: { ctx, path in backendCall(ctx) { b throws(SQLiteFileBackendError) in try b.syncDirectory(String(cString: path!)) } },
        remove: { ctx, path in backendCall(ctx) { b throws(SQLiteFileBackendError) in try b.remove(String(cString: path!)) } },
        info: { ctx, path, kind, size in
            backendCall(ctx) { b throws(SQLiteFileBackendError) in
                let i = try b.info(String(cString: path!))
                kind!.pointee = Int32(i == nil ? LULUCAT_FS_ABSENT : (i!.isFile ? LULUCAT_FS_FILE : LULUCAT_FS_OTHER))
                size!.pointee = i?.size ?? 0
            }
        },
        release: { ctx in Unmanaged<BackendBox>.fromOpaque(ctx!).release() }
    ) }
}

/// The backend, boxed so the C side can hold it by one pointer.
private final class BackendBox {
    let backend: any SQLiteFileBackend
    init(_ backend: any SQLiteFileBackend) { self.backend = backend }
}

/// Runs a backend call for the C side: 0, or the errno it failed with (EIO when it gave none).
private func backendCall(_ context: UnsafeMutableRawPointer?, _ body: (any SQLiteFileBackend) throws(SQLiteFileBackendError) -> Void) -> Int32 {
    let backend = Unmanaged<BackendBox>.fromOpaque(context!).takeUnretainedValue().backend
    do { try body(backend) } catch { return error.errno == 0 ? 5 /* EIO */ : error.errno }
    return 0
}
