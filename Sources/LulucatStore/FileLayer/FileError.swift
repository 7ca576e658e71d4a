// A failed file system call: which call, on which path, and the errno it returned.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file system call that failed, with the path, the operation and the errno.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed, as a verb for a sentence ("open", "rename", "write", ...).
    public var operation: String
    /// The path the call was about (the file being written, never its temporary file), or
    /// "fd N" for a call on a descriptor.
    public var path: String
    /// The error number the call returned (`ENOSPC`, `EACCES`, ...).
    public var errno: Int32
    /// Set when the call was refused because `path` is not the kind of file it must be: what is
    /// there instead ("FIFO", "symbolic link", "character device", ...).
    public var found: String?
    /// When `path` is a page's file (its content, journal or preview): the page's number in its
    /// document (1 for the first), set by the session or the call that knew the document's page
    /// order, so that `localizedDescription` says "page 3". Nil when it was not known: the
    /// sentence then says "a page".
    public var pageNumber: Int?

    /// The failure of `operation` on `path` with `errno`; `found` when the call was refused for
    /// what is at `path`. For `FileSystem` implementations and their test doubles.
    public init(_ operation: String, path: String, errno: Int32, found: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.found = found
    }

    /// The failure for a log: the call, the path and the system's words for the errno.
    public var description: String {
        if let found { return "could not \(operation) \(path): it is a \(found), and the store follows no links and opens only regular files and folders" }
        return "could not \(operation) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// The call was refused because a link, FIFO, device or socket is where a file or folder should be.
    public var isUnexpectedKind: Bool { found != nil }

    /// The disk (or the quota) is full.
    public var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    /// The path does not exist.
    public var isNotFound: Bool { errno == ENOENT }
    /// Another process holds the lock.
    public var isWouldBlock: Bool { errno == EWOULDBLOCK || errno == EAGAIN }
}
