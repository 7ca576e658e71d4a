// The layout of a document package on disk: which file holds what, and how ids become names.
// Specified in docs/package-format.md.

import Foundation
import LulucatInk

/// A document package, `<library>/<document-UUID>.lnote/`, and the paths inside it.
///
/// Every name built here comes from a UUID we generated or validated; names read from disk are
/// parsed back into UUIDs before they are used, never used as paths as they are.
public struct DocumentPackage: Sendable, Hashable {
    /// The extension of a package folder's name, `lnote` (`<UUID>.lnote`): the one to declare
    /// for the document type (a package, a folder shown as one file).
    public static let pathExtension = "lnote"
    /// The document's id, the UUID in the folder's name; the key of every `Library` call.
    public let id: UUID
    /// The package directory, absolute.
    public let path: String

    /// The package of document `id` in the library at `libraryRoot` (nothing is read or checked).
    package init(id: UUID, libraryRoot: String) {
        self.id = id
        self.path = DocumentPackage.joined(libraryRoot, "/", id, DocumentPackage.directorySuffix)
    }

    /// A package at an explicit directory whose name must be `<UUID>.lnote`.
    /// - Throws: `StoreError.invalidIdentifier` when the name is not a UUID with the extension.
    package init(path: String) throws(StoreError) {
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

    /// `<UUID>.lnote`, the folder name of document `id`.
    package static func directoryName(_ id: UUID) -> String { joined("", "", id, directorySuffix) }
    private static let directorySuffix = "." + pathExtension

    /// `head + middle + id.uuidString + tail`, made in one allocation (a listing makes two such
    /// paths per document: the package's and its cover thumbnail's).
    static func joined(_ head: String, _ middle: StaticString, _ id: UUID, _ tail: String) -> String {
        var head = head, tail = tail
        return head.withUTF8 { h in
            tail.withUTF8 { t in
                let count = h.count + middle.utf8CodeUnitCount + 36 + t.count
                return String(unsafeUninitializedCapacity: count) { out in
                    var at = out.baseAddress!
                    func put(_ p: UnsafePointer<UInt8>?, _ n: Int) {
                        if n > 0 { at.update(from: p!, count: n) }
                        at += n
                    }
                    put(h.baseAddress, h.count)
                    put(middle.utf8Start, middle.utf8CodeUnitCount)
                    id.writeCanonical(to: at)
                    at += 36
                    put(t.baseAddress, t.count)
                    return count
                }
            }
        }
    }

    /// The document id of a directory name `<UUID>.lnote`, or nil.
    package static func id(fromDirectoryName name: String) -> UUID? {
        var name = name
        return name.withUTF8 { id(fromDirectoryName: UnsafeRawBufferPointer($0)) }
    }

    /// `id(fromDirectoryName:)` of the name's bytes, read in place (a listing's folder entries).
    static func id(fromDirectoryName name: UnsafeRawBufferPointer) -> UUID? {
        // "<36 bytes of id>.<pathExtension>"
        let ext = pathExtension.utf8
        guard name.count == 37 + ext.count, name[36] == 0x2E, name[37...].elementsEqual(ext) else { return nil }
        return UUID.canonical(utf8: UnsafeRawBufferPointer(rebasing: name[0..<36]))
    }

    // The layout (docs/package-format.md), for the store, sync, the tools and the tests; an app
    // reads a document through its session, and finds thumbnails with `thumbnailPath(_:)`.
    /// `manifest.json`: what a listing reads (title, times, page count).
    package var manifestPath: String { path + "/manifest.json" }
    /// `document.json`: the title, the engine, the page list and each page's metadata.
    package var documentPath: String { path + "/document.json" }
    /// `pages/`: one file per page (snapshot and journal engines).
    package var pagesPath: String { path + "/pages" }
    /// `assets/`: image files, named `<UUID>.<ext>`.
    package var assetsPath: String { path + "/assets" }
    /// `thumbnails/`: one JPEG per page, `<page UUID>.jpg`.
    package var thumbnailsPath: String { path + "/thumbnails" }
    /// `.lock`: the writer lock a session holds (flock).
    package var lockPath: String { path + "/.lock" }
    /// Where undecodable or unlisted pages are moved by repair; never deleted.
    package var recoveredPath: String { path + "/recovered" }

    /// The SQLite engine's database, `<package>/content.sqlite` (named here, not in the engine's
    /// module, so a build without that engine still knows the file).
    package var contentDatabasePath: String { path + "/" + Self.contentDatabaseFileName }
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

    /// `pages/<page>.content`: the page's snapshot.
    package func pagePath(_ page: UUID) -> String { pagesPath + "/" + page.uuidString + ".content" }
    /// `pages/<page>.journal`: the journal engine's changes since the page's snapshot.
    package func journalPath(_ page: UUID) -> String { pagesPath + "/" + page.uuidString + ".journal" }
    /// Where the thumbnail of `page` is (`thumbnails/<page>.jpg`, absolute): a JPEG
    /// `ThumbnailOptions.width` pixels wide, written after the page's save when thumbnails are on
    /// (`Library.enableThumbnails()`), announced by the session's `.thumbnailWritten(page)`.
    /// A page may have none yet (not drawn since it changed, or thumbnails off): show a placeholder.
    public func thumbnailPath(_ page: UUID) -> String { Self.joined(thumbnailsPath, "/", page, ".jpg") }
    /// `assets/<asset>.<ext>`; an app asks its session (`DocumentSession.assetPath(of:)`).
    package func assetPath(_ asset: UUID, ext: String) -> String { assetsPath + "/" + asset.uuidString + "." + ext }

    /// File extensions accepted for assets.
    package static let assetExtensions: Set<String> = ["jpg", "jpeg", "png", "heic"]

    /// Parses `<UUID>.<ext>` with `ext` among `allowed`; nil for any other name.
    package static func parseName(_ name: String, extensions allowed: Set<String>) -> (UUID, String)? {
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
    package init?(strictString s: String) {
        guard let id = UUID.canonical(utf8: s.utf8) else { return nil }
        self = id
    }

    /// The id `utf8` spells in the canonical form, or nil (the rule of `init(strictString:)`),
    /// parsed here digit by digit: `UUID(uuidString:)` goes through sscanf on some platforms, a
    /// cost every listed package paid. The manifest parser reads ids in place with it.
    static func canonical<C: Collection<UInt8>>(utf8: C) -> UUID? {
        if let id = utf8.withContiguousStorageIfAvailable({ canonical(utf8: UnsafeRawBufferPointer($0)) }) { return id }
        guard utf8.count == 36 else { return nil }
        return Array(utf8).withUnsafeBytes { canonical(utf8: $0) }
    }

    /// `canonical(utf8:)` of bytes in memory: the four dashes at their places, then 32 digits, each
    /// checked and taken without a branch per place (a listing parses two or three ids per document).
    static func canonical(utf8 b: UnsafeRawBufferPointer) -> UUID? {
        guard b.count == 36, b[8] == 0x2D, b[13] == 0x2D, b[18] == 0x2D, b[23] == 0x2D else { return nil }
        /// A digit's value, or 0x10 when `c` is not one of 0-9 A-F.
        @inline(__always) func nibble(_ c: UInt8) -> UInt8 {
            let d = c &- 0x30
            if d < 10 { return d }
            let a = c &- 0x41
            return a < 6 ? a + 10 : 0x10
        }
        var t: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var bad: UInt8 = 0
        withUnsafeMutableBytes(of: &t) { u in
            var i = 0
            for o in 0..<16 {
                if o == 4 || o == 6 || o == 8 || o == 10 { i += 1 }  // the dash before this byte
                let high = nibble(b[i]), low = nibble(b[i + 1])
                bad |= high | low
                u[o] = high << 4 | (low & 0x0F)
                i += 2
            }
        }
        return bad & 0x10 == 0 ? UUID(uuid: t) : nil
    }

    /// Whether `s` is exactly the canonical form (see `init(strictString:)`).
    package static func isCanonicalString<S: StringProtocol>(_ s: S) -> Bool {
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
    package static func storeNow() throws(StoreError) -> Date {
        try storeNow(clock: StoreClock.reading ?? Date())
    }

    /// `storeNow` with the clock's reading given (tests pass one far in the future).
    package static func storeNow(clock: Date) throws(StoreError) -> Date {
        let now = Date(timeIntervalSince1970: (clock.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        guard storableRange.contains(now) else {
            throw .invalidArgument("the system clock reads \(clock.timeIntervalSince1970) s since 1970, outside the times a document can hold "
                + "(1970-01-01 to 9999-12-31 UTC); nothing was written: set the clock right and try again")
        }
        return now
    }

    /// The times package files hold (package-format.md): 1970-01-01T00:00:00.000Z to
    /// 9999-12-31T23:59:59.999Z (four-digit years, as the JSON parser reads them).
    package static let storableRange = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799.999)
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

    /// Writes `uuidString`'s 36 bytes (upper-case hexadecimal, 8-4-4-4-12) at `out`, without
    /// making a string.
    package func writeCanonical(to out: UnsafeMutablePointer<UInt8>) {
        let digits: StaticString = "0123456789ABCDEF"
        let hex = digits.utf8Start
        withUnsafeBytes(of: uuid) { b in
            var at = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[at] = 0x2D  // -
                    at += 1
                }
                out[at] = hex[Int(b[i] >> 4)]
                out[at + 1] = hex[Int(b[i] & 0x0F)]
                at += 2
            }
        }
    }

    /// The 16 bytes as two big-endian integers: compared as a pair, the order of `precedesInBytes`.
    package var halves: (UInt64, UInt64) {
        withUnsafeBytes(of: uuid) {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }
}
