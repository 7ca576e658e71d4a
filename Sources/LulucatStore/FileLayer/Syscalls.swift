// The durability system calls, each with its platform fence written once (swift-system's
// Syscalls.swift). The store's file layer and the benchmarks' floors both call these, so a floor
// syncs exactly as the store does: on Apple platforms fsync only reaches the drive's cache and
// F_FULLFSYNC asks the drive to flush it, so a floor on plain fsync would flatter every ratio.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

package enum Syscalls {
    /// Makes a file's data and metadata durable: F_FULLFSYNC on Apple (fsync where the file system
    /// refuses it), fsync elsewhere. Returns 0, or -1 with `errno` set, like the calls it wraps.
    @inline(__always)
    package static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) != -1 { return 0 }
        #endif
        return fsync(fd)
    }

    /// Makes a file's data (and its size) durable: the same as `fullSync` on Apple, fdatasync
    /// elsewhere. Returns 0, or -1 with `errno` set.
    @inline(__always)
    package static func dataSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return fullSync(fd)
        #else
        return fdatasync(fd)
        #endif
    }

    /// The name of the call `dataSync` makes, for error messages.
    package static let dataSyncName: String = {
        #if canImport(Darwin)
        return "fsync"
        #else
        return "fdatasync"
        #endif
    }()
}
