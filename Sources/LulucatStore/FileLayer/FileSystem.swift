// The seam between the store and the operating system: every file system call the store makes.
// The real implementation is `PosixFileSystem`; tests swap in a simulated one to inject faults and
// to build every crash state a run allows.

/// What a path names, as `lstat` sees it (symbolic links are not followed).
public enum FileKind: Sendable, Equatable {
    /// A regular file.
    case file
    /// A folder.
    case directory
    /// A symbolic link (never followed by the store).
    case symlink
    /// Anything else: a FIFO, a socket, a device.
    case other
}

/// The facts of one path.
public struct FileInfo: Sendable, Equatable {
    /// What the path names.
    public var kind: FileKind
    /// The size in bytes (`st_size`; for a folder, whatever the file system reports).
    public var size: Int
    /// The facts of one path, as a `FileSystem` implementation reports them.
    public init(kind: FileKind, size: Int) { self.kind = kind; self.size = size }
}

/// What `FileSystem.stamp` reports: equal stamps mean the file was not written meanwhile.
public struct FileStamp: Sendable, Equatable {
    /// What the path names.
    public var kind: FileKind
    /// The size in bytes.
    public var size: Int
    /// The inode number (0 when the file system cannot say): a file replaced by a rename has a new one.
    public var inode: UInt64
    /// The last modification time (`st_mtim`), in nanoseconds since 1970 (0 when unknown).
    public var modifiedNanoseconds: Int64
    /// The last status change time (`st_ctim`), in nanoseconds since 1970 (0 when unknown).
    public var changedNanoseconds: Int64
    /// A stamp; what the file system cannot report stays 0, so two stamps then compare by kind
    /// and size alone.
    public init(kind: FileKind, size: Int, inode: UInt64 = 0, modifiedNanoseconds: Int64 = 0, changedNanoseconds: Int64 = 0) {
        self.kind = kind
        self.size = size
        self.inode = inode
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
    }
}

extension FileSystem {
    /// The default `stamp`: `info`'s kind and size, with inode and times 0.
    public func stamp(_ path: String) throws(FileError) -> FileStamp? {
        try info(path).map { FileStamp(kind: $0.kind, size: $0.size) }
    }

    /// The default `readEach`: `contentsOfDirectory`, then `readFile` and `info` on each
    /// accepted entry, so a test double sees (and can fail) each call.
    public func readEach(in folder: String, file: String, limit: Int, probe: String,
                         accept: (_ name: UnsafeRawBufferPointer) -> Bool,
                         _ body: (_ name: UnsafeRawBufferPointer, _ bytes: Result<UnsafeRawBufferPointer, FileError>, _ probed: Bool) -> Void) throws(FileError) {
        for var name in try contentsOfDirectory(folder) {
            guard name.withUTF8({ accept(UnsafeRawBufferPointer($0)) }) else { continue }
            let package = folder + "/" + name
            let bytes = Result { () throws(FileError) in try readFile(package + "/" + file, limit: limit) }
            let probed = ((try? info(package + "/" + probe)) ?? nil) != nil
            name.withUTF8 { n in
                switch bytes {
                case .success(let b): b.withUnsafeBytes { body(UnsafeRawBufferPointer(n), .success($0), probed) }
                case .failure(let e): body(UnsafeRawBufferPointer(n), .failure(e), probed)
                }
            }
        }
    }
}

/// An open file of a `FileSystem`, named by its descriptor number.
public struct FileDescriptor: Hashable, Sendable {
    /// The descriptor number (a POSIX file descriptor for `PosixFileSystem`; any number a test
    /// double hands out).
    public var rawValue: Int32
    /// Wraps a descriptor number that a `FileSystem` implementation opened.
    public init(rawValue: Int32) { self.rawValue = rawValue }
}

/// How `open` opens a file.
public enum OpenMode: Sendable, Equatable {
    /// Read only.
    case read
    /// Create a new file for writing; fails with EEXIST when the path exists (O_EXCL).
    case createExclusive
    /// The same, readable and writable by its owner alone from its first byte (mode 0600): for
    /// a secret such as sync's library key.
    case createExclusivePrivate
    /// Open for appending, creating the file when missing.
    case append
    /// Open an existing file for reading and writing (truncating a torn tail, for example).
    case readWrite
}

/// Every file system call the store makes, each wrapped once. Paths are absolute. No call follows a
/// symbolic link at the last component (O_NOFOLLOW), nor at any folder from the package down (the
/// first `*.lnote`, `.lnote-tmp-*` or `.trash` component); `open` and `lock` open only regular
/// files and never wait (a FIFO or a device is refused). A link, FIFO or device where a file or
/// folder should be is a `FileError` whose `found` names it.
public protocol FileSystem: Sendable {
    /// Opens the regular file at `path` as `mode` says (never following a link, never waiting on
    /// a FIFO or a device).
    /// - Throws: `FileError` with the call's errno (ENOENT when missing, EEXIST for an exclusive
    ///   create of an existing path), or with `found` set when something other than a regular
    ///   file is there.
    func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor
    /// Writes all of `bytes` at the current offset, looping over short writes.
    func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError)
    /// Reads up to `buffer.count` bytes at the current offset; returns how many (0 at the end).
    func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int
    /// Makes the file's data and metadata durable (F_FULLFSYNC on Apple).
    func sync(_ fd: FileDescriptor) throws(FileError)
    /// Makes the file's data durable (fdatasync): enough after an append to an existing file.
    func syncData(_ fd: FileDescriptor) throws(FileError)
    /// Sets the file's length to `length` bytes (cutting a torn tail, or extending with zeros).
    func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError)
    /// Moves the file offset to `offset` from the start (lseek SEEK_SET): the journal overwrites its
    /// preallocated zeros in place.
    func seek(_ fd: FileDescriptor, to offset: Int) throws(FileError)
    /// The file's current size in bytes (`fstat`).
    func size(_ fd: FileDescriptor) throws(FileError) -> Int
    /// Closes the descriptor. An error here may mean data written before was not stored (NFS, a
    /// full disk): callers that need durability `sync` first.
    func close(_ fd: FileDescriptor) throws(FileError)

    /// Moves `from` to `to` atomically, replacing a file at `to` (POSIX `rename`); durable only
    /// after `syncDirectory` of the folders involved.
    func rename(_ from: String, to: String) throws(FileError)
    /// Removes the file (or link) at `path`.
    /// - Throws: `FileError` with ENOENT when nothing is there.
    func unlink(_ path: String) throws(FileError)
    /// Makes a folder at `path` (its parent must exist).
    /// - Throws: `FileError` with EEXIST when something is already there.
    func makeDirectory(_ path: String) throws(FileError)
    /// Removes the empty folder at `path`.
    /// - Throws: `FileError` with ENOTEMPTY when it still holds entries.
    func removeDirectory(_ path: String) throws(FileError)
    /// Makes the directory's entries (creations, renames, removals) durable.
    func syncDirectory(_ path: String) throws(FileError)
    /// The names in a directory, without "." and "..", in no particular order.
    func contentsOfDirectory(_ path: String) throws(FileError) -> [String]
    /// The facts of a path, or nil when nothing is there.
    func info(_ path: String) throws(FileError) -> FileInfo?
    /// What changes whenever the file at `path` is written, replaced or renamed over (inode,
    /// size, modification and change times), or nil when nothing is there or the file system
    /// cannot say. A reader that takes no lock compares it before and after (`withConsistentFiles`).
    /// Defaults to `info` (kind and size only).
    func stamp(_ path: String) throws(FileError) -> FileStamp?
    /// For each entry of `folder` whose name (its bytes, without a terminating zero) `accept`
    /// takes, in the order the folder gives them: the bytes of the file `file` in it (a regular
    /// file of at most `limit` bytes, else the error `readFile` would give) and whether anything
    /// is at `probe` in it (as `info` sees it; an error counts as nothing). A library listing's
    /// reads of every package, in one call. `PosixFileSystem` reads the folder once and opens each
    /// package's file relative to it in one call that refuses a link in any component (openat2
    /// with RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH on Linux, O_NOFOLLOW_ANY on Apple platforms;
    /// where that call is missing, or when it fails, the package folder is opened first, never
    /// following a link, like every call from the package down), into one buffer reused for every
    /// file. Defaults to `contentsOfDirectory`, then `readFile` and `info` on each path, so a test
    /// double sees (and counts, and fails) the same calls as before.
    /// `body` is called for a name right after `accept` took it, before the next name is offered.
    /// The name and the bytes are lent to `body` for the call alone (copy what is kept).
    /// - Throws: only when `folder` itself cannot be listed; each package's failure is its result.
    func readEach(in folder: String, file: String, limit: Int, probe: String,
                  accept: (_ name: UnsafeRawBufferPointer) -> Bool,
                  _ body: (_ name: UnsafeRawBufferPointer, _ bytes: Result<UnsafeRawBufferPointer, FileError>, _ probed: Bool) -> Void) throws(FileError)

    /// Takes an exclusive advisory lock on `path` (created if missing) without waiting.
    /// - Throws: `FileError` with EWOULDBLOCK when another holder has it.
    func lock(_ path: String) throws(FileError) -> FileDescriptor
    /// Releases a lock taken by `lock` and closes its descriptor. Never fails: the lock goes with
    /// the descriptor in any case.
    func unlock(_ fd: FileDescriptor)
}
