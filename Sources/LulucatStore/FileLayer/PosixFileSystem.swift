// The real file system: one wrapper per system call, retrying EINTR, errno turned into FileError.
// Paths inside a package are walked folder by folder without following links, and only regular
// files are opened (non-blocking, checked on the descriptor): see `walkToParent`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLulucatOpen

/// The operating system's file system.
public struct PosixFileSystem: FileSystem {
    /// The operating system's file system; it holds no state, so any number of them may be made.
    public init() {}

    /// Whether `readEach` tries the one-call open of each package's file (openat2, or
    /// O_NOFOLLOW_ANY) before the folder-by-folder one; off in tests of the latter.
    var oneCallOpens = true

    /// Runs `body` until it does not fail with EINTR; -1 becomes a `FileError`.
    @inline(__always)
    private func call<T: BinaryInteger>(_ op: String, _ path: String, _ body: () -> T) throws(FileError) -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = errno
            if e != EINTR { throw FileError(op, path: path, errno: e) }
        }
    }

    public func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        // O_NONBLOCK: opening a FIFO or a device must never wait; what was opened is checked on the
        // descriptor before a byte is read. It changes nothing for a regular file.
        var flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
        switch mode {
        case .read: flags |= O_RDONLY
        case .createExclusive, .createExclusivePrivate: flags |= O_WRONLY | O_CREAT | O_EXCL
        case .append: flags |= O_WRONLY | O_CREAT | O_APPEND
        case .readWrite: flags |= O_RDWR
        }
        let (dir, name) = try walkToParent(path, "open")
        defer { closeQuietly(dir) }
        let fd: Int32
        let permissions: mode_t = mode == .createExclusivePrivate ? 0o600 : 0o644
        do { fd = try call("open", path) { openAt(dir, name, flags, permissions) } } catch {
            throw explained(error, dir: dir, name: name, path: path)
        }
        try requireRegularFile(fd, path: path, "open")
        return FileDescriptor(rawValue: fd)
    }

    public func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        var done = 0
        while done < bytes.count {
            let n = try call("write", "fd \(fd.rawValue)") {
                #if canImport(Glibc)
                Glibc.write(fd.rawValue, bytes.baseAddress! + done, bytes.count - done)
                #else
                Darwin.write(fd.rawValue, bytes.baseAddress! + done, bytes.count - done)
                #endif
            }
            done += n
        }
    }

    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try call("read", "fd \(fd.rawValue)") {
            #if canImport(Glibc)
            Glibc.read(fd.rawValue, buffer.baseAddress!, buffer.count)
            #else
            Darwin.read(fd.rawValue, buffer.baseAddress!, buffer.count)
            #endif
        }
    }

    public func sync(_ fd: FileDescriptor) throws(FileError) {
        _ = try call("fsync", "fd \(fd.rawValue)") { Syscalls.fullSync(fd.rawValue) }
    }

    public func syncData(_ fd: FileDescriptor) throws(FileError) {
        _ = try call(Syscalls.dataSyncName, "fd \(fd.rawValue)") { Syscalls.dataSync(fd.rawValue) }
    }

    public func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError) {
        _ = try call("truncate", "fd \(fd.rawValue)") { ftruncate(fd.rawValue, off_t(length)) }
    }

    public func seek(_ fd: FileDescriptor, to offset: Int) throws(FileError) {
        _ = try call("seek", "fd \(fd.rawValue)") { lseek(fd.rawValue, off_t(offset), SEEK_SET) }
    }

    public func size(_ fd: FileDescriptor) throws(FileError) -> Int {
        var st = stat()
        _ = try call("stat", "fd \(fd.rawValue)") { fstat(fd.rawValue, &st) }
        return Int(st.st_size)
    }

    public func close(_ fd: FileDescriptor) throws(FileError) {
        // close is not retried on EINTR: the descriptor is released either way on Linux and Darwin.
        #if canImport(Glibc)
        let r = Glibc.close(fd.rawValue)
        #else
        let r = Darwin.close(fd.rawValue)
        #endif
        if r == -1 && errno != EINTR { throw FileError("close", path: "fd \(fd.rawValue)", errno: errno) }
    }

    public func rename(_ from: String, to: String) throws(FileError) {
        let (fromDir, fromName) = try walkToParent(from, "rename")
        defer { closeQuietly(fromDir) }
        let (toDir, toName) = try walkToParent(to, "rename")
        defer { closeQuietly(toDir) }
        _ = try call("rename", "\(from) to \(to)") { renameat(fromDir, fromName, toDir, toName) }
    }

    public func unlink(_ path: String) throws(FileError) {
        let (dir, name) = try walkToParent(path, "remove")
        defer { closeQuietly(dir) }
        _ = try call("remove", path) { unlinkat(dir, name, 0) }
    }

    public func makeDirectory(_ path: String) throws(FileError) {
        let (dir, name) = try walkToParent(path, "create directory")
        defer { closeQuietly(dir) }
        _ = try call("create directory", path) { mkdirat(dir, name, 0o755) }
    }

    public func removeDirectory(_ path: String) throws(FileError) {
        let (dir, name) = try walkToParent(path, "remove directory")
        defer { closeQuietly(dir) }
        _ = try call("remove directory", path) { unlinkat(dir, name, AT_REMOVEDIR) }
    }

    public func syncDirectory(_ path: String) throws(FileError) {
        let fd = try openDirectory(path, "open directory")
        defer { closeQuietly(fd) }
        _ = try call("fsync directory", path) { fsync(fd) }
    }

    public func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        let fd = try openDirectory(path, "list")
        guard let dir = fdopendir(fd) else {
            let e = errno
            closeQuietly(fd)
            throw FileError("list", path: path, errno: e)
        }
        defer { closedir(dir) }  // closes fd too
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw FileError("list", path: path, errno: errno) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func info(_ path: String) throws(FileError) -> FileInfo? {
        let dir: Int32, name: String
        do { (dir, name) = try walkToParent(path, "stat") } catch {
            // Nothing there (or a file where a folder would be) is "nothing there"; a link is not.
            if error.found == nil && (error.errno == ENOENT || error.errno == ENOTDIR) { return nil }
            throw error
        }
        defer { closeQuietly(dir) }
        var st = stat()
        if fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == -1 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileError("stat", path: path, errno: errno)
        }
        return FileInfo(kind: Self.kind(st.st_mode), size: Int(st.st_size))
    }

    public func stamp(_ path: String) throws(FileError) -> FileStamp? {
        let dir: Int32, name: String
        do { (dir, name) = try walkToParent(path, "stat") } catch {
            if error.found == nil && (error.errno == ENOENT || error.errno == ENOTDIR) { return nil }
            throw error
        }
        defer { closeQuietly(dir) }
        var st = stat()
        if fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == -1 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileError("stat", path: path, errno: errno)
        }
        func ns(_ t: timespec) -> Int64 { Int64(t.tv_sec) &* 1_000_000_000 &+ Int64(t.tv_nsec) }
        #if canImport(Darwin)
        let (m, c) = (st.st_mtimespec, st.st_ctimespec)
        #else
        let (m, c) = (st.st_mtim, st.st_ctim)
        #endif
        return FileStamp(kind: Self.kind(st.st_mode), size: Int(st.st_size), inode: UInt64(st.st_ino),
                         modifiedNanoseconds: ns(m), changedNanoseconds: ns(c))
    }

    public func lock(_ path: String) throws(FileError) -> FileDescriptor {
        let (dir, name) = try walkToParent(path, "open lock")
        defer { closeQuietly(dir) }
        let fd: Int32
        do {
            fd = try call("open lock", path) { openAt(dir, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o644) }
        } catch {
            throw explained(error, dir: dir, name: name, path: path)
        }
        try requireRegularFile(fd, path: path, "open lock")
        // flock locks belong to the open file description, so a second open in the same process
        // conflicts too: exactly one session per document, in or across processes.
        if flock(fd, LOCK_EX | LOCK_NB) == -1 {
            let e = errno
            _ = try? close(FileDescriptor(rawValue: fd))
            throw FileError("lock", path: path, errno: e)
        }
        return FileDescriptor(rawValue: fd)
    }

    public func unlock(_ fd: FileDescriptor) {
        _ = flock(fd.rawValue, LOCK_UN)
        _ = try? close(fd)
    }
}

// MARK: Walking a path without following links

extension PosixFileSystem {
    /// Whether a path component is one the store owns: a document package (`*.lnote`), a staging
    /// folder (`.lnote-tmp-*`) or the trash (`.trash`). From the first such component down, every
    /// component is opened relative to its parent with O_NOFOLLOW, so a link planted anywhere
    /// inside a package (the package itself, `pages/`, `assets/`, ...) is refused, never followed.
    /// The folders above it (the library root and its parents) are the user's and may be links.
    static func isOwnedComponent(_ name: Substring) -> Bool {
        name.hasSuffix("." + DocumentPackage.pathExtension) || name.hasPrefix(temporaryFilePrefix) || name == ".trash"
    }

    /// Opens the folder that holds `path`'s last component and returns it with that name. The
    /// part above the first owned component is opened as a path; each owned folder below it is
    /// opened with `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)`.
    func walkToParent(_ path: String, _ op: String) throws(FileError) -> (Int32, String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let last = parts.last else { throw FileError(op, path: path, errno: EINVAL) }
        let folders = parts.dropLast()
        let owned = parts.firstIndex(where: Self.isOwnedComponent) ?? parts.endIndex
        let outer = (path.hasPrefix("/") ? "/" : "") + folders[..<min(owned, folders.endIndex)].joined(separator: "/")
        var fd = try call(op, outer) { openPath(outer.isEmpty ? "." : outer, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        var walked = outer
        var index = owned
        while index < folders.endIndex {
            let name = String(folders[index])
            walked += (walked.hasSuffix("/") || walked.isEmpty ? "" : "/") + name
            index += 1
            if name == "." { continue }
            if name == ".." {
                closeQuietly(fd)
                throw FileError(op + " (a '..' inside a package)", path: path, errno: EINVAL)
            }
            let parent = fd
            let next: Int32
            do {
                next = try call(op, walked) { openAt(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0) }
            } catch {
                let e = explained(error, dir: parent, name: name, path: walked)
                closeQuietly(parent)
                throw e
            }
            closeQuietly(parent)
            fd = next
        }
        if last == ".." && owned < parts.endIndex {
            closeQuietly(fd)
            throw FileError(op + " (a '..' inside a package)", path: path, errno: EINVAL)
        }
        return (fd, String(last))
    }

    /// Opens a folder for listing or syncing; an owned folder is opened without following a link.
    func openDirectory(_ path: String, _ op: String) throws(FileError) -> Int32 {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let last = parts.last, parts.contains(where: Self.isOwnedComponent) else {
            return try call(op, path) { openPath(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        }
        _ = last
        let (dir, name) = try walkToParent(path, op)
        defer { closeQuietly(dir) }
        do {
            return try call(op, path) { openAt(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0) }
        } catch {
            throw explained(error, dir: dir, name: name, path: path)
        }
    }

    /// Turns an ELOOP or ENOTDIR from an open into "it is a symbolic link" (or a FIFO, ...) when
    /// that is what is there, so the caller can tell a planted link from a missing file.
    func explained(_ error: FileError, dir: Int32, name: String, path: String) -> FileError {
        guard error.errno == ELOOP || error.errno == ENOTDIR || error.errno == ENXIO else { return error }
        var st = stat()
        guard fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return error }
        let kind = st.st_mode & S_IFMT
        if kind == S_IFDIR && error.errno == ENOTDIR { return error }
        if kind == S_IFREG { return error }
        return FileError(error.operation, path: path, errno: error.errno, found: Self.kindName(st.st_mode))
    }

    /// Refuses (and closes) a descriptor that is not a regular file: a FIFO, a device or a socket
    /// opened where a package file should be.
    func requireRegularFile(_ fd: Int32, path: String, _ op: String) throws(FileError) {
        var st = stat()
        if fstat(fd, &st) == -1 {
            let e = errno
            closeQuietly(fd)
            throw FileError("stat", path: path, errno: e)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            closeQuietly(fd)
            throw FileError(op, path: path, errno: EINVAL, found: Self.kindName(st.st_mode))
        }
    }

    static func kind(_ mode: mode_t) -> FileKind {
        switch mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "regular file"
        case S_IFDIR: return "folder"
        case S_IFLNK: return "symbolic link"
        case S_IFIFO: return "FIFO"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFSOCK: return "socket"
        default: return "special file"
        }
    }
}

// MARK: Reading one file in each package of a folder

extension PosixFileSystem {
    public func readEach(in folder: String, file: String, limit: Int, probe: String,
                         accept: (_ name: UnsafeRawBufferPointer) -> Bool,
                         _ body: (_ name: UnsafeRawBufferPointer, _ bytes: Result<UnsafeRawBufferPointer, FileError>, _ probed: Bool) -> Void) throws(FileError) {
        let dir = try openDirectory(folder, "list")
        guard let stream = fdopendir(dir) else {
            let e = errno
            closeQuietly(dir)
            throw FileError("list", path: folder, errno: e)
        }
        defer { closedir(stream) }  // closes dir too
        // Each package's paths are written into one buffer ("<name>/<file>", then "<name>/<probe>"),
        // each file read into one buffer that grows to the largest read: nothing is allocated per
        // package unless it fails (its error's path).
        let fileBytes = Array(file.utf8), probeBytes = Array(probe.utf8)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let nameCapacity = MemoryLayout<dirent>.size - nameOffset  // d_name's bytes, its zero included
        let path = UnsafeMutablePointer<CChar>.allocate(capacity: nameCapacity + 1 + max(fileBytes.count, probeBytes.count))
        defer { path.deallocate() }
        var buffer = ReadBuffer()
        defer { buffer.deallocate() }
        // The one-call open refuses a link in either component; a failure saying the call is
        // missing (old kernel, seccomp filter) turns it off for the rest of the listing.
        var oneCall = oneCallOpens
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw FileError("list", path: folder, errno: errno) }
                break
            }
            let namePointer = UnsafeRawPointer(entry) + nameOffset
            let length = strlen(namePointer.assumingMemoryBound(to: CChar.self))
            let name = UnsafeRawBufferPointer(start: namePointer, count: length)
            if length <= 2 && name.allSatisfy({ $0 == 0x2E }) { continue }  // "." and ".."
            guard length < nameCapacity, accept(name) else { continue }
            func write(_ tail: [UInt8]) {
                let raw = UnsafeMutableRawPointer(path)
                raw.copyMemory(from: namePointer, byteCount: length)
                raw.storeBytes(of: 0x2F, toByteOffset: length, as: UInt8.self)  // /
                tail.withUnsafeBytes { (raw + length + 1).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                raw.storeBytes(of: 0, toByteOffset: length + 1 + tail.count, as: UInt8.self)
            }
            func packagePath() -> String { folder + "/" + String(decoding: name, as: UTF8.self) }
            write(fileBytes)
            var fd: Int32 = -1
            if oneCall {
                repeat { fd = lulucat_open_beneath_nofollow(dir, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) } while fd == -1 && errno == EINTR
                let e = errno
                if fd == -1 && (e == ENOSYS || e == EPERM || e == EINVAL || e == E2BIG) { oneCall = false }
            }
            let bytes: Result<UnsafeRawBufferPointer, FileError>
            var st = stat()
            let probed: Bool
            if fd >= 0 {
                bytes = Result { () throws(FileError) in try readRegularFile(fd, into: &buffer, limit: limit, path: packagePath() + "/" + file) }
                // `name` was a folder, not a link, when the open above went through it.
                write(probeBytes)
                probed = fstatat(dir, path, &st, AT_SYMLINK_NOFOLLOW) == 0
            } else {
                // Folder by folder: the package opened without following a link, its file relative
                // to it. Also where the one-call open failed, so that each failure is the error
                // this path has always given.
                let nameString = String(decoding: name, as: UTF8.self)
                let package: Int32
                do {
                    package = try call("open", packagePath()) { openAt(dir, nameString, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0) }
                } catch {
                    body(name, .failure(explained(error, dir: dir, name: nameString, path: packagePath())), false)
                    continue
                }
                bytes = Result { () throws(FileError) in
                    let filePath = packagePath() + "/" + file
                    let fd: Int32
                    do throws(FileError) { fd = try call("open", filePath) { openAt(package, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0) } } catch {
                        throw explained(error, dir: package, name: file, path: filePath)
                    }
                    return try readRegularFile(fd, into: &buffer, limit: limit, path: filePath)
                }
                probed = fstatat(package, probe, &st, AT_SYMLINK_NOFOLLOW) == 0
                closeQuietly(package)
            }
            body(name, bytes, probed)
        }
    }

    /// The file open at `fd` (closed here, whatever happens), refused unless a regular file of at
    /// most `limit` bytes, read whole into `buffer`: its bytes, valid until the next read.
    private func readRegularFile(_ fd: Int32, into buffer: inout ReadBuffer, limit: Int,
                                 path: @autoclosure () -> String) throws(FileError) -> UnsafeRawBufferPointer {
        defer { closeQuietly(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileError("stat", path: path(), errno: errno) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw FileError("open", path: path(), errno: EINVAL, found: Self.kindName(st.st_mode)) }
        let size = Int(st.st_size)
        guard size <= limit else { throw FileError("read (file larger than \(limit) bytes)", path: path(), errno: EFBIG) }
        let base = buffer.reserve(size)
        var done = 0
        while done < size {
            #if canImport(Glibc)
            let n = Glibc.read(fd, base + done, size - done)
            #else
            let n = Darwin.read(fd, base + done, size - done)
            #endif
            if n == -1 {
                if errno == EINTR { continue }
                throw FileError("read", path: path(), errno: errno)
            }
            if n == 0 { break }  // shrank under us: what is there, as readFile gives it
            done += n
        }
        return UnsafeRawBufferPointer(start: base, count: done)
    }
}

/// One allocation reused for every file `readEach` reads, grown to the largest.
private struct ReadBuffer {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0

    /// At least `count` bytes (their old content is not kept).
    mutating func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if let base, count <= capacity { return base }
        base?.deallocate()
        capacity = max(count, 4096, capacity * 2)
        let b = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        base = b
        return b
    }

    func deallocate() { base?.deallocate() }
}

@inline(__always)
private func closeQuietly(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}

/// `open` and `openat` are variadic in C; these fix their arguments for Swift.
@inline(__always)
private func openPath(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

@inline(__always)
private func openAt(_ dir: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.openat(dir, name, flags, mode)
    #else
    return Darwin.openat(dir, name, flags, mode)
    #endif
}
