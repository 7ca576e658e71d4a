// Moving documents in and out of a library: one-file export and checked import, InkML pages.

import Foundation
import LulucatInk
import LulucatStore

/// One-file export and import of documents, and InkML pages, against a `Library`.
public enum DocumentTransfer {
    /// Exports a document as `exportArchive` does, and, when a session of this process has it
    /// open, with every edit that session accepted (saved first, on every engine, with no
    /// `flush()` needed): the archive holds what the person sees.
    @concurrent @discardableResult
    public static func exportArchive(_ id: UUID, from library: Library, to path: String,
                                     progress: @escaping @Sendable (OperationProgress) -> Void = { _ in }) async throws -> Int {
        try await library.withSavedDocument(id) { try exportArchive(id, from: library, to: path, progress: progress) }
    }

    /// Exports a document to the file `url` names, as `exportArchive(_:from:to:progress:)` with its
    /// path does (a session of this process that has it open saves first).
    /// - Precondition: `url` is a file URL.
    @concurrent @discardableResult
    public static func exportArchive(_ id: UUID, from library: Library, to url: URL,
                                     progress: @escaping @Sendable (OperationProgress) -> Void = { _ in }) async throws -> Int {
        try await exportArchive(id, from: library, to: filePath(url), progress: progress)
    }

    /// Writes a document as one zip file to the file `url` names, as
    /// `exportArchive(_:from:to:progress:)` with its path does.
    /// - Precondition: `url` is a file URL.
    @discardableResult
    public static func exportArchive(_ id: UUID, from library: Library, to url: URL,
                                     progress: (OperationProgress) -> Void = { _ in }) throws -> Int {
        try exportArchive(id, from: library, to: filePath(url), progress: progress)
    }

    /// Writes a document as one zip file (a SQLite-engine document is checkpointed first), holding
    /// the document's lock while its files are read. The file appears atomically and durably.
    ///
    /// Progress is reported in files read (`.exporting`), plus one last unit when the file is in
    /// place. A cancelled task throws `StoreError.cancelled` (checked before each file and before
    /// the file is written) and leaves nothing at `path` (no partial file, no temporary file).
    /// - Returns: the number of bytes written.
    @discardableResult
    public static func exportArchive(_ id: UUID, from library: Library, to path: String,
                                     progress: (OperationProgress) -> Void = { _ in }) throws -> Int {
        var reporter: ProgressReporter?
        let data: Data = try library.withConsistentFiles(id) { package, files in
            // Fixed by the first read; a read again (a save landed meanwhile) does not go back.
            if reporter == nil { reporter = ProgressReporter(.exporting, total: files.count + 1) }
            reporter?.report(0, to: progress)
            let writer = ZipWriter()
            var read = 0
            try PackageArchive.write(paths: files, topFolder: id, to: writer) { relative in
                try ProgressReporter.checkCancellation()
                let bytes = Data(try library.fileSystem.readFile(package.path + "/" + relative))
                read += 1
                // Files are reported as they are read; the last unit waits for the file in place.
                if let total = reporter?.total { reporter?.report(min(read, total - 1), to: progress) }
                return bytes
            }
            return try writer.finish()
        }
        try ProgressReporter.checkCancellation()
        try library.fileSystem.writeAtomically(data, to: absolute(path))
        if let total = reporter?.total { reporter?.report(total, to: progress) }
        return data.count
    }

    /// Imports a file written by `exportArchive` (or any zip of a package) as a new document. The
    /// archive is untrusted: names, sizes and ratios are checked before anything is inflated, and
    /// the package is verified before it appears in the library. A failed import leaves nothing.
    ///
    /// document.json is read and checked first, before anything is written; then only the files
    /// it accounts for are inflated, each streamed to its file in pieces (memory does not grow
    /// with an entry's size). Bounds: `PackageArchive.defaultLimits`, `ImportLimits`,
    /// `PackageLimits` (export-format.md §6).
    ///
    /// Progress and cancellation are `Library.importPackage`'s: files written, then one unit for
    /// the check and the claim; a cancelled task throws `.cancelled` and leaves no document.
    /// - Throws: `StoreError.importRefused` for an archive that is unsafe, damaged or not a
    ///   document (its `cause` is the `ArchiveError` when the zip layer found it), `.cancelled`,
    ///   `.unsupportedVersion`, `.file` for the library's own storage. Nothing is imported.
    public static func importArchive(_ data: Data, into library: Library,
                                     progress: (OperationProgress) -> Void = { _ in }) throws(StoreError) -> ImportResult {
        func refused(_ e: ArchiveError) -> StoreError { .importRefused(reason: e.description, cause: e) }
        let reader: ZipReader, files: [(path: String, entry: ZipReader.Entry)], topFolder: UUID?
        do { (reader, files, topFolder) = try PackageArchive.files(in: data) } catch { throw refused(error) }
        guard let documentEntry = files.first(where: { $0.path == "document.json" })?.entry else {
            throw refused(ArchiveError(.malformed, "the archive holds no document.json: it is not an exported document"))
        }
        guard documentEntry.uncompressedSize <= 16 << 20 else {
            throw refused(ArchiveError(.limitExceeded, entry: documentEntry.path, "document.json declares \(documentEntry.uncompressedSize) bytes, more than 16 MiB"))
        }
        let document: Data
        do { document = try reader.contents(of: documentEntry) } catch { throw refused(error) }
        // The top folder is the package folder: its name must be the id document.json gives.
        if let topFolder, let named = try? declaredDocumentID(document), named != topFolder {
            throw refused(ArchiveError(.malformed, entry: documentEntry.path,
                                       "names document \(named) but the archive's package folder is \(topFolder).lnote: nothing was imported"))
        }
        var entries: [String: ZipReader.Entry] = [:]
        for f in files { entries[f.path] = f.entry }
        return try library.importPackage(document: document, files: files.map { ImportFile(path: $0.path, size: $0.entry.uncompressedSize) },
                                         progress: progress) { path, append in
            guard let entry = entries[path] else { throw refused(ArchiveError(.malformed, entry: path, "is not in the archive")) }
            do { try reader.stream(entry, into: append) } catch let e as ArchiveError { throw refused(e) }
        }
    }

    /// What an InkML import made.
    public struct InkMLImport: Sendable {
        /// The document the page went into (a new one, or the one given).
        public var package: DocumentPackage
        /// The page made from the InkML.
        public var pageID: UUID
        /// Strokes imported.
        public var strokes: Int
        /// Samples imported, over all strokes.
        public var samples: Int
        /// Size of the page content file written.
        public var pageBytes: Int
        /// What the import noticed in the InkML and how it read it (units, derived times), one
        /// sentence each.
        public var warnings: [String]
    }

    /// Imports an InkML file as a new document, or as a new last page of `document`.
    ///
    /// A new document is made whole before it appears in the library, so an import interrupted
    /// at any point leaves none. Into an existing document the pages are added through a session
    /// opened for the import and closed (saved) before it returns.
    /// - Parameters:
    ///   - data: the InkML file's bytes (untrusted).
    ///   - library: the library the document is made in, or that holds `document`.
    ///   - title: the new document's title (unused when `document` is given).
    ///   - document: the document to add the pages to, or nil for a new document.
    ///   - progress: `completed` of `total` steps: one per trace of the file's ink stream
    ///     (reported once the file is parsed), then one that makes the document or page appear.
    ///     Reports are monotonic and the last is `completed == total`. It runs between traces, on
    ///     the importing task.
    /// - Throws: `InkMLError` for a file that cannot be read (nothing is made), `StoreError` from
    ///   the library or the session, `CancellationError` when the task is cancelled after the
    ///   file is read.
    public static func importInkML(_ data: Data, into library: Library, title: String, document: UUID? = nil,
                                   progress: @escaping @Sendable (OperationProgress) -> Void = { _ in }) async throws -> InkMLImport {
        // Fixed by the reader's first report: its traces, and one more for the document.
        var reporter: ProgressReporter?
        let ink = try InkMLReader.read(data) { p in
            if reporter == nil { reporter = ProgressReporter(.importing, total: p.total + 1) }
            reporter?.report(p.completed, to: progress)
        }
        try Task.checkCancellation()
        func finished() { if let total = reporter?.total { reporter?.report(total, to: progress) } }
        guard let document else {
            // A new document is built whole in staging and renamed into the library: an import
            // interrupted at any point leaves no half-made document (docs/inkml.md).
            let package = try await library.createDocument(title: title, pages: ink.pages)
            let page = try DocumentMetadata.read(package).pages[0].id
            let size = (try? library.fileSystem.info(package.pagePath(page)))??.size ?? 0
            finished()
            return InkMLImport(package: package, pageID: page, strokes: ink.strokes.count, samples: ink.sampleCount,
                               pageBytes: size, warnings: ink.warnings)
        }
        let package = library.package(document)
        let session = try await library.open(document, options: SessionOptions(autosaveDelay: nil))
        let page: UUID
        do { page = try await session.addPage(canvas: ink.page.canvasSize) } catch {
            await session.abandon()
            throw error
        }
        do {
            if !ink.page.elements.isEmpty { try await session.append(ink.page.elements, to: page) }
            // Files of several pages (our own page groups): each further page after it.
            for more in ink.pages.dropFirst() {
                let id = try await session.addPage(canvas: more.canvasSize)
                if !more.elements.isEmpty { try await session.append(more.elements, to: id) }
            }
            try await session.close()
        } catch {
            await session.abandon()
            throw error
        }
        let size = (try? library.fileSystem.info(package.pagePath(page)))??.size ?? 0
        finished()
        return InkMLImport(package: package, pageID: page, strokes: ink.strokes.count, samples: ink.sampleCount,
                           pageBytes: size, warnings: ink.warnings)
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The path of a file URL (a location is a local file).
    static func filePath(_ url: URL) -> String {
        precondition(url.isFileURL, "an archive's location must be a file URL, not \(url)")
        return url.path
    }
}

/// The `id` document.json declares, read on its own (the store checks the rest).
private func declaredDocumentID(_ document: Data) throws -> UUID? {
    struct Named: Decodable { var id: String }
    return UUID(strictString: try JSONDecoder().decode(Named.self, from: document).id)
}
