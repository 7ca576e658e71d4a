// The real file system: one wrapper per system call, retrying EINTR, errno turned into FileError.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating system's file system.
public struct PosixFileSystem: FileSystem {
    public init() {}

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
        var flags = O_CLOEXEC | O_NOFOLLOW
        switch mode {
        case .read: flags |= O_RDONLY
        case .createExclusive: flags |= O_WRONLY | O_CREAT | O_EXCL
        case .append: flags |= O_WRONLY | O_CREAT | O_APPEND
        case .readWrite: flags |= O_RDWR
        }
        let fd = try call("open", path) { Glibc_open(path, flags, 0o644) }
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
        _ = try call("rename", "\(from) to \(to)") {
            #if canImport(Glibc)
            Glibc.rename(from, to)
            #else
            Darwin.rename(from, to)
            #endif
        }
    }

    public func unlink(_ path: String) throws(FileError) {
        _ = try call("remove", path) {
            #if canImport(Glibc)
            Glibc.unlink(path)
            #else
            Darwin.unlink(path)
            #endif
        }
    }

    public func makeDirectory(_ path: String) throws(FileError) {
        _ = try call("create directory", path) { mkdir(path, 0o755) }
    }

    public func removeDirectory(_ path: String) throws(FileError) {
        _ = try call("remove directory", path) { rmdir(path) }
    }

    public func syncDirectory(_ path: String) throws(FileError) {
        let fd = try call("open directory", path) { Glibc_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        defer { _ = try? close(FileDescriptor(rawValue: fd)) }
        _ = try call("fsync directory", path) { fsync(fd) }
    }

    public func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        guard let dir = opendir(path) else { throw FileError("list", path: path, errno: errno) }
        defer { closedir(dir) }
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
        var st = stat()
        if lstat(path, &st) == -1 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileError("stat", path: path, errno: errno)
        }
        let kind: FileKind
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        return FileInfo(kind: kind, size: Int(st.st_size))
    }

    public func lock(_ path: String) throws(FileError) -> FileDescriptor {
        let fd = try call("open lock", path) { Glibc_open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644) }
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

/// `open` is variadic in C; this fixes its three arguments for Swift.
@inline(__always)
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}
