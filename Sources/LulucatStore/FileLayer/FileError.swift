// A failed file system call: which call, on which path, and the errno it returned.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file system call that failed, with the path, the operation and the errno.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(_ operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        "could not \(operation) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// The disk (or the quota) is full.
    public var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }
    /// The path does not exist.
    public var isNotFound: Bool { errno == ENOENT }
    /// Another process holds the lock.
    public var isWouldBlock: Bool { errno == EWOULDBLOCK || errno == EAGAIN }
}
