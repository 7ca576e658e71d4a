// `lnote repair`: brings a damaged package back to a consistent state without deleting any data:
// a damaged page keeps its place with every element that checks (its damaged file kept in
// recovered/), unlisted and unsalvageable pages are moved to recovered/, never removed, and a
// corrupt document.json is rebuilt from the manifest and the page files.

import Foundation
import LulucatInk
import LulucatStore

/// Repairs a package: stale temporary files removed, undecodable or missing pages taken out of the
/// page list (their files moved to `recovered/`), unlisted page files moved to `recovered/`, page
/// metadata reconciled, the manifest rebuilt, orphan assets removed. Every action is reported.
///
/// ```swift
/// for finding in try DocumentRepair().repair(library.package(id)) { print(finding) }
/// ```
public struct DocumentRepair: Sendable {
    /// The file system the package is read and written through.
    public let fileSystem: any FileSystem
    /// A repair through `fileSystem`; it holds no state, so one may serve any number of documents.
    public init(fileSystem: any FileSystem = PosixFileSystem()) { self.fileSystem = fileSystem }

    /// Repairs the package of a closed document, taking its writer lock for the time it runs, and
    /// returns what it found and did (`.repaired` for each action, `.error` for what it could not
    /// mend; nothing is ever deleted but stale temporary files and orphan assets).
    ///
    /// - Throws: `StoreError.engineNotAvailable` for a document whose engine this build does not
    ///   include (nothing is changed: its files are not damaged, only unreadable here);
    ///   `StoreError.documentInUse` when a session has the document open;
    ///   `StoreError.corruptFile` when document.json cannot be read and cannot be rebuilt (no
    ///   readable manifest naming this document).
    public func repair(_ package: DocumentPackage) throws(StoreError) -> [Finding] {
        let fs = fileSystem
        let lock = try package.lockForWriting(fs)
        defer { fs.unlock(lock) }
        var findings: [Finding] = []
        try package.completeTransaction(fileSystem: fs, findings: &findings)
        var doc: DocumentMetadata
        do { doc = try PackageReader.readDocument(package, fileSystem: fs) } catch {
            guard case .corruptFile = error else { throw error }
            doc = try rebuildDocument(package, because: error, findings: &findings)
        }
        // Not damage: a build without the document's engine repairs nothing in it.
        try doc.engine.requireAvailable(package)
        try DocumentSession.removeStaleTemporaries(package, fileSystem: fs, findings: &findings)
        try EngineForm.cleanUpInterruptedMigration(package, engine: doc.engine, fileSystem: fs, findings: &findings)
        for dir in package.contentFolders(doc.engine) {
            try fs.checked.ensureDirectory(dir)
        }
        // A SQLite document's damaged database is rebuilt from every row that reads (the damaged
        // file kept in recovered/); one that cannot be opened at all throws here, before anything
        // else changes.
        try doc.engine.repairForm(package, doc, fileSystem: fs, findings: &findings)
        // While pages are rewritten document.json may lag them: the open-session marker says so,
        // so that a crash before the end leaves a document the next open reconciles.
        let marker = package.path + "/" + DocumentSession.sessionMarkerName
        let hadMarker = try fs.checked.fileExists(marker)
        if !hadMarker { try fs.checked.writeAtomically([UInt8](), to: marker) }
        let engine = try DocumentSession.makeEngine(doc, package: package, fileSystem: fs)
        defer { engine.closeWithoutTidying() }

        func moveAside(_ page: UUID) throws(StoreError) -> String? {
            let from = package.pagePath(page)
            guard try fs.checked.info(from) != nil else { return nil }
            let to = package.recoveredPath + "/" + page.uuidString + ".content"
            do {
                // recovered/ exists durably (the package folder synced) before anything goes in.
                try StoreError.io { () throws(FileError) in try package.ensureRecovered(fs) }
                if try fs.checked.info(to) != nil { try fs.checked.rename(to, to: to + "." + UUID().uuidString) }
                try fs.checked.rename(from, to: to)
                // A journal document's page is its snapshot and its journal: they move together.
                let journal = package.journalPath(page), journalTo = package.recoveredPath + "/" + page.uuidString + ".journal"
                if try fs.checked.info(journal) != nil {
                    if try fs.checked.info(journalTo) != nil { try fs.checked.rename(journalTo, to: journalTo + "." + UUID().uuidString) }
                    try fs.checked.rename(journal, to: journalTo)
                }
                try fs.checked.syncDirectory(package.recoveredPath)
                try fs.checked.syncDirectory(package.pagesPath)
                // Its thumbnail shows a page the document no longer lists.
                if try fs.checked.info(package.thumbnailPath(page)) != nil {
                    try fs.checked.removeIfPresent(package.thumbnailPath(page))
                    try fs.checked.syncDirectory(package.thumbnailsPath)
                }
            }
            return to
        }

        var kept: [PageEntry] = []
        var droppedAssets = Set<UUID>()
        var changed = false
        // The time of this repair: the document's and each salvaged page's `modified`, so sync
        // reads the salvaged page as changed (docs/sync.md §6 step 5.3) like any edit.
        let now = try Date.storeNow()
        for (index, var entry) in doc.pages.enumerated() {
            do {
                let before = entry.elementCount
                if entry.reconcile(with: try engine.loadPage(entry.id)) {
                    changed = true
                    let lost = before - entry.elementCount
                    findings.append(Finding(.repaired, package.documentPath, "page \(index + 1) metadata brought in line with its content" + (lost > 0 ? " (\(lost) element\(lost == 1 ? "" : "s") fewer than document.json listed)" : "")))
                }
                kept.append(entry)
            } catch {
                if !doc.engine.pagesHaveOwnFiles {
                    // Its bytes stay in the engine's one file; taking the page out of the list
                    // would only hide them. It stays listed and the error stays visible to verify.
                    findings.append(Finding(.error, doc.engine.findingPath(for: entry.id, in: package), "page \(index + 1) (\(entry.id)) cannot be read (\(error)); kept in the page list, its rows untouched"))
                    kept.append(entry)
                    continue
                }
                // Only damage moves a page: an I/O error reading it stops the repair, changing nothing more.
                switch error {
                case .corruptPage, .missingPage: break
                default: throw error
                }
                // A damaged page keeps its place with every element that checks: the damaged file
                // is kept in recovered/ first, then the page is written with what was salvaged.
                if case .corruptPage = error, let s = try engine.salvagePage(entry.id, canvas: entry.canvasSize, keep: true) {
                    _ = try engine.savePage(entry.id, content: s.content, changes: [], reusing: nil)
                    droppedAssets.formUnion(entry.assets)
                    let before = entry.elementCount
                    _ = entry.reconcile(with: s.content)
                    entry.modified = now
                    changed = true
                    let lost = s.salvage.lost ?? max(0, before - s.content.elements.count)
                    findings.append(Finding(.repaired, package.pagePath(entry.id), "page \(index + 1) was damaged: \(s.content.elements.count) element\(s.content.elements.count == 1 ? "" : "s") salvaged, \(lost) lost; the damaged file is kept as \(s.keptAt ?? "?") (lnote restore-page puts it back)"))
                    kept.append(entry)
                    continue
                }
                changed = true
                droppedAssets.formUnion(entry.assets)
                if let to = try moveAside(entry.id) {
                    findings.append(Finding(.repaired, package.pagePath(entry.id), "page \(index + 1) cannot be read (\(error)); moved to \(to) and taken out of the page list"))
                } else {
                    findings.append(Finding(.repaired, package.pagePath(entry.id), "page \(index + 1) has no content on disk; taken out of the page list"))
                }
            }
        }
        let scan = try PackageReader.scanPages(package, fileSystem: fs)
        for id in scan.pageFiles.subtracting(kept.map(\.id)).sortedByUUIDString() {
            if let to = try moveAside(id) {
                findings.append(Finding(.repaired, package.pagePath(id), "page file not listed in document.json; moved to \(to)"))
            }
        }
        if changed {
            doc.pages = kept
            doc.modified = now
            try fs.checked.writeAtomically(PackageJSON.encode(doc), to: package.documentPath)
        }
        let expected = Manifest(doc)
        if PackageReader.readManifest(package, fileSystem: fs) != expected {
            try fs.checked.writeAtomically(PackageJSON.encode(expected), to: package.manifestPath)
            findings.append(Finding(.repaired, package.manifestPath, "rebuilt from document.json"))
        }
        // Pages moved to recovered/ keep their images: an undecodable page by what document.json
        // last listed for it, a decodable one by its content.
        let referenced = Set(doc.pages.flatMap(\.assets)).union(droppedAssets)
            .union(PackageReader.assetsOfKeptPages(package, unlisted: [], engine: engine, fileSystem: fs))
        let (assets, _) = try PackageReader.scanAssets(package, fileSystem: fs)
        for (id, ext) in assets.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where !referenced.contains(id) {
            try fs.checked.removeIfPresent(package.assetPath(id, ext: ext))
            findings.append(Finding(.repaired, package.assetPath(id, ext: ext), "orphan asset removed"))
        }
        if try fs.checked.fileExists(marker) {
            try fs.checked.removeIfPresent(marker)
            if hadMarker { findings.append(Finding(.repaired, marker, "cleared the open-session marker of a session that did not close")) }
        }
        // Repaired: the library view no longer flags it (unless damage remains that repair could
        // not mend, reported as an error).
        if let left = findings.first(where: { $0.severity == .error }) {
            package.markNeedsRepair("repair left an error: " + left.message, fileSystem: fs)
        } else {
            try package.clearNeedsRepair(fileSystem: fs)
        }
        try fs.checked.syncDirectory(package.assetsPath)
        try fs.checked.syncDirectory(package.path)
        return findings
    }

    /// The title of a document rebuilt from its pages alone (document.json and the manifest lost).
    package static let recoveredTitle = "Recovered document"

    /// document.json from the manifest (id, title, dates, the first page) and the page files, or
    /// a SQLite document's page rows (each page's canvas, element count and images; the engine
    /// from the files present). The page
    /// order after the first is not recorded anywhere else: the other pages follow in id order,
    /// and the finding says so. The corrupt file is kept in recovered/ first.
    func rebuildDocument(_ package: DocumentPackage, because error: StoreError,
                         findings: inout [Finding]) throws(StoreError) -> DocumentMetadata {
        let fs = fileSystem
        // The manifest gives the title, the dates and the cover; without it (lost too, or naming
        // another document) the pages alone rebuild the document, under a title that says so.
        let manifest = PackageReader.readManifest(package, fileSystem: fs).flatMap { $0.id == package.id ? $0 : nil }
        let unrecoverable = StoreError.corruptFile(path: package.documentPath, reason: "\(error); it cannot be rebuilt: the manifest is missing, corrupt or names another document, and no page is left")
        let scan = try PackageReader.scanPages(package, fileSystem: fs)
        let engine: EngineKind
        do { engine = try EngineKind.inferred(package, scan, fileSystem: fs, because: error) } catch {
            if manifest == nil { throw unrecoverable }
            throw error
        }
        try engine.requireAvailable(package)
        let now = try Date.storeNow()
        var pages: [PageEntry] = []
        var codec: SampleCodecID?
        for (id, content, pageCodec) in try engine.pagesForRebuild(package, scan, fileSystem: fs) {
            let modified = manifest?.modified ?? now
            if codec == nil { codec = pageCodec }
            var entry = PageEntry(id: id, canvas: content.canvasSize, created: modified, modified: modified, elementCount: 0)
            _ = entry.reconcile(with: content)
            pages.append(entry)
        }
        guard manifest != nil || !pages.isEmpty else { throw unrecoverable }
        // The cover page first; the others in the engine's order (id order for page files).
        let cover = manifest?.coverPageID
        let order = Dictionary(uniqueKeysWithValues: pages.enumerated().map { ($1.id, $0) })
        pages.sort { a, b in
            if a.id == cover { return b.id != cover }
            if b.id == cover { return false }
            return order[a.id]! < order[b.id]!
        }
        let title = manifest?.title ?? DocumentRepair.recoveredTitle
        var doc = DocumentMetadata(id: package.id, title: title, created: manifest?.created ?? now, modified: now,
                                   engine: engine, codec: codec ?? .compact, pages: pages)
        doc.assetChecksums = nil
        if let bytes = try? fs.readFile(package.documentPath, limit: PackageJSON.maxFileSize) {
            let kept = try package.keepInRecovered(bytes, name: "document.json", fileSystem: fs)
            findings.append(Finding(.repaired, package.documentPath, "the corrupt document.json is kept as \(kept)"))
        }
        try fs.checked.writeAtomically(PackageJSON.encode(doc), to: package.documentPath)
        let missing = (manifest?.pageCount ?? pages.count) - pages.count
        let source = manifest == nil
            ? "rebuilt from its \(pages.count) page\(engine.recordsPageOrder ? "" : " file")\(pages.count == 1 ? "" : "s") alone, the manifest being lost too: its title is now '\(title)' and its dates are today's (lnote rename gives it its name again)"
            : "rebuilt from the manifest and \(pages.count) page\(engine.recordsPageOrder ? "" : " file")\(pages.count == 1 ? "" : "s")"
        findings.append(Finding(missing > 0 ? .error : .repaired, package.documentPath,
            source + " (\(error))"
            + (pages.count > 1 ? "; the order of the pages after the first was recorded only in document.json: they follow in "
               + (engine.recordsPageOrder ? "the order they were first stored" : "id order") : "")
            + (missing > 0 ? "; the manifest counted \(manifest?.pageCount ?? 0) pages: \(missing) have no page file" : "")))
        return doc
    }
}
