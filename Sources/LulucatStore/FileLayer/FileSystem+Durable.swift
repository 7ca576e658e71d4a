// The durable operations built on the seam: whole-file read, atomic durable write, removal.
// Package access: the store, sync and the tools use them; an app reaches files through `Library`.

import Foundation

/// The prefix of every temporary file the store creates; stale ones are removed when a document opens.
package let temporaryFilePrefix = ".lnote-tmp-"

extension FileSystem {
    /// Reads a whole regular file. A symbolic link or a directory at `path` is an error.
    /// - Parameter limit: the largest size accepted; a bigger file is an error before any allocation.
    package func readFile(_ path: String, limit: Int = 1 << 31) throws(FileError) -> [UInt8] {
        let fd = try open(path, .read)
        defer { try? close(fd) }
        let size = try self.size(fd)
        guard size <= limit else { throw FileError("read (file larger than \(limit) bytes)", path: path, errno: EFBIG) }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(FileError) in try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[done...])) }
            }.get()
            if n == 0 { break }  // shrank under us: return what is there
            done += n
        }
        if done < size { bytes.removeLast(size - done) }
        return bytes
    }

    /// Writes `bytes` to `path` atomically and durably: a temporary file in the same directory,
    /// created exclusively, written fully and synced, renamed over `path`, then the directory synced.
    /// On any failure the temporary file is removed and `path` keeps its previous content.
    package func writeAtomically(_ bytes: UnsafeRawBufferPointer, to path: String) throws(FileError) {
        try writeAtomically(bytes, to: path, creating: .createExclusive)
    }

    /// `writeAtomically` for a secret: the file is its owner's alone (mode 0600) from its first
    /// byte, and the bytes are written from the caller's buffer (never copied into an array).
    package func writeSecretAtomically(_ bytes: UnsafeRawBufferPointer, to path: String) throws(FileError) {
        try writeAtomically(bytes, to: path, creating: .createExclusivePrivate)
    }

    func writeAtomically(_ bytes: UnsafeRawBufferPointer, to path: String, creating mode: OpenMode,
                         syncingDirectory: Bool = true) throws(FileError) {
        let (dir, name) = splitPath(path)
        let temp = dir + "/" + temporaryFilePrefix + UUID().uuidString + "-" + name
        // A failure names the file being written, never the temporary file or its descriptor.
        let fd: FileDescriptor
        do { fd = try open(temp, mode) } catch { throw error.naming(path) }
        do {
            try write(fd, bytes)
            try sync(fd)
        } catch {
            try? close(fd)
            try? unlink(temp)
            throw error.naming(path)
        }
        do {
            try close(fd)
            try rename(temp, to: path)
        } catch {
            try? unlink(temp)
            throw error.naming(path)
        }
        if syncingDirectory { try syncDirectory(dir) }
    }

    /// `writeAtomically` up to the rename, without the folder's sync: when it throws, `path`
    /// holds what it held; when it returns, `path` holds `bytes` and the caller syncs the folder
    /// (a commit point that must know whether the rename happened: TransactionRecord).
    package func writeRenamedUnsynced(_ bytes: [UInt8], to path: String) throws(FileError) {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(FileError) in try writeAtomically(raw, to: path, creating: .createExclusive, syncingDirectory: false) }
        }.get()
    }

    /// `writeAtomically(_:to:)` for bytes in an array: written whole to a temporary file, synced,
    /// renamed over `path`, the folder synced; on failure `path` keeps its previous content.
    package func writeAtomically(_ bytes: [UInt8], to path: String) throws(FileError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try writeAtomically(raw, to: path) } }.get()
    }

    /// `writeAtomically(_:to:)` for `Data`: written whole to a temporary file, synced, renamed
    /// over `path`, the folder synced; on failure `path` keeps its previous content.
    package func writeAtomically(_ data: Data, to path: String) throws(FileError) {
        try data.withUnsafeBytes { raw in Result { () throws(FileError) in try writeAtomically(raw, to: path) } }.get()
    }

    /// Like `writeAtomically(_:to:)` for contents that arrive in pieces: `produce` is given a
    /// function that appends one piece to the temporary file, so a large file is never held in
    /// memory. The file appears at `path` only when `produce` returns and the data is synced;
    /// if `produce` (or a write) throws, the temporary file is removed and the error rethrown.
    package func writeAtomically(to path: String, _ produce: (_ append: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        let (dir, name) = splitPath(path)
        let temp = dir + "/" + temporaryFilePrefix + UUID().uuidString + "-" + name
        let fd = try open(temp, .createExclusive)
        do {
            try produce { piece in try write(fd, piece) }
            try sync(fd)
        } catch {
            try? close(fd)
            try? unlink(temp)
            throw error
        }
        do {
            try close(fd)
            try rename(temp, to: path)
        } catch {
            try? unlink(temp)
            throw error
        }
        try syncDirectory(dir)
    }

    /// Replaces `path` whole without syncing: a temporary file in the same directory, written and
    /// renamed over it. Readers see the old content or the new, never a mix; but a power cut may
    /// bring back the old one, so it is only for files whose rollback does no harm (a cache, or
    /// state the next run repairs by itself). On failure the temporary file is removed.
    package func replaceQuickly(_ bytes: [UInt8], at path: String) throws(FileError) {
        let (dir, name) = splitPath(path)
        let temp = dir + "/" + temporaryFilePrefix + UUID().uuidString + "-" + name
        let fd: FileDescriptor
        do { fd = try open(temp, .createExclusive) } catch { throw error.naming(path) }
        do {
            try write(fd, bytes)
            try close(fd)
            try rename(temp, to: path)
        } catch {
            try? unlink(temp)
            throw error.naming(path)
        }
    }

    /// Writes all of `bytes` at the current offset.
    package func write(_ fd: FileDescriptor, _ bytes: [UInt8]) throws(FileError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try write(fd, raw) } }.get()
    }

    /// Creates a directory if it is not there yet; a file or link in its place is an error.
    package func ensureDirectory(_ path: String) throws(FileError) {
        switch try info(path)?.kind {
        case .directory?: return
        case nil: try makeDirectory(path)
        default: throw FileError("create directory (something else is there)", path: path, errno: EEXIST)
        }
    }

    /// Removes a directory tree (no links are followed: a link is removed, not its target).
    package func removeTree(_ path: String) throws(FileError) {
        guard let i = try info(path) else { return }
        guard i.kind == .directory else { try unlink(path); return }
        for name in try contentsOfDirectory(path) { try removeTree(path + "/" + name) }
        try removeDirectory(path)
    }

    /// Removes a file; nothing there is not an error.
    package func removeIfPresent(_ path: String) throws(FileError) {
        do { try unlink(path) } catch { if !error.isNotFound { throw error } }
    }

    /// Whether a regular file is at `path`.
    package func fileExists(_ path: String) throws(FileError) -> Bool { try info(path)?.kind == .file }
}

extension FileSystem {
}

/// Splits "/a/b/c" into ("/a/b", "c").
func splitPath(_ path: String) -> (String, String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let dir = String(path[..<slash])
    return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
}

extension FileError {
    /// The same failure, said of `path`.
    func naming(_ path: String) -> FileError { FileError(operation, path: path, errno: errno) }
}
