// The note library: a folder of document packages. Listing reads one manifest per document.

import Foundation
import LulucatInk

/// What the library view shows of one document, read from its manifest alone.
public struct LibraryEntry: Sendable, Equatable {
    /// The document's id (its package is `<id>.lnote`).
    public var id: UUID
    /// The document's title, as the person gave it.
    public var title: String
    /// When the document was made.
    public var created: Date
    /// When the document last changed (the library lists the newest first).
    public var modified: Date
    /// How many pages the document has.
    public var pageCount: Int
    /// The page the library grid shows (the first), nil for a document with no page.
    public var coverPageID: UUID?
    /// Where the cover thumbnail is (it may not exist yet).
    public var coverThumbnailPath: String?
    /// Where the cover thumbnail is, as a file URL (`coverThumbnailPath`'s file; it may not exist yet).
    public var coverThumbnailURL: URL? { coverThumbnailPath.map { URL(fileURLWithPath: $0, isDirectory: false) } }
    /// The document's package folder (in the library, or in its trash for `trashedDocuments()`).
    public var package: DocumentPackage
    /// Set when the manifest could not be used and the entry came from document.json instead,
    /// when its engine is not in this build (`unavailableEngine`), or when the document needs
    /// repair (then it starts "needs repair: ").
    public var problem: String?
    /// Damage was found in the document (by a session's open or a page read: its `.needs-repair`
    /// marker, docs/package-format.md) and `lnote repair` has not run since.
    public var needsRepair = false
    /// The document's engine, when this build does not include it (`EngineKind.isAvailable` false:
    /// a SQLite document without LulucatStoreSQLite enabled). It is listed with its title and
    /// left untouched; opening, verifying or repairing it throws `StoreError.engineNotAvailable`.
    public var unavailableEngine: EngineKind?
}

/// A library of documents under one root folder.
public struct Library: Sendable {
    /// The root folder's path, without a trailing slash. Each document is a `<UUID>.lnote` package
    /// folder in it (docs/package-format.md).
    public let root: String
    /// The file system every read and durable write of this library goes through (the real one,
    /// or a simulated one in tests).
    public let fileSystem: any FileSystem
    /// Deleted documents wait here until the trash is emptied.
    public var trashPath: String { root + "/.trash" }
    /// The root folder as a file URL (`root`'s folder), for Apple's APIs that take one.
    public var rootURL: URL { URL(fileURLWithPath: root, isDirectory: true) }

    /// The library in the folder at `root` (a path; trailing slashes are dropped). Nothing is read
    /// or created until the first operation (`prepare()` creates the folder).
    public init(root: String, fileSystem: any FileSystem = PosixFileSystem()) {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        self.root = r
        self.fileSystem = fileSystem
    }

    /// The library in the folder `root` names, given as a file URL (what `FileManager` and a
    /// document picker hand out): the same library as `init(root:)` with the URL's path.
    /// - Precondition: `root` is a file URL (`isFileURL`); a library is a local folder.
    public init(root: URL, fileSystem: any FileSystem = PosixFileSystem()) {
        precondition(root.isFileURL, "a library's root must be a file URL, not \(root)")
        self.init(root: root.path, fileSystem: fileSystem)
    }

    /// `$LNOTE_LIBRARY`, else the platform's place for a user's notes: `~/Documents/Notes` on
    /// Apple systems, the XDG data directory on others (`$XDG_DATA_HOME/lulucat/Notes`, or
    /// `~/.local/share/lulucat/Notes` when `XDG_DATA_HOME` is unset or not absolute, as the XDG
    /// Base Directory specification says). A relative `$LNOTE_LIBRARY` is returned as it is; the
    /// caller resolves it against its working directory.
    public static func defaultRoot(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let r = environment["LNOTE_LIBRARY"], !r.isEmpty { return r }
        let home = environment["HOME"] ?? NSHomeDirectory()
        #if canImport(Darwin)
        return home + "/Documents/Notes"
        #else
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/lulucat/Notes" }
        return home + "/.local/share/lulucat/Notes"
        #endif
    }

    /// Creates the root folder (and its parents) when missing. The first call for a root in a
    /// process is the library's open: it also removes what crashes left of packages being built
    /// (`removeStaleStagingFolders`, which lists the root and the trash). Later calls (every
    /// create and import) cost the same in a library of any size: they list nothing. A process
    /// that runs for days calls `removeStaleStagingFolders` itself (its `async` overload off the
    /// caller's actor) now and then to catch what another process's crash left meanwhile.
    public func prepare() throws(StoreError) {
        try prepareRoot()
        if StagingCleanup.shared.isFirstOpen(of: root) { removeStaleStagingFolders() }
    }

    /// Creates the root folder (and its parents) when missing; lists nothing.
    func prepareRoot() throws(StoreError) {
        // The usual case, one stat: the root is a folder already (a link to one takes the walk).
        if try fileSystem.checked.info(root)?.kind == .directory { return }
        var path = ""
        for part in root.split(separator: "/", omittingEmptySubsequences: true) {
            let parent = path.isEmpty ? "/" : path
            path += "/" + part
            // The root and its parents are the user's: a link to a folder there is followed.
            if try fileSystem.checked.info(path)?.kind == .symlink {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { continue }
            }
            try ensureDurableDirectory(path, parent: parent)
        }
    }

    /// Removes what a crash left of packages being built (create, duplicate, import, emptying the
    /// trash): `.lnote-tmp-*` folders in the root and the trash older than `age`. Younger ones may
    /// belong to another process at work. They never hold a document the library shows. An
    /// import's folder whose lock is held (the import is running) is never removed, however old;
    /// one whose lock is free goes after a minute. Lists the root and the trash: `prepare` calls
    /// it once per root and process (the library's open), never on each create or import.
    /// Returns the folders removed.
    @discardableResult
    public func removeStaleStagingFolders(olderThan age: TimeInterval = 3600) -> [String] {
        var removed: [String] = []
        let fm = FileManager.default
        for folder in [root, trashPath] {
            guard let names = try? fileSystem.contentsOfDirectory(folder) else { continue }
            for name in names where name.hasPrefix(temporaryFilePrefix) {
                let path = folder + "/" + name
                // Folder times come from the real file system; a simulated one has none to give.
                guard let modified = (try? fm.attributesOfItem(atPath: path))?[.modificationDate] as? Date else { continue }
                let old = Date().timeIntervalSince(modified)
                // An import holds its staging folder's lock while it runs: one whose lock is free
                // was left by an import that was killed, and goes at once (after a minute, so an
                // import between creating the folder and locking it is not disturbed).
                var abandoned = false
                if (try? fileSystem.fileExists(path + "/.lock")) == true {
                    guard let lock = try? fileSystem.lock(path + "/.lock") else { continue }  // in use
                    fileSystem.unlock(lock)
                    abandoned = old > 60
                }
                guard abandoned || old > age else { continue }
                if (try? fileSystem.removeTree(path)) != nil { removed.append(path) }
            }
        }
        return removed
    }

    /// Creates a folder when missing and, when it did, syncs its parent: a new folder's entry is
    /// durable only then, and whatever is later renamed into the folder depends on it.
    func ensureDurableDirectory(_ path: String, parent: String) throws(StoreError) {
        let fs = fileSystem
        do {
            let existed = try fs.checked.info(path) != nil
            try fs.checked.ensureDirectory(path)
            if !existed { try fs.checked.syncDirectory(parent) }
        }
    }

    /// The package of the document `id` in this library (whether or not it exists).
    public func package(_ id: UUID) -> DocumentPackage { DocumentPackage(id: id, libraryRoot: root) }

    // MARK: Listing

    /// Every document, newest first, from its manifest alone (one file opened per document). A
    /// missing or corrupt manifest falls back to document.json and says so in `problem`; the next
    /// open rebuilds it. From an `async` context the `async` overload runs instead, off the
    /// caller's actor.
    public func documents() throws(StoreError) -> [LibraryEntry] {
        try listDocuments(in: root)
    }

    /// The documents in the trash, sorted as `documents()` sorts them.
    public func trashedDocuments() throws(StoreError) -> [LibraryEntry] {
        guard try fileSystem.checked.info(trashPath)?.kind == .directory else { return [] }
        return try listDocuments(in: trashPath)
    }

    func listDocuments(in folder: String) throws(StoreError) -> [LibraryEntry] {
        try listedDocuments(in: folder).map { $0.entry(in: folder) }
    }

    /// Every document as `documents()` gives it (the trash's with `inTrash`), in the same order, handed
    /// to `body` one at a time. The listing keeps a small record per document (its manifest's
    /// fields, no paths: about 100 bytes beside its title) until all are read and sorted, then
    /// makes each entry as it hands it out: a caller that writes each out as it comes (`lnote
    /// list --json`) holds one entry at a time instead of the whole list.
    public func forEachDocument(inTrash: Bool = false, _ body: (LibraryEntry) -> Void) throws(StoreError) {
        let folder = inTrash ? trashPath : root
        if inTrash, try fileSystem.checked.info(trashPath)?.kind != .directory { return }
        for listed in try listedDocuments(in: folder) { body(listed.entry(in: folder)) }
    }

    /// The documents of `folder`, sorted newest first (by modification time, then by id).
    ///
    /// Per document, one file read and one stat (`FileSystem.readEach`: the folder read once, each
    /// manifest opened in one call relative to it, refusing links, into one reused buffer): the
    /// manifest, parsed by hand in place when it is as the store writes it, and the needs-repair
    /// marker; document.json only when the manifest cannot be used, and the marker's text only
    /// when there is one.
    ///
    /// `only`: that document alone, read the same way without listing the folder (an event's
    /// entry, LibraryEvents.swift); nothing when it is not there.
    func listedDocuments(in folder: String, only: UUID? = nil) throws(StoreError) -> [ListedDocument] {
        let fs = fileSystem
        guard try fs.checked.info(folder) != nil else { return [] }
        var listed: [ListedDocument] = []
        var marked: [Int] = []
        var taken: UUID?  // the id of the name `accept` took last: the one `body` is called for
        try StoreError.io { () throws(FileError) in
            func each(_ body: (UnsafeRawBufferPointer, Result<UnsafeRawBufferPointer, FileError>, Bool) -> Void) throws(FileError) {
                guard let only else {
                    return try fs.readEach(in: folder, file: "manifest.json", limit: PackageJSON.maxFileSize, probe: DocumentPackage.needsRepairName,
                                           accept: { taken = DocumentPackage.id(fromDirectoryName: $0); return taken != nil }, body)
                }
                let package = DocumentPackage(id: only, libraryRoot: folder)
                guard try fs.info(package.path)?.kind == .directory else { return }
                taken = only
                let bytes = Result { () throws(FileError) in try fs.readFile(package.manifestPath, limit: PackageJSON.maxFileSize) }
                let hasMarker = ((try? fs.info(package.path + "/" + DocumentPackage.needsRepairName)) ?? nil) != nil
                switch bytes {
                case .success(let b): b.withUnsafeBytes { body(UnsafeRawBufferPointer(start: nil, count: 0), .success($0), hasMarker) }
                case .failure(let e): body(UnsafeRawBufferPointer(start: nil, count: 0), .failure(e), hasMarker)
                }
            }
            try each { _, bytes, hasMarker in
                guard let id = taken else { return }
                if hasMarker { marked.append(listed.count) }
                if case .success(let b) = bytes,
                   let m = ManifestParser.parse(b)
                    ?? (try? PackageJSON.decodeManifestWithDecoder(Array(b), path: DocumentPackage(id: id, libraryRoot: folder).manifestPath)),
                   m.id == id {
                    listed.append(ListedDocument(id: id, manifest: m, problem: nil))
                } else if let doc = try? PackageReader.readDocument(DocumentPackage(id: id, libraryRoot: folder), fileSystem: fs) {
                    listed.append(ListedDocument(id: id, manifest: Manifest(doc), problem: "manifest missing or corrupt; shown from document.json"))
                } else {
                    let epoch = Date(timeIntervalSince1970: 0)
                    listed.append(ListedDocument(id: id, title: "(unreadable)", created: epoch, modified: epoch, pageCount: 0, coverPageID: nil,
                                                 problem: "neither manifest.json nor document.json can be read; run lnote verify"))
                }
            }
        }
        // An engine this build lacks whose form has a file of its own at the package root (SQLite's
        // content.sqlite): one stat per document, and document.json read only when it is there.
        let missing = EngineKind.allCases.filter { !$0.isAvailable && !$0.rootFiles.isEmpty }
        for i in listed.indices where !missing.isEmpty {  // nothing to look at when every engine is in
            let package = DocumentPackage(id: listed[i].id, libraryRoot: folder)
            for kind in missing where kind.rootFiles.contains(where: { (try? fs.info(package.path + "/" + $0)) != nil }) {
                guard (try? PackageReader.readDocument(package, fileSystem: fs))?.engine == kind else { continue }
                listed[i].unavailableEngine = kind
                let flag = "uses the \(kind.rawValue) engine, which this build does not include"
                listed[i].problem = listed[i].problem.map { $0 + "; " + flag } ?? flag
            }
        }
        // The marker a session's open or a page read left on damage (its stat was taken above).
        for i in marked {
            guard let reason = DocumentPackage(id: listed[i].id, libraryRoot: folder).needsRepairReason(fileSystem: fs) else { continue }
            listed[i].needsRepair = true
            let flag = "needs repair: " + reason + " (run lnote repair)"
            listed[i].problem = listed[i].problem.map { $0 + "; " + flag } ?? flag
        }
        // Sorted as small keys (time, id, place) instead of moving the records; each record is
        // then moved once, into its place.
        var keys = listed.indices.map { ListedDocument.SortKey(listed[$0], at: $0) }
        keys.sort(by: ListedDocument.SortKey.newerFirst)
        return keys.map { listed[$0.index] }
    }

    /// Finds a document by what a person types: its id; else a prefix of its id or its exact
    /// title; else its title in any case; else the start of its title in any case; else the same
    /// two without accents (a person typing "resume" for "Résumé"). The first of
    /// these that names documents decides: one document is the answer, several are refused with
    /// them listed (title and id), so the person can pick.
    public func resolve(_ reference: String) throws(StoreError) -> UUID {
        if let id = UUID(strictString: reference) { return id }
        guard !reference.isEmpty else { throw .documentNotFound(reference) }
        let all = try documents()
        let lowered = reference.lowercased()
        let folded = Library.foldedTitle(reference)
        let bare = Library.foldedTitle(reference, marks: false)
        let tiers: [(LibraryEntry) -> Bool] = [
            { $0.title == reference || $0.id.uuidString.lowercased().hasPrefix(lowered) },
            { Library.foldedTitle($0.title) == folded },
            { Library.foldedTitle($0.title).hasPrefix(folded) },
            { Library.foldedTitle($0.title, marks: false) == bare },
            { Library.foldedTitle($0.title, marks: false).hasPrefix(bare) },
        ]
        for matches in tiers.lazy.map({ all.filter($0) }) where !matches.isEmpty {
            guard matches.count == 1 else {
                let shown = matches.prefix(10).map { "'\($0.title)' (\($0.id.uuidString.prefix(8)))" }.joined(separator: ", ")
                let more = matches.count > 10 ? " and \(matches.count - 10) more" : ""
                throw .invalidArgument("'\(reference)' matches \(matches.count) documents: \(shown)\(more); give more of the title or the id")
            }
            return matches[0].id
        }
        throw .documentNotFound(reference)
    }

    /// A title as lookup compares it: in one case (and one width), so "meeting" finds "Meeting",
    /// "STRASSE" finds "Straße" and "ΣΟΦΟΣ" finds "σοφος"; without `marks`, also without accents
    /// and other combining marks, so "cafe" finds "Café" and "istanbul" finds "İstanbul" (the last
    /// tiers of `resolve`, tried only when a title with its marks matches nothing).
    static func foldedTitle(_ title: String, marks: Bool = true) -> String {
        title.folding(options: marks ? [.caseInsensitive, .widthInsensitive] : [.caseInsensitive, .widthInsensitive, .diacriticInsensitive],
                      locale: nil)
    }

    // MARK: Creating and opening

    /// Creates a document with one empty page (`firstPage`; nil for none). It appears in the
    /// library whole or not at all: it is built in a temporary folder and renamed into place.
    @discardableResult
    public func createDocument(title: String, engine: EngineKind = .snapshot, codec: SampleCodecID = .compact,
                               firstPage canvas: QuantizedSize? = .letter) throws(StoreError) -> DocumentPackage {
        try createDocument(title: title, pages: canvas.map { [PageContent(canvasSize: $0)] } ?? [], engine: engine, codec: codec)
    }

    /// Creates a document holding `pages` (strokes; no images, whose files a page cannot carry),
    /// with their thumbnails when this build draws them. Like `createDocument(title:)`, it appears
    /// in the library whole or not at all: an import interrupted halfway leaves no half-made
    /// document, only a staging folder that the next open of the library removes.
    /// - Throws: `StoreError.invalidArgument` for a page holding an image, or a title too long.
    @discardableResult
    public func createDocument(title: String, pages contents: [PageContent], engine: EngineKind = .snapshot,
                               codec: SampleCodecID = .compact) throws(StoreError) -> DocumentPackage {
        guard title.utf8.count <= PackageJSON.maxTitleLength else {
            throw .invalidArgument("a title may be at most \(PackageJSON.maxTitleLength) bytes")
        }
        guard contents.allSatisfy({ $0.assetIDs.isEmpty }) else {
            throw .invalidArgument("a document created from pages holds no images; insert them in a session, which stores their files")
        }
        try prepare()
        let id = UUID()
        let now = try Date.storeNow()
        var doc = DocumentMetadata(id: id, title: title, created: now, modified: now, engine: engine, codec: codec)
        let pages = contents.map { (UUID(), $0) }
        doc.pages = pages.map { PageEntry(id: $0.0, canvas: $0.1.canvasSize, created: now, modified: now, elementCount: $0.1.elements.count) }
        let fs = fileSystem
        try buildPackage(id: id, document: doc) { (package) throws(StoreError) in
            try engine.createPages(pages, in: package, codec: codec, fileSystem: fs)
            guard ThumbnailWriter.isAvailable else { return }
            for (page, content) in pages where !content.elements.isEmpty {
                // A thumbnail that cannot be drawn is drawn again when the page is next saved.
                _ = try? ThumbnailWriter.write(content, page: page, in: package, fileSystem: fs)
            }
        }
        return package(id)
    }

    /// Builds a package in a temporary folder with `fill`, writes its JSON files, then renames it
    /// into the library and syncs the root.
    func buildPackage(id: UUID, document: DocumentMetadata, in folder: String? = nil,
                      fill: (DocumentPackage) throws(StoreError) -> Void) throws(StoreError) {
        let fs = fileSystem
        let parent = folder ?? root
        let tempName = temporaryFilePrefix + DocumentPackage.directoryName(id)
        let temp = DocumentPackage(id: id, libraryRoot: parent)
        let staging = try DocumentPackage(pathUnchecked: parent + "/" + tempName, id: id)
        do {
            try fs.checked.makeDirectory(staging.path)
            for dir in staging.contentFolders(document.engine) { try fs.checked.makeDirectory(dir) }
            try fill(staging)
            try fs.checked.writeAtomically(PackageJSON.encode(document), to: staging.documentPath)
            try fs.checked.writeAtomically(PackageJSON.encode(Manifest(document)), to: staging.manifestPath)
            try fs.checked.syncDirectory(staging.path)
            try fs.checked.rename(staging.path, to: temp.path)
            try fs.checked.syncDirectory(parent)
        } catch {
            try? fs.removeTree(staging.path)
            throw error
        }
        if parent == root { LibraryEventHubs.send(self, .created(id)) }
    }

    /// Opens a document for writing.
    public func open(_ id: UUID, options: SessionOptions = SessionOptions()) async throws(StoreError) -> DocumentSession {
        try await DocumentSession.open(package(id), fileSystem: fileSystem, options: options)
    }

    // MARK: Rename, duplicate, delete

    /// Renames a document; one open in this process is renamed through its session.
    public func rename(_ id: UUID, to title: String) async throws(StoreError) {
        if let open = OpenSessions.shared.session(at: package(id).path), await open.share() {
            do { try await open.rename(to: title) } catch {
                try? await open.close()
                throw error
            }
            try await open.close()  // the share taken above: saves, and leaves the session to its holders
            return
        }
        let session = try await open(id, options: SessionOptions(autosaveDelay: nil))
        do { try await session.rename(to: title) } catch {
            await session.abandon()
            throw error
        }
        // The new title is durable in document.json: a close that fails now (a manifest or marker
        // it cannot write) is repaired by the next open, and must not report the rename as failed.
        do { try await session.close() } catch { await session.abandon() }
    }

    /// Makes a complete, consistent copy of a document under a new id (one no session has open:
    /// the `async` overload, which an `async` caller gets, also copies an open one).
    ///
    /// Progress is reported in files copied (`.copying`), plus one last unit when the copy is in
    /// the library. A cancelled task throws `.cancelled` (checked before each file and before the
    /// copy appears) and leaves no copy and no staging folder.
    @discardableResult
    public func duplicate(_ id: UUID, title: String? = nil,
                          progress: (OperationProgress) -> Void = { _ in }) throws(StoreError) -> DocumentPackage {
        let fs = fileSystem
        let source = package(id)
        // Holding the lock keeps a writer from changing the package while it is copied.
        let lock = try source.lockForWriting(fs)
        defer { fs.unlock(lock) }
        var findings: [Finding] = []
        try source.completeTransaction(fileSystem: fs, findings: &findings)
        try PackageReader.readDocument(source, fileSystem: fs).engine.prepareForCopy(source, fileSystem: fs)
        return try copyDocument(source, title: title, progress: progress)
    }

    /// Copies a package whose writer is held still (its lock taken, or its session quiet) and
    /// whose SQLite database, if any, holds everything by itself.
    func copyDocument(_ source: DocumentPackage, title: String?,
                      progress: (OperationProgress) -> Void = { _ in }) throws(StoreError) -> DocumentPackage {
        let fs = fileSystem
        var doc = try PackageReader.readDocument(source, fileSystem: fs)
        let newID = UUID()
        let now = try Date.storeNow()
        doc.id = newID
        doc.title = title ?? doc.title + " copy"
        doc.created = now
        doc.modified = now
        let files = try PackageReader.contentFiles(source, fileSystem: fs)
        // A file over its limit (a 2 GB page) is refused by its size, before it is read whole.
        let sizes = try StoreError.io { () throws(FileError) in try files.map { f throws(FileError) in (f, try fs.info(source.path + "/" + f)?.size ?? 0) } }
        try Library.checkSizes(sizes, "copied")
        var reporter = ProgressReporter(.copying, total: files.count + 1)
        reporter.report(0, to: progress)
        try buildPackage(id: newID, document: doc) { (staging) throws(StoreError) in
            do {
                for (i, relative) in files.enumerated() {
                    try ProgressReporter.checkCancellation()
                    let bytes = try fs.checked.readFile(source.path + "/" + relative)
                    try fs.checked.writeAtomically(bytes, to: staging.path + "/" + relative)
                    reporter.report(i + 1, to: progress)
                }
                // The last point where a cancelled copy leaves nothing.
                try ProgressReporter.checkCancellation()
            }
        }
        reporter.report(reporter.total, to: progress)
        return package(newID)
    }

    /// Moves a document to the trash; it can be restored until the trash is emptied. A document a
    /// session has open is refused with `documentInUse` (the `async` overload, which an `async`
    /// caller gets, closes this process's session first).
    public func moveToTrash(_ id: UUID) throws(StoreError) {
        let fs = fileSystem
        let source = package(id)
        let target = trashPath + "/" + DocumentPackage.directoryName(id)
        // A move whose rename happened but whose syncs failed is finished by calling again.
        if try fs.checked.info(source.path) == nil, try fs.checked.info(target) != nil {
            try fs.checked.syncDirectory(root)
            try fs.checked.syncDirectory(trashPath)
            return
        }
        let lock = try source.lockForWriting(fs)
        fs.unlock(lock)
        try ensureDurableDirectory(trashPath, parent: root)
        if try fs.checked.info(target) != nil { try fs.checked.removeTree(target) }
        try fs.checked.rename(source.path, to: target)
        try fs.checked.syncDirectory(root)
        try fs.checked.syncDirectory(trashPath)
        LibraryEventHubs.send(self, .trashed(id))
    }

    /// Brings a document back from the trash. Calling it again after a failure finishes what the
    /// failed call started.
    public func restoreFromTrash(_ id: UUID) throws(StoreError) {
        let fs = fileSystem
        let source = trashPath + "/" + DocumentPackage.directoryName(id)
        let files = fs.checked
        if try files.info(source) == nil, try files.info(package(id).path) != nil {
            // Restored already, but its syncs failed: finish them.
            try files.syncDirectory(trashPath)
            try files.syncDirectory(root)
        } else {
            guard try files.info(source) != nil else { throw .file(FileError("restore", path: source, errno: ENOENT)) }
            try files.rename(source, to: package(id).path)
            try files.syncDirectory(trashPath)
            try files.syncDirectory(root)
        }
        LibraryEventHubs.send(self, .restored(id))
    }

    /// Deletes the documents in the trash for good.
    public func emptyTrash() throws(StoreError) {
        let fs = fileSystem
        let files = fs.checked
        if try files.info(trashPath) != nil {
            // Every package first goes out of sight (a rename each, then one sync), so that a crash
            // halfway through a removal leaves a hidden remnant, never half a document in the trash.
            var doomed: [String] = []
            for name in try files.contentsOfDirectory(trashPath) {
                if name.hasPrefix(temporaryFilePrefix) { doomed.append(trashPath + "/" + name); continue }
                let hidden = trashPath + "/" + temporaryFilePrefix + name
                try files.removeTree(hidden)
                try files.rename(trashPath + "/" + name, to: hidden)
                doomed.append(hidden)
            }
            try files.syncDirectory(trashPath)
            for path in doomed { try files.removeTree(path) }
            try files.syncDirectory(trashPath)
        }
    }
}

/// What a listing keeps of one document: a `LibraryEntry` without its paths, which are made when
/// the entry is handed out (`entry(in:)`).
struct ListedDocument {
    var id: UUID
    var title: String
    var created: Date
    var modified: Date
    var pageCount: Int
    var coverPageID: UUID?
    var problem: String?
    var needsRepair = false
    var unavailableEngine: EngineKind?

    init(id: UUID, title: String, created: Date, modified: Date, pageCount: Int, coverPageID: UUID?, problem: String?) {
        self.id = id
        self.title = title
        self.created = created
        self.modified = modified
        self.pageCount = pageCount
        self.coverPageID = coverPageID
        self.problem = problem
    }

    init(id: UUID, manifest m: Manifest, problem: String?) {
        self.init(id: id, title: m.title, created: m.created, modified: m.modified, pageCount: m.pageCount,
                  coverPageID: m.coverPageID, problem: problem)
    }

    func entry(in folder: String) -> LibraryEntry {
        let package = DocumentPackage(id: id, libraryRoot: folder)
        return LibraryEntry(id: id, title: title, created: created, modified: modified, pageCount: pageCount,
                            coverPageID: coverPageID, coverThumbnailPath: coverPageID.map(package.thumbnailPath),
                            package: package, problem: problem, needsRepair: needsRepair, unavailableEngine: unavailableEngine)
    }

    /// What the listing's order looks at, and where the record is.
    struct SortKey {
        var modified: TimeInterval
        var id: (UInt64, UInt64)
        var index: Int

        init(_ d: ListedDocument, at index: Int) {
            modified = d.modified.timeIntervalSinceReferenceDate
            id = d.id.halves
            self.index = index
        }

        /// Newest first: by modification time, then by id, the greater first in `uuidString` order
        /// (compared as bytes, `UUID.precedesInBytes`, which is the same order).
        static func newerFirst(_ a: SortKey, _ b: SortKey) -> Bool {
            if a.modified != b.modified { return a.modified > b.modified }
            return a.id > b.id
        }
    }
}

extension DocumentPackage {
    /// A package at a path whose name is not `<UUID>.lnote` (a staging folder).
    init(pathUnchecked path: String, id: UUID) throws(StoreError) {
        self.init(unchecked: path, id: id)
    }
}

extension PackageReader {
    /// The package files a copy must carry, as paths relative to the package, validated by name:
    /// every engine's page files and root files (the engine table), assets and thumbnails.
    static func contentFiles(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> [String] {
        var files: [String] = []
        if try folderIsPresent(package.pagesPath, fileSystem: fs) {
            for name in try fs.checked.contentsOfDirectory(package.pagesPath) {
                if let (id, ext) = DocumentPackage.parseName(name, extensions: EngineKind.allPageFileExtensions) {
                    files.append("pages/" + id.uuidString + "." + ext)
                }
            }
        }
        files += try scanAssets(package, fileSystem: fs).assets.map { "assets/" + $0.key.uuidString + "." + $0.value }
        if try folderIsPresent(package.thumbnailsPath, fileSystem: fs) {
            for name in try fs.checked.contentsOfDirectory(package.thumbnailsPath) {
                if let (id, _) = DocumentPackage.parseName(name, extensions: ["jpg"]) { files.append("thumbnails/" + id.uuidString + ".jpg") }
            }
        }
        for name in EngineKind.allRootFiles.sorted() where try fs.checked.fileExists(package.path + "/" + name) {
            files.append(name)
        }
        return files.sorted()
    }
}

/// The roots whose stale staging folders this process has cleaned: the library's open, once per
/// root (`Library.prepare`).
final class StagingCleanup: @unchecked Sendable {
    static let shared = StagingCleanup()
    private let lock = NSLock()
    private var opened: Set<String> = []

    /// True the first time a root is asked about in this process.
    func isFirstOpen(of root: String) -> Bool {
        lock.withLock { opened.insert(root).inserted }
    }
}
