// Documents leaving and entering the library: a consistent read of a package for export, and the
// checked import of a package from elsewhere (untrusted input).

import Foundation
import LulucatInk

/// What an import brought in, and what verification noticed that was not an error.
public struct ImportResult: Sendable {
    /// The new document's package in the library.
    public var package: DocumentPackage
    /// True when the archive's document id was already in the library and a new one was given.
    public var renumbered: Bool
    /// What verification noticed that was not an error (warnings; an error refuses the import).
    public var findings: [Finding]
}

extension StoreError {
    /// An imported package that fails verification; nothing was added to the library.
    public static func importRejected(_ findings: [Finding]) -> StoreError {
        // One line: a sentence a person reads, and lnote prints as it is (a line break would be
        // shown as an escaped "\n").
        .importRefused(reason: "the imported document is not valid, nothing was imported: " + findings.map { "\($0)" }.joined(separator: "; "), cause: nil)
    }

    /// What an import throws for `error`: a `StoreError` as it is, a file error of the library's
    /// storage as `.file`, a task's cancellation as `.cancelled`, anything else (the input's
    /// own reader failing) as `.importRefused`.
    init(importing error: any Error) {
        switch error {
        case let e as StoreError: self = e
        case let e as FileError: self = .file(e)
        case is CancellationError: self = .cancelled
        default: self = .importRefused(reason: "\(error); nothing was imported", cause: nil)
        }
    }

    /// The reason of an `.importRefused`, nil for any other error.
    public var importRefusal: (reason: String, cause: (any Error & Sendable)?)? {
        if case let .importRefused(reason, cause) = self { return (reason, cause) }
        return nil
    }
}

extension Library {
    /// Calls `body` with the package and its files (relative paths), and returns what it returns
    /// only if none of those files changed while it ran (an export sees one consistent state).
    ///
    /// No lock is taken: a session may hold the document open, in this process or another, and
    /// go on saving while it is read. Each file's stamp (inode, size, modification and change
    /// times) and the list of files are taken before and after `body`; when anything changed
    /// (a save landed meanwhile), `body` runs again, up to `consistentReadAttempts` times, then
    /// the read fails (an error naming the attempts) and nothing is returned. Snapshot files are replaced
    /// by rename and journals only grow, so equal stamps mean the bytes `body` read belong
    /// together. A failure of `body` while the files changed (a page removed under it) is retried
    /// the same way. Works on a read-only place too.
    ///
    /// A SQLite document whose WAL holds changes is checkpointed first, which needs the
    /// document's lock, held only for the checkpoint: when a session holds it, or the place is
    /// read-only, the read is refused (its database file alone would be stale; export it when the
    /// session has closed, or from where it can be written).
    public func withConsistentFiles<T>(_ id: UUID, _ body: (DocumentPackage, [String]) throws -> T) throws -> T {
        let fs = fileSystem
        let package = self.package(id)
        var lastError: (any Error)?
        for _ in 0..<Library.consistentReadAttempts {
            try finishTransaction(package)
            let doc = try PackageReader.readDocument(package, fileSystem: fs)
            if try doc.engine.needsPreparationForCopy(package, fileSystem: fs) {
                let lock: FileDescriptor
                do { lock = try package.lockForWriting(fs) } catch {
                    if case .file(let e) = error, e.errno == EROFS || e.errno == EACCES || e.errno == EPERM {
                        throw StoreError.invalidArgument("\(package.path) is read-only and its SQLite WAL holds changes not yet in content.sqlite; open it once where it can be written")
                    }
                    if case .documentInUse = error {
                        throw StoreError.invalidArgument("\(package.path) is a SQLite document open in a session whose WAL holds changes not yet in content.sqlite; export it when the session has closed")
                    }
                    throw error
                }
                defer { fs.unlock(lock) }
                try doc.engine.prepareForCopy(package, fileSystem: fs)
            }
            let files = try packageFiles(package)
            let before = try stamps(package, files)
            try Library.checkSizes(zip(files, before).map { ($0, $1?.size ?? 0) }, "exported")
            let result: T
            do { result = try body(package, files) } catch {
                // A cancelled task is not read again.
                if case .cancelled? = error as? StoreError { throw error }
                let now = try? stamps(package, (try? packageFiles(package)) ?? [])
                guard let now, now != before else { throw error }
                lastError = error
                continue
            }
            let afterFiles = try packageFiles(package)
            if afterFiles == files, try stamps(package, afterFiles) == before { return result }
        }
        throw StoreError.invalidArgument("\(package.path) changed while it was read, \(Library.consistentReadAttempts) times (a session is saving it)\(lastError.map { "; last: \($0)" } ?? ""); try again")
    }

    /// A transaction record in the package (docs/package-format.md): its files are not yet what
    /// it committed. Finished here under the document's lock when nobody holds it (a crash left
    /// it); waited for, up to 10 s, while a session writes it; refused where it cannot be written.
    func finishTransaction(_ package: DocumentPackage) throws(StoreError) {
        let fs = fileSystem
        let deadline = ContinuousClock.now + .seconds(10)
        while try fs.checked.fileExists(package.transactionPath) {
            let lock: FileDescriptor
            do { lock = try package.lockForWriting(fs) } catch {
                if case .file(let e) = error, e.errno == EROFS || e.errno == EACCES || e.errno == EPERM {
                    throw StoreError.invalidArgument("\(package.path) holds a transaction a crash interrupted, which only a writer can finish; open it once where it can be written")
                }
                guard case .documentInUse = error, ContinuousClock.now < deadline else { throw error }
                usleep(1000)  // a session is writing the transaction's files: a few milliseconds
                continue
            }
            defer { fs.unlock(lock) }
            var findings: [Finding] = []
            try package.completeTransaction(fileSystem: fs, findings: &findings)
        }
    }

    /// How many times `withConsistentFiles` reads a document that keeps changing under it.
    public static let consistentReadAttempts = 5

    /// document.json, manifest.json unless it is missing (a cache, rebuilt by every open and
    /// import), and the content files.
    private func packageFiles(_ package: DocumentPackage) throws(StoreError) -> [String] {
        let manifest = try fileSystem.checked.info(package.manifestPath) != nil
        return ["document.json"] + (manifest ? ["manifest.json"] : []) + (try PackageReader.contentFiles(package, fileSystem: fileSystem))
    }

    /// The stamps of `files` (package-relative), nil for one that is not there.
    private func stamps(_ package: DocumentPackage, _ files: [String]) throws(StoreError) -> [FileStamp?] {
        try StoreError.io { () throws(FileError) in try files.map { f throws(FileError) in try fileSystem.stamp(package.path + "/" + f) } }
    }

    /// Whether `path` (relative to a package) is a file of the package layout.
    public static func isPackageFile(_ path: String) -> Bool {
        if ["manifest.json", "document.json"].contains(path) || EngineKind.allRootFiles.contains(path) { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        switch parts[0] {
        case "pages": return DocumentPackage.parseName(String(parts[1]), extensions: EngineKind.allPageFileExtensions) != nil
        case "assets": return DocumentPackage.parseName(String(parts[1]), extensions: DocumentPackage.assetExtensions) != nil
        case "thumbnails": return DocumentPackage.parseName(String(parts[1]), extensions: ["jpg"]) != nil
        default: return false
        }
    }
}

// MARK: - Bounded, streamed import

/// What an import may cost, whatever the archive claims (export-format.md §6). Every document the
/// store writes stays within them: a page file is at most `PackageLimits.maxPageFileSize`, and
/// the rest are what the archive's own limits bound.
public enum ImportLimits {
    /// Files one imported document may hold (an archive's entries, folders included): so at most
    /// this many pages and assets. A synced document is held to the same (docs/sync.md §4).
    public static let maxFiles = 60_000
    /// The declared sizes of one imported document's files together: 4 GiB - 1. A synced
    /// document's pages, as they would be written here, are held to the same (docs/sync.md §4).
    public static let maxDocumentBytes: UInt64 = 4 << 30 - 1
    /// Files an import writes that document.json does not account for (orphan assets): at most
    /// this many, and at most `maxOrphanBytes` in all; the rest are skipped, not written.
    public static let maxOrphanAssets = 64
    /// The bytes of the orphan assets an import writes, in all (see `maxOrphanAssets`).
    public static let maxOrphanBytes: UInt64 = 64 << 20
    /// One asset file.
    public static let maxAssetSize: UInt64 = 256 << 20
    /// One thumbnail file.
    public static let maxThumbnailSize: UInt64 = 16 << 20
    /// The SQLite engine's database, whole.
    public static let maxDatabaseSize: UInt64 = 4 << 30 - 1
    /// Most elements replaying one page's journal may visit (`PageChange.scanCost` summed over its
    /// frames; an append counts its elements): 2^28, a second or two. Each delete, replace,
    /// update or move passes over the page, so a journal of many small frames on a page of many
    /// elements costs frames x elements; a 76 KB archive could otherwise hold hours of it. The
    /// journal engine compacts after 4,096 frames, so a document it wrote stays within this for
    /// pages of up to 32,000 elements whatever its frames did; a journal past it is refused with
    /// the import, nothing written (open and close the document where it was written: that
    /// compacts it).
    public static let maxReplayScan = 1 << 28

    /// The most bytes a file of a package may hold, by its package-relative path: a page file or
    /// journal (`PackageLimits`), an asset, a thumbnail, the database, document.json or the
    /// manifest; nil for a path outside the layout. Import, export and duplicate refuse a larger
    /// file by its size, before reading it.
    public static func maxSize(of path: String) -> UInt64? {
        if path == "document.json" || path == "manifest.json" { return UInt64(PackageJSON.maxFileSize) }
        if EngineKind.allRootFiles.contains(path) { return maxDatabaseSize }
        switch path.split(separator: "/").first {
        case "pages": return UInt64(path.hasSuffix(".journal") ? PackageLimits.maxJournalFileSize : PackageLimits.maxPageFileSize)
        case "thumbnails": return maxThumbnailSize
        case "assets": return maxAssetSize
        default: return nil
        }
    }
}

extension Library {
    /// Refuses a package file over its limit (`ImportLimits.maxSize(of:)`), from its size alone:
    /// what `operation` (export, duplicate) would read whole, verify refuses by the same size.
    static func checkSizes(_ sizes: [(path: String, size: Int)], _ operation: String) throws(StoreError) {
        for (path, size) in sizes {
            guard let limit = ImportLimits.maxSize(of: path), UInt64(max(0, size)) > limit else { continue }
            throw .invalidArgument("'\(path)' is \(size) bytes, more than the \(limit) such a file may hold; nothing was \(operation) "
                + "(lnote verify reports it; lnote repair moves a damaged page aside)")
        }
    }
}

/// The first bytes of a page file or a database an import streams, checked as soon as they are
/// in, so a file that is not one (a page of zeros declaring 512 MiB, a database of zeros declaring
/// 3.5 GiB) is refused after its first piece, not once it is inflated whole (export-format.md).
/// A page file: its 16-byte header and, in version 2, the header's CRC32C (`PageFile.readHeader`);
/// a database: the SQLite magic, a page size of 512 to 65,536 that divides the declared size.
struct StreamedHeaderCheck {
    let path: String
    let size: UInt64
    private var head: [UInt8] = []
    private var needed: Int

    init(path: String, size: UInt64) {
        self.path = path
        self.size = size
        if path.hasSuffix(".content") { needed = PageFile.checkedHeaderSize + PageFile.trailerSize }
        else if EngineKind.allRootFiles.contains(path) { needed = 100 }
        else { needed = 0 }
    }

    mutating func take(_ piece: UnsafeRawBufferPointer) throws(StoreError) {
        guard needed > 0 else { return }
        head += piece.prefix(needed - head.count)
        guard head.count == needed else { return }
        needed = 0
        if path.hasSuffix(".content") { try checkPage() } else { try checkDatabase() }
    }

    private func refuse(_ why: String) -> StoreError {
        .importRefused(reason: "'\(path)' (\(size) bytes declared) \(why); nothing was imported", cause: nil)
    }

    private func checkPage() throws(StoreError) {
        let checked = head.withUnsafeBytes { raw in
            Result { () throws(PageFormatError) in
                if try PageFile.readHeader(raw).version >= 2 { try PageFile.verifyHeaderChecksum(raw) }
            }
        }
        if case .failure(let error) = checked { throw refuse("does not start as a page file: \(error)") }
    }

    private func checkDatabase() throws(StoreError) {
        guard head.starts(with: Array("SQLite format 3\u{0}".utf8)) else { throw refuse("does not start as a SQLite database") }
        let raw = Int(head[16]) << 8 | Int(head[17])
        let pageSize = raw == 1 ? 65_536 : raw
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0, size % UInt64(pageSize) == 0 else {
            throw refuse("is not a whole number of SQLite pages (page size \(pageSize))")
        }
    }
}

/// One file an import may bring in: its package-relative path, its declared size, and a function
/// that streams its bytes (checked as they come: a size or checksum mismatch throws at the end).
public struct ImportFile: Sendable {
    /// The file's path relative to the package (`pages/<UUID>.page`, `assets/<UUID>.png`, ...).
    public var path: String
    /// The size the archive declares for it; the streamed bytes must match it.
    public var size: UInt64
    /// A file at `path` (package-relative) of `size` bytes.
    public init(path: String, size: UInt64) { self.path = path; self.size = size }
}

extension Library {
    /// Imports a package from elsewhere, bounded and streamed.
    ///
    /// `document` (document.json) is decoded and checked before anything is written. Then only
    /// the files it accounts for are written (page files and journals of listed pages, the
    /// database of a SQLite document, thumbnails of listed pages, assets the pages list, and at
    /// most `ImportLimits.maxOrphanAssets` others), each streamed by `copy` into a staging
    /// folder, never held whole in memory. Every other file is skipped (reported as a finding),
    /// never inflated. The staged package is checked as `lnote verify` checks it and claimed
    /// atomically: the rename fails if the id's folder appeared meanwhile, and the document gets
    /// a new id. On any failure the staging folder is removed.
    ///
    /// Progress is reported in files written (`.importing`), plus one last unit for the check and
    /// the claim; the last report (`completed == total`) comes once the document is in the
    /// library. Cancellation of the task is checked before each file, between the pieces of a
    /// file and before the claim: a cancelled import throws `.cancelled` and leaves no document
    /// and no staging folder. Once the claim's rename is done the import is finished.
    /// - Parameters:
    ///   - document: the bytes of the package's `document.json`, the document's truth (its id,
    ///     title, page list), checked before anything is written.
    ///   - files: the package's other files, by relative path and size, as the archive lists
    ///     them; each is written through `copy`.
    ///   - progress: called between steps, on the calling thread.
    ///   - copy: streams one file's bytes to the function it is given. A `StoreError` it throws
    ///     is rethrown as is; any other error is an `.importRefused` naming it.
    /// - Throws: `.importRefused` for an input that is not a package, breaks a limit
    ///   (`ImportLimits`, `PackageLimits`) or does not verify; `.cancelled`; `.file` for the
    ///   library's own storage (a full disk: `isOutOfSpace`). Nothing is imported on any of them.
    public func importPackage(document: Data, files: [ImportFile],
                              progress: (OperationProgress) -> Void = { _ in },
                              copy: (_ path: String, _ append: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws(StoreError) -> ImportResult {
        do { return try importStaged(document: document, files: files, progress: progress, copy: copy) } catch {
            throw StoreError(importing: error)
        }
    }

    private func importStaged(document: Data, files: [ImportFile], progress: (OperationProgress) -> Void,
                              copy: (_ path: String, _ append: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> ImportResult {
        try ProgressReporter.checkCancellation()
        var doc: DocumentMetadata
        do { doc = try PackageJSON.decodeDocument([UInt8](document), path: "document.json (imported)") } catch {
            // A newer format says so (update the app); anything else is not a document.
            if case .unsupportedVersion = error { throw error }
            throw StoreError.importRefused(reason: "\(error)", cause: nil)
        }
        var findings: [Finding] = []
        let listedPages = Set(doc.pages.map(\.id))
        let listedAssets = Set(doc.pages.flatMap(\.assets))
        var keep: [ImportFile] = []
        var seen = Set<String>()
        var orphans = 0
        var orphanBytes: UInt64 = 0
        for file in files {
            guard Library.isPackageFile(file.path) else { throw StoreError.importRefused(reason: "'\(file.path)' is not a file of a document package", cause: nil) }
            guard seen.insert(file.path).inserted else { throw StoreError.importRefused(reason: "'\(file.path)' appears twice", cause: nil) }
            func skip(_ why: String) { findings.append(Finding(.warning, file.path, "not imported: \(why)")) }
            func tooLarge(_ limit: UInt64) throws {
                if file.size > limit {
                    throw StoreError.importRefused(reason: "'\(file.path)' declares \(file.size) bytes, more than the limit of \(limit); nothing was imported", cause: nil)
                }
            }
            let parts = file.path.split(separator: "/")
            switch parts.count == 2 ? String(parts[0]) : file.path {
            case "document.json", "manifest.json":
                continue  // read above; the manifest is rebuilt
            case let root where EngineKind.allRootFiles.contains(root):
                guard doc.engine.rootFiles.contains(root) else { skip("the document does not use the engine that keeps this file"); continue }
                try tooLarge(ImportLimits.maxSize(of: file.path)!)
            case "pages":
                guard let (id, ext) = DocumentPackage.parseName(String(parts[1]), extensions: EngineKind.allPageFileExtensions), listedPages.contains(id) else {
                    skip("a page document.json does not list"); continue
                }
                guard doc.engine.pageFileExtensions.contains(ext) else { skip("the document does not use the engine that keeps this file"); continue }
                try tooLarge(ImportLimits.maxSize(of: file.path)!)
            case "thumbnails":
                guard let (id, _) = DocumentPackage.parseName(String(parts[1]), extensions: ["jpg"]), listedPages.contains(id) else {
                    skip("the thumbnail of a page document.json does not list"); continue
                }
                try tooLarge(ImportLimits.maxSize(of: file.path)!)
            case "assets":
                try tooLarge(ImportLimits.maxSize(of: file.path)!)
                if let (id, _) = DocumentPackage.parseName(String(parts[1]), extensions: DocumentPackage.assetExtensions), listedAssets.contains(id) { break }
                guard orphans < ImportLimits.maxOrphanAssets, orphanBytes + file.size <= ImportLimits.maxOrphanBytes else {
                    skip("an asset no page lists, beyond the \(ImportLimits.maxOrphanAssets) (\(ImportLimits.maxOrphanBytes >> 20) MiB) kept"); continue
                }
                orphans += 1
                orphanBytes += file.size
            default:
                skip("not a file of the package layout"); continue
            }
            keep.append(file)
        }

        try prepare()
        let fs = fileSystem
        let stagingID = UUID()
        let staging = DocumentPackage(unchecked: root + "/" + temporaryFilePrefix + "import-" + stagingID.uuidString, id: stagingID)
        var stagingLock: FileDescriptor?
        defer { if let stagingLock { fs.unlock(stagingLock) } }
        do {
            try fs.checked.makeDirectory(staging.path)
            // Held until the package is in place (it becomes the document's own lock): a live
            // import's staging folder is told from a killed one's by this lock.
            stagingLock = try staging.lockForWriting(fs)
            for dir in staging.contentFolders(doc.engine) { try fs.checked.makeDirectory(dir) }
            var reporter = ProgressReporter(.importing, total: keep.count + 1)
            reporter.report(0, to: progress)
            for (i, file) in keep.enumerated() {
                try ProgressReporter.checkCancellation()
                var header = StreamedHeaderCheck(path: file.path, size: file.size)
                try fs.writeAtomically(to: staging.path + "/" + file.path) { append in
                    try withoutActuallyEscaping(append) { a in
                        try copy(file.path) { piece in
                            try ProgressReporter.checkCancellation()
                            try header.take(piece)
                            try a(piece)
                        }
                    }
                }
                reporter.report(i + 1, to: progress)
            }
            // Page metadata in document.json is derived from the pages (a document exported from a
            // session that was killed may lag them): brought in line, as an open after a crash does.
            let staged = DocumentPackage(unchecked: staging.path, id: doc.id)
            if let engine = try? DocumentSession.makeEngine(doc, package: staged, fileSystem: fs) {
                engine.limitReadCost(ImportLimits.maxReplayScan)
                for i in doc.pages.indices {
                    if let content = try? engine.checkPage(doc.pages[i].id) { _ = doc.pages[i].reconcile(with: content) }
                }
                try? engine.close()
            }
            var renumbered = false
            func taken(_ id: UUID) throws(StoreError) -> Bool {
                try StoreError.io { () throws(FileError) in
                    let inLibrary = try fs.info(package(id).path) != nil
                    let inTrash = try fs.info(trashPath + "/" + DocumentPackage.directoryName(id)) != nil
                    return inLibrary || inTrash
                }
            }
            if try taken(doc.id) { doc.id = UUID(); renumbered = true }
            for attempt in 0..<3 {
                // The manifest is a cache: always rebuilt from the imported truth.
                try fs.checked.writeAtomically(PackageJSON.encode(doc), to: staging.documentPath)
                try fs.checked.writeAtomically(PackageJSON.encode(Manifest(doc)), to: staging.manifestPath)
                if attempt == 0 {
                    let check = DocumentPackage(unchecked: staging.path, id: doc.id)
                    // Throws `.cancelled` for a cancelled task (not a rejection of the input).
                    findings += try DocumentVerifier(fileSystem: fs, replayScanBudget: ImportLimits.maxReplayScan).verify(check, progress: { _ in })
                    let errors = findings.filter { $0.severity == .error }
                    guard errors.isEmpty else { throw StoreError.importRejected(errors) }
                }
                let final = package(doc.id)
                // The last point where a cancelled import leaves nothing: after the rename it is done.
                try ProgressReporter.checkCancellation()
                // rename(2) of a folder onto a folder that is not empty fails: the claim of the
                // id is atomic, and a concurrent import of the same archive loses it cleanly.
                let claimed = try StoreError.io { () throws(FileError) -> Bool in
                    try fs.syncDirectory(staging.path)
                    do throws(FileError) { try fs.rename(staging.path, to: final.path) } catch {
                        if error.errno == ENOTEMPTY || error.errno == EEXIST { return false }
                        throw error
                    }
                    return true
                }
                guard claimed else {
                    doc.id = UUID()
                    renumbered = true
                    continue
                }
                try fs.checked.syncDirectory(root)
                reporter.report(reporter.total, to: progress)
                return ImportResult(package: final, renumbered: renumbered, findings: findings)
            }
            throw StoreError.importRefused(reason: "could not claim a document id for the import (the library changed under it three times)", cause: nil)
        } catch {
            try? fs.removeTree(staging.path)
            throw error
        }
    }

    /// Staging folders of imports and copies (`.lnote-tmp-*` in the root and the trash): an
    /// import that was killed leaves one. `lnote verify` reports them; the library's open (the
    /// first `prepare` of a process: its first create or import) removes those older than an hour
    /// and killed imports', `removeStaleStagingFolders(olderThan: 0)` all but running imports'.
    public func stagingFolders() -> [String] {
        var found: [String] = []
        for folder in [root, trashPath] {
            for name in (try? fileSystem.contentsOfDirectory(folder)) ?? [] where name.hasPrefix(temporaryFilePrefix) {
                found.append(folder + "/" + name)
            }
        }
        return found.sorted()
    }
}
