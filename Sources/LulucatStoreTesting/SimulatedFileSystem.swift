// An in-memory file system behind the `FileSystem` seam, with a model of what survives a crash.
// It records every mutating call, injects I/O errors, and builds the crash states of a recorded
// run (see docs/crash-model.md and `CrashStates`).

import Foundation
import LulucatStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One recorded mutating operation, at the level the crash model reasons about: directory entries
/// of directory inodes, and the data of file inodes.
public enum SimulatedOperation: Sendable, Equatable {
    /// A new entry `name` in directory inode `dir` naming a new inode (a created file or directory).
    case link(dir: Int, name: String, inode: Int, isDirectory: Bool, path: String)
    /// The entry `name` of `dir` (naming `inode`) removed: unlink or rmdir.
    case unlink(dir: Int, name: String, inode: Int, path: String)
    /// The entry `fromName` of `fromDir` moved to `toName` in `toDir`, replacing what was there.
    case rename(fromDir: Int, fromName: String, toDir: Int, toName: String, inode: Int, from: String, to: String)
    /// `bytes` written at `offset` of file inode `inode`.
    case write(inode: Int, offset: Int, bytes: [UInt8], path: String)
    case truncate(inode: Int, length: Int, path: String)
    /// fsync / fdatasync: the file's data (and size) durable. Not its directory entry.
    case sync(inode: Int, path: String)
    /// fsync of a directory: the entries of that directory durable.
    case syncDirectory(dir: Int, path: String)

    /// Whether this operation changes or syncs directory entries.
    public var isMetadata: Bool {
        switch self {
        case .link, .unlink, .rename: return true
        default: return false
        }
    }

    public var summary: String {
        switch self {
        case let .link(_, _, _, d, p): return (d ? "mkdir " : "create ") + p
        case let .unlink(_, _, _, p): return "unlink " + p
        case let .rename(_, _, _, _, _, f, t): return "rename \(f) -> \(t)"
        case let .write(_, o, b, p): return "write \(b.count) bytes at \(o) of \(p)"
        case let .truncate(_, l, p): return "truncate \(p) to \(l)"
        case let .sync(_, p): return "fsync " + p
        case let .syncDirectory(_, p): return "fsync directory " + p
        }
    }
}

/// A node of the simulated tree: a file's bytes or a directory's entries.
public struct SimulatedNode: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case file, directory }
    public var kind: Kind
    public var data: [UInt8] = []
    public var entries: [String: Int] = [:]
    public init(kind: Kind, data: [UInt8] = [], entries: [String: Int] = [:]) {
        self.kind = kind
        self.data = data
        self.entries = entries
    }
}

/// A whole tree: inode 0 is the root directory "/".
public struct SimulatedTree: Sendable, Equatable {
    public var nodes: [Int: SimulatedNode]
    public static let root = 0
    public init() { nodes = [SimulatedTree.root: SimulatedNode(kind: .directory)] }
    public init(nodes: [Int: SimulatedNode]) { self.nodes = nodes }

    /// Every reachable path (absolute, sorted) with its node.
    public func walk() -> [(String, SimulatedNode)] {
        var out: [(String, SimulatedNode)] = []
        func visit(_ path: String, _ ino: Int, depth: Int) {
            guard let n = nodes[ino], depth < 64 else { return }
            out.append((path.isEmpty ? "/" : path, n))
            guard n.kind == .directory else { return }
            for name in n.entries.keys.sorted() { visit(path + "/" + name, n.entries[name]!, depth: depth + 1) }
        }
        visit("", SimulatedTree.root, depth: 0)
        return out
    }

    /// A 128-bit fingerprint of the reachable tree (names, kinds, bytes), for counting distinct states.
    public func fingerprint() -> SimulatedFingerprint {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x8422_2325_cbf2_9ce4
        func mix(_ byte: UInt8) {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b &+ UInt64(byte) &+ 0x9E37_79B9) &* 0xFF51_AFD7_ED55_8CCD
            b ^= b >> 29
        }
        for (path, node) in walk() {
            for c in path.utf8 { mix(c) }
            mix(0)
            mix(node.kind == .file ? 1 : 2)
            var n = UInt64(node.data.count)
            for _ in 0..<8 { mix(UInt8(truncatingIfNeeded: n)); n >>= 8 }
            // Eight bytes a step (files of the SQLite engine are hundreds of KiB), the rest by byte.
            node.data.withUnsafeBytes { raw in
                let words = raw.count / 8
                for w in 0..<words {
                    let v = raw.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self)
                    a = (a ^ v) &* 0x0000_0100_0000_01B3
                    b = (b &+ v &+ 0x9E37_79B9) &* 0xFF51_AFD7_ED55_8CCD
                    b ^= b >> 29
                }
                for i in (words * 8)..<raw.count { mix(raw[i]) }
            }
        }
        return SimulatedFingerprint(a: a, b: b)
    }
}

public struct SimulatedFingerprint: Hashable, Sendable {
    public var a: UInt64
    public var b: UInt64
}

/// An I/O error to inject: the `operation`-th counted call (1-based) fails with `errno`, and with
/// `persistent` every counted call after it fails too, until the fault is cleared.
public struct InjectedFault: Sendable, Equatable, CustomStringConvertible {
    public enum Counting: Sendable, Equatable {
        /// Only calls that change the file system or its durability (open for writing, write, sync, ...).
        case mutating
        /// Every call, reads included.
        case all
    }
    public var operation: Int
    public var errno: Int32
    public var persistent: Bool
    public var counting: Counting

    public init(operation: Int, errno: Int32, persistent: Bool = false, counting: Counting = .all) {
        self.operation = operation
        self.errno = errno
        self.persistent = persistent
        self.counting = counting
    }

    public var description: String {
        let name: String
        switch errno {
        case EIO: name = "EIO"
        case ENOSPC: name = "ENOSPC"
        case EDQUOT: name = "EDQUOT"
        default: name = "errno \(errno)"
        }
        return "\(name) at \(counting == .all ? "call" : "mutating call") \(operation)\(persistent ? " and after" : "")"
    }
}

/// An in-memory `FileSystem` that records what it is asked to do and can fail on demand.
///
/// Thread-safe: every call takes one lock. Descriptors, locks and counters are per instance.
public final class SimulatedFileSystem: FileSystem, @unchecked Sendable {
    private struct OpenFile {
        var inode: Int
        var path: String
        var mode: OpenMode
        var offset: Int
    }

    private let mutex = NSLock()
    private var tree: SimulatedTree
    private var nextInode = 1
    private var files: [Int32: OpenFile] = [:]
    private var nextDescriptor: Int32 = 3
    private var lockedInodes: Set<Int> = []
    private var lockDescriptors: [Int32: Int] = [:]

    private var recordedBase: SimulatedTree?
    private var recorded: [SimulatedOperation] = []
    private var fault: InjectedFault?
    private var callCount = 0
    private var mutatingCallCount = 0
    private var injected = 0
    private var injectedCalls: [String] = []
    private var readOpenCounts: [String: Int] = [:]

    /// An empty file system holding only "/".
    public init() { tree = SimulatedTree() }

    /// A file system holding `tree` (every byte of it durable).
    public init(tree: SimulatedTree) {
        self.tree = tree
        nextInode = (tree.nodes.keys.max() ?? 0) + 1
    }

    private func locked<T>(_ body: () throws(FileError) -> T) throws(FileError) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    private func lockedNoThrow<T>(_ body: () -> T) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return body()
    }

    // MARK: Recording, faults and counters

    /// The current tree (what a process sees, durable or not).
    public var snapshot: SimulatedTree { lockedNoThrow { tree } }

    /// Starts recording: the current tree becomes the durable base of the trace.
    public func startRecording() {
        lockedNoThrow {
            recordedBase = tree
            recorded = []
        }
    }

    /// The operations recorded since `startRecording`, and the tree they start from.
    public var trace: (base: SimulatedTree, operations: [SimulatedOperation])? {
        lockedNoThrow { recordedBase.map { ($0, recorded) } }
    }

    /// How many operations have been recorded so far (the index a returned call is acknowledged at).
    public var recordedCount: Int { lockedNoThrow { recorded.count } }

    /// Arms a fault; counting starts again from the next call.
    public func inject(_ fault: InjectedFault) {
        lockedNoThrow {
            self.fault = fault
            callCount = 0
            mutatingCallCount = 0
        }
    }

    /// Disarms the fault: the disk has space again, the device answers again.
    public func clearFault() { lockedNoThrow { fault = nil } }

    /// How many calls failed because of an injected fault.
    public var faultsInjected: Int { lockedNoThrow { injected } }

    /// The calls ("fsync directory", "write", ...) that failed because of an injected fault, in order.
    public var failedCalls: [String] { lockedNoThrow { injectedCalls } }

    /// How many calls were made since the last `inject` (all, and mutating ones).
    public var callCounts: (all: Int, mutating: Int) { lockedNoThrow { (callCount, mutatingCallCount) } }

    /// How many times each path was opened for reading since the last reset.
    public var readOpens: [String: Int] { lockedNoThrow { readOpenCounts } }
    public func resetReadOpens() { lockedNoThrow { readOpenCounts = [:] } }

    /// Counts a call and throws the injected error when it is the one to fail.
    private func enter(_ op: String, _ path: String, mutating: Bool) throws(FileError) {
        callCount += 1
        if mutating { mutatingCallCount += 1 }
        guard let f = fault else { return }
        let n = f.counting == .all ? callCount : (mutating ? mutatingCallCount : 0)
        guard n > 0 else { return }
        if n == f.operation || (f.persistent && n > f.operation) {
            injected += 1
            injectedCalls.append(op)
            throw FileError(op, path: path, errno: f.errno)
        }
    }

    private func record(_ op: SimulatedOperation) {
        if recordedBase != nil { recorded.append(op) }
    }

    // MARK: Paths

    private func components(_ path: String) throws(FileError) -> [String] {
        guard path.hasPrefix("/") else { throw FileError("resolve (not an absolute path)", path: path, errno: EINVAL) }
        var out: [String] = []
        for c in path.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." { if !out.isEmpty { out.removeLast() }; continue }
            out.append(String(c))
        }
        return out
    }

    /// The inode of a directory path.
    private func directory(_ comps: ArraySlice<String>, _ path: String, _ op: String) throws(FileError) -> Int {
        var ino = SimulatedTree.root
        for c in comps {
            guard let next = tree.nodes[ino]!.entries[c] else { throw FileError(op, path: path, errno: ENOENT) }
            guard tree.nodes[next]!.kind == .directory else { throw FileError(op, path: path, errno: ENOTDIR) }
            ino = next
        }
        return ino
    }

    /// The parent directory inode and the last name of `path`.
    private func parent(_ path: String, _ op: String) throws(FileError) -> (Int, String) {
        let comps = try components(path)
        guard let name = comps.last else { throw FileError(op, path: path, errno: EBUSY) }
        return (try directory(comps.dropLast(), path, op), name)
    }

    /// The inode at `path`, or nil.
    private func lookup(_ path: String, _ op: String) throws(FileError) -> Int? {
        let comps = try components(path)
        guard let name = comps.last else { return SimulatedTree.root }
        let dir: Int
        do { dir = try directory(comps.dropLast(), path, op) } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            throw error
        }
        return tree.nodes[dir]!.entries[name]
    }

    private func newInode(_ node: SimulatedNode) -> Int {
        let ino = nextInode
        nextInode += 1
        tree.nodes[ino] = node
        return ino
    }

    private func openFile(_ fd: FileDescriptor, _ op: String) throws(FileError) -> OpenFile {
        guard let f = files[fd.rawValue] else { throw FileError(op, path: "fd \(fd.rawValue)", errno: EBADF) }
        return f
    }

    // MARK: FileSystem

    public func open(_ path: String, _ mode: OpenMode) throws(FileError) -> FileDescriptor {
        try locked { () throws(FileError) in
            try enter("open", path, mutating: mode != .read)
            let (dir, name) = try parent(path, "open")
            var ino = tree.nodes[dir]!.entries[name]
            switch mode {
            case .read, .readWrite:
                guard let i = ino else { throw FileError("open", path: path, errno: ENOENT) }
                guard tree.nodes[i]!.kind == .file else { throw FileError("open", path: path, errno: EISDIR) }
                if mode == .read { readOpenCounts[path, default: 0] += 1 }
            case .createExclusive, .createExclusivePrivate:
                guard ino == nil else { throw FileError("open", path: path, errno: EEXIST) }
                ino = newInode(SimulatedNode(kind: .file))
                tree.nodes[dir]!.entries[name] = ino
                record(.link(dir: dir, name: name, inode: ino!, isDirectory: false, path: path))
            case .append:
                if let i = ino {
                    guard tree.nodes[i]!.kind == .file else { throw FileError("open", path: path, errno: EISDIR) }
                } else {
                    ino = newInode(SimulatedNode(kind: .file))
                    tree.nodes[dir]!.entries[name] = ino
                    record(.link(dir: dir, name: name, inode: ino!, isDirectory: false, path: path))
                }
            }
            let fd = nextDescriptor
            nextDescriptor += 1
            files[fd] = OpenFile(inode: ino!, path: path, mode: mode, offset: 0)
            return FileDescriptor(rawValue: fd)
        }
    }

    public func write(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(FileError) {
        let copy = [UInt8](bytes)
        try locked { () throws(FileError) in
            var f = try openFile(fd, "write")
            guard f.mode != .read else { throw FileError("write", path: f.path, errno: EBADF) }
            if f.mode == .append { f.offset = tree.nodes[f.inode]!.data.count }
            do throws(FileError) { try enter("write", f.path, mutating: true) } catch {
                // A full disk or a failing device still takes part of the bytes before it fails.
                let part = Array(copy.prefix(copy.count / 2))
                if !part.isEmpty && error.errno != EIO { apply(&f, part) }
                files[fd.rawValue] = f
                throw error
            }
            apply(&f, copy)
            files[fd.rawValue] = f
        }
    }

    private func apply(_ f: inout OpenFile, _ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let end = f.offset + bytes.count
        // In place (no copy of the file per write: SQLite writes pages into files of hundreds of KiB).
        let count = tree.nodes[f.inode]!.data.count
        if end > count { tree.nodes[f.inode]!.data.append(contentsOf: [UInt8](repeating: 0, count: end - count)) }
        tree.nodes[f.inode]!.data.replaceSubrange(f.offset..<end, with: bytes)
        record(.write(inode: f.inode, offset: f.offset, bytes: bytes, path: f.path))
        f.offset = end
    }

    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        try locked { () throws(FileError) in
            var f = try openFile(fd, "read")
            try enter("read", f.path, mutating: false)
            guard f.mode == .read || f.mode == .readWrite else { throw FileError("read", path: f.path, errno: EBADF) }
            let data = tree.nodes[f.inode]!.data
            let n = max(0, min(buffer.count, data.count - f.offset))
            if n > 0 {
                data.withUnsafeBytes { src in
                    buffer.baseAddress!.copyMemory(from: src.baseAddress! + f.offset, byteCount: n)
                }
            }
            f.offset += n
            files[fd.rawValue] = f
            return n
        }
    }

    public func sync(_ fd: FileDescriptor) throws(FileError) {
        try locked { () throws(FileError) in
            let f = try openFile(fd, "fsync")
            try enter("fsync", f.path, mutating: true)
            record(.sync(inode: f.inode, path: f.path))
        }
    }

    public func syncData(_ fd: FileDescriptor) throws(FileError) {
        try locked { () throws(FileError) in
            let f = try openFile(fd, "fdatasync")
            try enter("fdatasync", f.path, mutating: true)
            record(.sync(inode: f.inode, path: f.path))
        }
    }

    public func seek(_ fd: FileDescriptor, to offset: Int) throws(FileError) {
        try locked { () throws(FileError) in
            var f = try openFile(fd, "seek")
            guard offset >= 0 else { throw FileError("seek", path: f.path, errno: EINVAL) }
            try enter("seek", f.path, mutating: false)
            f.offset = offset
            files[fd.rawValue] = f
        }
    }

    public func truncate(_ fd: FileDescriptor, to length: Int) throws(FileError) {
        try locked { () throws(FileError) in
            let f = try openFile(fd, "truncate")
            guard f.mode != .read, length >= 0 else { throw FileError("truncate", path: f.path, errno: length < 0 ? EINVAL : EBADF) }
            try enter("truncate", f.path, mutating: true)
            var data = tree.nodes[f.inode]!.data
            if length < data.count { data.removeLast(data.count - length) } else {
                data.append(contentsOf: [UInt8](repeating: 0, count: length - data.count))
            }
            tree.nodes[f.inode]!.data = data
            record(.truncate(inode: f.inode, length: length, path: f.path))
        }
    }

    public func size(_ fd: FileDescriptor) throws(FileError) -> Int {
        try locked { () throws(FileError) in
            let f = try openFile(fd, "stat")
            try enter("stat", f.path, mutating: false)
            return tree.nodes[f.inode]!.data.count
        }
    }

    public func close(_ fd: FileDescriptor) throws(FileError) {
        try locked { () throws(FileError) in
            let f = try openFile(fd, "close")
            // The descriptor is released even when close reports an error, as on Linux.
            files[fd.rawValue] = nil
            try enter("close", f.path, mutating: f.mode != .read)
        }
    }

    public func rename(_ from: String, to: String) throws(FileError) {
        try locked { () throws(FileError) in
            let what = "\(from) to \(to)"
            try enter("rename", what, mutating: true)
            let (fromDir, fromName) = try parent(from, "rename")
            let (toDir, toName) = try parent(to, "rename")
            guard let ino = tree.nodes[fromDir]!.entries[fromName] else { throw FileError("rename", path: what, errno: ENOENT) }
            let moving = tree.nodes[ino]!
            if let existing = tree.nodes[toDir]!.entries[toName] {
                if existing == ino { return }
                let target = tree.nodes[existing]!
                switch (moving.kind, target.kind) {
                case (.file, .directory): throw FileError("rename", path: what, errno: EISDIR)
                case (.directory, .file): throw FileError("rename", path: what, errno: ENOTDIR)
                case (.directory, .directory) where !target.entries.isEmpty: throw FileError("rename", path: what, errno: ENOTEMPTY)
                default: break
                }
            }
            if moving.kind == .directory {
                // A directory cannot move inside itself.
                let toComps = try components(to), fromComps = try components(from)
                if toComps.count > fromComps.count && Array(toComps.prefix(fromComps.count)) == fromComps {
                    throw FileError("rename", path: what, errno: EINVAL)
                }
            }
            tree.nodes[fromDir]!.entries[fromName] = nil
            tree.nodes[toDir]!.entries[toName] = ino
            record(.rename(fromDir: fromDir, fromName: fromName, toDir: toDir, toName: toName, inode: ino, from: from, to: to))
        }
    }

    public func unlink(_ path: String) throws(FileError) {
        try locked { () throws(FileError) in
            try enter("remove", path, mutating: true)
            let (dir, name) = try parent(path, "remove")
            guard let ino = tree.nodes[dir]!.entries[name] else { throw FileError("remove", path: path, errno: ENOENT) }
            guard tree.nodes[ino]!.kind == .file else { throw FileError("remove", path: path, errno: EISDIR) }
            tree.nodes[dir]!.entries[name] = nil
            record(.unlink(dir: dir, name: name, inode: ino, path: path))
        }
    }

    public func makeDirectory(_ path: String) throws(FileError) {
        try locked { () throws(FileError) in
            try enter("create directory", path, mutating: true)
            let (dir, name) = try parent(path, "create directory")
            guard tree.nodes[dir]!.entries[name] == nil else { throw FileError("create directory", path: path, errno: EEXIST) }
            let ino = newInode(SimulatedNode(kind: .directory))
            tree.nodes[dir]!.entries[name] = ino
            record(.link(dir: dir, name: name, inode: ino, isDirectory: true, path: path))
        }
    }

    public func removeDirectory(_ path: String) throws(FileError) {
        try locked { () throws(FileError) in
            try enter("remove directory", path, mutating: true)
            let (dir, name) = try parent(path, "remove directory")
            guard let ino = tree.nodes[dir]!.entries[name] else { throw FileError("remove directory", path: path, errno: ENOENT) }
            guard tree.nodes[ino]!.kind == .directory else { throw FileError("remove directory", path: path, errno: ENOTDIR) }
            guard tree.nodes[ino]!.entries.isEmpty else { throw FileError("remove directory", path: path, errno: ENOTEMPTY) }
            tree.nodes[dir]!.entries[name] = nil
            record(.unlink(dir: dir, name: name, inode: ino, path: path))
        }
    }

    public func syncDirectory(_ path: String) throws(FileError) {
        try locked { () throws(FileError) in
            try enter("fsync directory", path, mutating: true)
            guard let ino = try lookup(path, "open directory") else { throw FileError("open directory", path: path, errno: ENOENT) }
            guard tree.nodes[ino]!.kind == .directory else { throw FileError("open directory", path: path, errno: ENOTDIR) }
            record(.syncDirectory(dir: ino, path: path))
        }
    }

    public func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        try locked { () throws(FileError) in
            try enter("list", path, mutating: false)
            guard let ino = try lookup(path, "list") else { throw FileError("list", path: path, errno: ENOENT) }
            guard tree.nodes[ino]!.kind == .directory else { throw FileError("list", path: path, errno: ENOTDIR) }
            // Sorted, so that runs (and their traces) are reproducible.
            return tree.nodes[ino]!.entries.keys.sorted()
        }
    }

    public func info(_ path: String) throws(FileError) -> FileInfo? {
        try locked { () throws(FileError) in
            try enter("stat", path, mutating: false)
            guard let ino = try lookup(path, "stat") else { return nil }
            let n = tree.nodes[ino]!
            return FileInfo(kind: n.kind == .file ? .file : .directory, size: n.kind == .file ? n.data.count : 0)
        }
    }

    public func lock(_ path: String) throws(FileError) -> FileDescriptor {
        try locked { () throws(FileError) in
            try enter("open lock", path, mutating: true)
            let (dir, name) = try parent(path, "open lock")
            var ino = tree.nodes[dir]!.entries[name]
            if ino == nil {
                ino = newInode(SimulatedNode(kind: .file))
                tree.nodes[dir]!.entries[name] = ino
                record(.link(dir: dir, name: name, inode: ino!, isDirectory: false, path: path))
            }
            guard tree.nodes[ino!]!.kind == .file else { throw FileError("open lock", path: path, errno: EISDIR) }
            guard !lockedInodes.contains(ino!) else { throw FileError("lock", path: path, errno: EWOULDBLOCK) }
            lockedInodes.insert(ino!)
            let fd = nextDescriptor
            nextDescriptor += 1
            lockDescriptors[fd] = ino!
            return FileDescriptor(rawValue: fd)
        }
    }

    public func unlock(_ fd: FileDescriptor) {
        lockedNoThrow {
            if let ino = lockDescriptors.removeValue(forKey: fd.rawValue) { lockedInodes.remove(ino) }
        }
    }

    /// How many descriptors are open (leak checks).
    public var openDescriptorCount: Int { lockedNoThrow { files.count + lockDescriptors.count } }
}

extension SimulatedFileSystem {
    /// Writes a file directly (no temporary, not recorded unless recording): for building fixtures.
    public func put(_ path: String, _ bytes: [UInt8]) throws(FileError) {
        var comps: [String] = []
        for c in path.split(separator: "/").dropLast() {
            comps.append(String(c))
            try ensureDirectory("/" + comps.joined(separator: "/"))
        }
        try removeIfPresent(path)
        let fd = try open(path, .createExclusive)
        try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try write(fd, raw) } }.get()
        try close(fd)
    }
}
