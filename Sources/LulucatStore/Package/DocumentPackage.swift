// The layout of a document package on disk: which file holds what, and how ids become names.
// Specified in docs/package-format.md.

import Foundation
import LulucatInk

/// A document package, `<library>/<document-UUID>.lnote/`, and the paths inside it.
///
/// Every name built here comes from a UUID we generated or validated; names read from disk are
/// parsed back into UUIDs before they are used, never used as paths as they are.
public struct DocumentPackage: Sendable, Hashable {
    public static let pathExtension = "lnote"
    public let id: UUID
    /// The package directory, absolute.
    public let path: String

    public init(id: UUID, libraryRoot: String) {
        self.id = id
        self.path = libraryRoot + "/" + DocumentPackage.directoryName(id)
    }

    /// A package at an explicit directory whose name must be `<UUID>.lnote`.
    /// - Throws: `StoreError.invalidIdentifier` when the name is not a UUID with the extension.
    public init(path: String) throws(StoreError) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        let (_, name) = splitPath(p)
        guard let id = DocumentPackage.id(fromDirectoryName: name) else { throw .invalidIdentifier(name) }
        self.id = id
        self.path = p
    }

    init(unchecked path: String, id: UUID) {
        self.id = id
        self.path = path
    }

    public static func directoryName(_ id: UUID) -> String { id.uuidString + "." + pathExtension }

    /// The document id of a directory name `<UUID>.lnote`, or nil.
    public static func id(fromDirectoryName name: String) -> UUID? {
        let suffix = "." + pathExtension
        guard name.hasSuffix(suffix) else { return nil }
        return UUID(strictString: String(name.dropLast(suffix.count)))
    }

    public var manifestPath: String { path + "/manifest.json" }
    public var documentPath: String { path + "/document.json" }
    public var pagesPath: String { path + "/pages" }
    public var assetsPath: String { path + "/assets" }
    public var thumbnailsPath: String { path + "/thumbnails" }
    public var lockPath: String { path + "/.lock" }
    /// Where undecodable or unlisted pages are moved by repair; never deleted.
    public var recoveredPath: String { path + "/recovered" }

    /// The SQLite engine's database, `<package>/content.sqlite` (named here, not in the engine's
    /// module, so a build without that engine still knows the file).
    public var contentDatabasePath: String { path + "/" + Self.contentDatabaseFileName }
    package static let contentDatabaseFileName = "content.sqlite"
    /// The files SQLite keeps beside the database while it is open or after a crash. They are
    /// never copied: a copy carries `content.sqlite` alone, after its checkpoint.
    package static let contentDatabaseSideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// The folders a package of `engine` has: pages/ only for an engine that keeps files per page
    /// (a SQLite package has none; one made before this rule has an empty one, which is read the
    /// same), assets/ and thumbnails/ always (docs/package-format.md).
    package func contentFolders(_ engine: EngineKind) -> [String] {
        engine.pagesHaveOwnFiles ? [pagesPath, assetsPath, thumbnailsPath] : [assetsPath, thumbnailsPath]
    }

    /// Removes an empty pages/ from a package whose engine keeps no files there (after a migration
    /// into SQLite); one that holds anything stays. True when it was removed (the package folder
    /// must then be synced).
    package func removeEmptyPagesFolder(_ engine: EngineKind, fileSystem fs: any FileSystem) throws(StoreError) -> Bool {
        guard !engine.pagesHaveOwnFiles, try fs.checked.info(pagesPath)?.kind == .directory,
              try fs.checked.contentsOfDirectory(pagesPath).isEmpty else { return false }
        try StoreError.io { () throws(FileError) in try fs.removeDirectory(pagesPath) }
        return true
    }

    public func pagePath(_ page: UUID) -> String { pagesPath + "/" + page.uuidString + ".content" }
    public func journalPath(_ page: UUID) -> String { pagesPath + "/" + page.uuidString + ".journal" }
    public func thumbnailPath(_ page: UUID) -> String { thumbnailsPath + "/" + page.uuidString + ".jpg" }
    public func assetPath(_ asset: UUID, ext: String) -> String { assetsPath + "/" + asset.uuidString + "." + ext }

    /// File extensions accepted for assets.
    public static let assetExtensions: Set<String> = ["jpg", "jpeg", "png", "heic"]

    /// Parses `<UUID>.<ext>` with `ext` among `allowed`; nil for any other name.
    public static func parseName(_ name: String, extensions allowed: Set<String>) -> (UUID, String)? {
        guard let dot = name.firstIndex(of: "."), let id = UUID(strictString: String(name[..<dot])) else { return nil }
        let ext = String(name[name.index(after: dot)...])
        guard allowed.contains(ext) else { return nil }
        return (id, ext)
    }
}

extension UUID {
    /// Parses exactly the canonical form `UUID.uuidString` writes: 36 bytes, 8-4-4-4-12 upper-case
    /// hexadecimal digits, nothing looser (no lower case, no braces, nothing after it, not even a
    /// NUL). One rule for every id the store reads: folder and file names, the package JSON files,
    /// and the names in an imported archive (`PackageLayout`). A name in another spelling would
    /// be rebuilt as a different path on a case-sensitive disk.
    public init?(strictString s: String) {
        guard let id = UUID.canonical(utf8: s.utf8) else { return nil }
        self = id
    }

    /// The id `utf8` spells in the canonical form, or nil (the rule of `init(strictString:)`),
    /// parsed here digit by digit: `UUID(uuidString:)` goes through sscanf on some platforms, a
    /// cost every listed package paid. The manifest parser reads ids in place with it.
    static func canonical<C: Collection<UInt8>>(utf8: C) -> UUID? {
        var t: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &t) { u -> Bool in
            var position = 0, digits = 0
            for c in utf8 {
                guard position < 36 else { return false }
                defer { position += 1 }
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard c == 45 else { return false }
                    continue
                }
                let v: UInt8
                switch c {
                case 48...57: v = c - 48
                case 65...70: v = c - 55
                default: return false
                }
                if digits & 1 == 0 { u[digits >> 1] = v << 4 } else { u[digits >> 1] |= v }
                digits += 1
            }
            return position == 36
        }
        return ok ? UUID(uuid: t) : nil
    }

    /// Whether `s` is exactly the canonical form (see `init(strictString:)`).
    public static func isCanonicalString<S: StringProtocol>(_ s: S) -> Bool {
        var count = 0
        for c in s.utf8 {
            if count == 8 || count == 13 || count == 18 || count == 23 {
                guard c == 45 else { return false }
            } else {
                guard (c >= 48 && c <= 57) || (c >= 65 && c <= 70) else { return false }
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }
}

/// The clock the store reads for the times it writes (`Date.storeNow`): the system's, or within a
/// task a reading tests give (a task-local value, so tests running at once do not see each other's).
package enum StoreClock {
    @TaskLocal package static var reading: Date?
}

extension Date {
    /// Now, truncated to the millisecond the package JSON files keep, so values round-trip exactly.
    /// - Throws: `.invalidArgument` when the system clock is outside `Date.storableRange` (a
    ///   time the package files cannot hold): nothing is written with it (package-format.md).
    public static func storeNow() throws(StoreError) -> Date {
        try storeNow(clock: StoreClock.reading ?? Date())
    }

    /// `storeNow` with the clock's reading given (tests pass one far in the future).
    public static func storeNow(clock: Date) throws(StoreError) -> Date {
        let now = Date(timeIntervalSince1970: (clock.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        guard storableRange.contains(now) else {
            throw .invalidArgument("the system clock reads \(clock.timeIntervalSince1970) s since 1970, outside the times a document can hold "
                + "(1970-01-01 to 9999-12-31 UTC); nothing was written: set the clock right and try again")
        }
        return now
    }

    /// The times package files hold (package-format.md): 1970-01-01T00:00:00.000Z to
    /// 9999-12-31T23:59:59.999Z (four-digit years, as the JSON parser reads them).
    public static let storableRange = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799.999)
}

extension DocumentPackage {
    /// Takes the document's writer lock (`.lock`, flock) without waiting.
    /// - Throws: `StoreError.documentInUse` when a session or process holds it,
    ///   `StoreError.documentNotFound` when the package is not there.
    package func lockForWriting(_ fs: any FileSystem) throws(StoreError) -> FileDescriptor {
        do { return try fs.lock(lockPath) } catch {
            if error.isWouldBlock { throw .documentInUse(path: path) }
            if error.isNotFound { throw .documentNotFound(path) }
            throw .file(error)
        }
    }
}

extension UUID {
    /// Whether this id's 16 bytes sort before `other`'s, byte by byte (the canonical order of the
    /// tables), without making arrays: the bytes as two big-endian integers. The same order as
    /// their `uuidString`s (upper-case hex at fixed places), without formatting two strings for
    /// every comparison (a listing and a sync round sort every document's id).
    package func precedesInBytes(_ other: UUID) -> Bool {
        let a = halves, b = other.halves
        return a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }

    private var halves: (UInt64, UInt64) {
        withUnsafeBytes(of: uuid) {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }
}
