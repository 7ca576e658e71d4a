// `lnote repair`: brings a damaged package back to a consistent state without deleting any data:
// undecodable and unlisted pages are moved to recovered/, never removed.

import Foundation
import LulucatInk

/// Repairs a package: stale temporary files removed, undecodable or missing pages taken out of the
/// page list (their files moved to `recovered/`), unlisted page files moved to `recovered/`, page
/// metadata reconciled, the manifest rebuilt, orphan assets removed. Every action is reported.
public struct DocumentRepair: Sendable {
    public let fileSystem: any FileSystem
    public init(fileSystem: any FileSystem = PosixFileSystem()) { self.fileSystem = fileSystem }

    /// - Throws: `StoreError.documentInUse` when a session has the document open;
    ///   `StoreError.corruptFile` when document.json itself cannot be read (it is never rewritten
    ///   from a guess: restore it from a backup or export).
    public func repair(_ package: DocumentPackage) throws(StoreError) -> [Finding] {
        let fs = fileSystem
        let lock = try package.lockForWriting(fs)
        defer { fs.unlock(lock) }
        var findings: [Finding] = []
        var doc = try PackageReader.readDocument(package, fileSystem: fs)
        try DocumentSession.removeStaleTemporaries(package, fileSystem: fs, findings: &findings)
        try EngineMigration.cleanUpInterrupted(package, engine: doc.engine, fileSystem: fs, findings: &findings)
        for dir in [package.pagesPath, package.assetsPath, package.thumbnailsPath] {
            try fs.checked.ensureDirectory(dir)
        }
        // The engine's form first (a SQLite document's damaged database is rebuilt from every row
        // that reads, the damaged file kept in recovered/; one that cannot be opened at all throws
        // here, before anything else changes).
        try doc.engine.repairForm(package, doc, repair: self, findings: &findings)
        let engine = try DocumentSession.makeEngine(doc, package: package, fileSystem: fs)
        defer { engine.closeWithoutTidying() }

        func moveAside(_ page: UUID) throws(StoreError) -> String? {
            let from = package.pagePath(page)
            guard try fs.checked.info(from) != nil else { return nil }
            let to = package.recoveredPath + "/" + page.uuidString + ".content"
            do {
                try fs.checked.ensureDirectory(package.recoveredPath)
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
            }
            return to
        }

        var kept: [PageEntry] = []
        var droppedAssets = Set<UUID>()
        var changed = false
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
        for id in scan.pageFiles.subtracting(kept.map(\.id)).sorted(by: { $0.uuidString < $1.uuidString }) {
            if let to = try moveAside(id) {
                findings.append(Finding(.repaired, package.pagePath(id), "page file not listed in document.json; moved to \(to)"))
            }
        }
        if changed {
            doc.pages = kept
            doc.modified = Date.storeNow()
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
        let marker = package.path + "/" + DocumentSession.sessionMarkerName
        if try fs.checked.fileExists(marker) {
            try fs.checked.removeIfPresent(marker)
            findings.append(Finding(.repaired, marker, "cleared the open-session marker of a session that did not close"))
        }
        try fs.checked.syncDirectory(package.assetsPath)
        try fs.checked.syncDirectory(package.path)
        return findings
    }
}
