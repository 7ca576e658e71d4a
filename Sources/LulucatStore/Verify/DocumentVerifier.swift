// `lnote verify`: every invariant of a package, checked without changing a byte.

import Foundation
import LulucatInk

/// Checks a package: JSON files parse, every listed page decodes with a valid CRC, element counts
/// agree, every referenced asset exists, the manifest agrees, no link where a file should be.
public struct DocumentVerifier: Sendable {
    /// The file system the package is read through (never written).
    public let fileSystem: any FileSystem
    /// Most elements the replay of one page's journal may visit (an import's verification sets
    /// `ImportLimits.maxReplayScan`); nil for no limit.
    public var replayScanBudget: Int?
    /// A verifier reading through `fileSystem`, with at most `replayScanBudget` elements visited
    /// per page's journal replay (nil: no limit). It checks what is on disk: a document a
    /// session has open is checked without its unsaved edits.
    public init(fileSystem: any FileSystem = PosixFileSystem(), replayScanBudget: Int? = nil) {
        self.fileSystem = fileSystem
        self.replayScanBudget = replayScanBudget
    }

    /// What was found; an `.error` finding means the document is damaged (or stale, after a crash,
    /// until its next open repairs it). A cancelled task stops between pages with an `.error`
    /// finding that says the check is incomplete (`verify(_:progress:)` throws instead).
    public func verify(_ package: DocumentPackage) -> [Finding] {
        var cancelled = false
        return run(package, progress: { _ in }, cancelled: &cancelled)
    }

    /// `verify(_:)` with progress and cancellation: progress is reported in pages checked
    /// (`.verifying`), plus one last unit for the package-wide checks (assets, manifest, files
    /// left over); the last report is `completed == total`. A cancelled task (checked before each
    /// page and each asset checksum) throws `.cancelled`. Verifying never writes: a cancelled one
    /// leaves the package as it was.
    public func verify(_ package: DocumentPackage, progress: (OperationProgress) -> Void) throws(StoreError) -> [Finding] {
        var cancelled = false
        let findings = run(package, progress: progress, cancelled: &cancelled)
        if cancelled { throw .cancelled }
        return findings
    }

    private func run(_ package: DocumentPackage, progress: (OperationProgress) -> Void, cancelled: inout Bool) -> [Finding] {
        var findings: [Finding] = []
        // Before document.json is read the number of pages is not known: an early end is 0 of 0.
        var reporter = ProgressReporter(.verifying, total: 0)
        defer { if !cancelled { reporter.report(reporter.total, to: progress) } }
        let fs = fileSystem
        func add(_ s: Finding.Severity, _ path: String, _ message: String) { findings.append(Finding(s, path, message)) }

        let folder: FileInfo?
        do { folder = try fs.info(package.path) } catch {
            add(.error, package.path, "\(error)")
            return findings
        }
        guard let folder, folder.kind == .directory else {
            add(.error, package.path, folder?.kind == .symlink ? "the package folder is a symbolic link (refused: the store follows no links inside a library)"
                                                                : "the package folder is missing or not a folder")
            return findings
        }
        let doc: DocumentMetadata
        do { doc = try PackageReader.readDocument(package, fileSystem: fs) } catch {
            add(.error, package.documentPath, "\(error)")
            return findings
        }
        reporter = ProgressReporter(.verifying, total: doc.pages.count + 1)
        reporter.report(0, to: progress)
        guard doc.engine.isAvailable else {
            // Not damage: its pages cannot be read in this build, so none of them is checked (and
            // no image is taken for an orphan because no page was read).
            add(.warning, package.path, "\(StoreError.engineNotAvailable(doc.engine, path: package.path)); its pages were not checked")
            return findings
        }
        let markerPath = package.path + "/" + DocumentSession.sessionMarkerName
        let wasOpen = (try? fs.fileExists(markerPath)) ?? false
        if wasOpen {
            add(.warning, package.path, "the document is open in a session, or its last session did not close; page metadata is reconciled when it is next opened")
        }
        if (try? fs.info(package.transactionPath)) != nil {
            if let bytes = try? fs.readFile(package.transactionPath, limit: TransactionRecord.maxFileSize),
               (try? TransactionRecord.decode(bytes)) != nil {
                add(.warning, package.transactionPath, "a transaction committed before a crash is not yet written into the files; the next open finishes it (readers read it from this record)")
            } else {
                add(.error, package.transactionPath, "a transaction record that cannot be read; the next open keeps it in recovered/ without applying it")
            }
        }
        if (try? fs.info(package.path + "/" + EngineForm.migrationMarkerName)) != nil {
            add(.warning, package.path + "/" + EngineForm.migrationMarkerName, "an engine migration was interrupted; the \(doc.engine.rawValue) engine's form is the document, the other form's files are removed on the next open")
        }
        // Links, FIFOs and devices anywhere in the package are refused (never followed, never opened).
        for dir in [package.path, package.pagesPath, package.assetsPath, package.thumbnailsPath] {
            guard let names = try? fs.contentsOfDirectory(dir) else { continue }
            for name in names {
                switch (try? fs.info(dir + "/" + name))??.kind {
                case .symlink?: add(.error, dir + "/" + name, "a symbolic link where a file or folder should be")
                case .other?: add(.error, dir + "/" + name, "a FIFO, device or socket where a file should be")
                default: break
                }
            }
        }

        // The engine's own checks first; findings about a page name the file that holds it.
        let databaseOpens = doc.engine.verifyForm(package, doc, verifier: self, add)
        func pagePath(_ page: UUID) -> String { doc.engine.findingPath(for: page, in: package) }
        let engine: (any StorageEngine)?
        if !databaseOpens { engine = nil } else {
            do {
                // A reader's engine: verify never changes a file (no schema upgrade in place).
                engine = try DocumentSession.makeEngine(doc, package: package, fileSystem: fs, readOnly: true)
                engine?.limitReadCost(replayScanBudget)
            } catch {
                add(.error, package.documentPath, "\(error)")
                engine = nil
            }
        }
        defer { engine?.closeWithoutTidying() }
        var referenced: [UUID: UUID] = [:]  // asset -> page
        if let engine {
            for (i, entry) in doc.pages.enumerated() {
                // A cancelled task stops between pages; the error finding says the check is incomplete.
                if Task.isCancelled {
                    add(.error, package.path, "verification cancelled before page \(i + 1) of \(doc.pages.count); the document was not fully checked")
                    cancelled = true
                    return findings
                }
                defer { reporter.report(i + 1, to: progress) }
                do {
                    let content = try engine.checkPage(entry.id)
                    let level: Finding.Severity = wasOpen ? .warning : .error
                    if content.elementCount != entry.elementCount {
                        add(level, pagePath(entry.id), "page \(entry.id) holds \(content.elementCount) elements but document.json says \(entry.elementCount)")
                    }
                    if content.canvasSize != entry.canvasSize {
                        add(level, pagePath(entry.id), "page \(entry.id) canvas is \(content.canvasSize.width)x\(content.canvasSize.height) but document.json says \(entry.width)x\(entry.height)")
                    }
                    // Ink the page never shows: imported from a producer whose origin is
                    // elsewhere, or moved off by an edit. A warning: nothing is lost.
                    if content.strokesOffPage > 0 {
                        let n = content.strokesOffPage
                        add(.warning, pagePath(entry.id), "page \(i + 1): \(n) stroke\(n == 1 ? " lies" : "s lie") wholly outside the page (\(String(format: "%.1f", Double(content.canvasSize.width) / 10)) x \(String(format: "%.1f", Double(content.canvasSize.height) / 10)) pt) and \(n == 1 ? "does" : "do") not show")
                    }
                    let assets = content.assetIDs
                    if Set(entry.assets) != assets {
                        add(level, package.documentPath, "the asset list of page \(entry.id) disagrees with its images")
                    }
                    for a in assets { referenced[a] = entry.id }
                } catch {
                    // How much of a damaged page salvage would keep, and how much is lost (read only).
                    if case .corruptPage = error, let s = try? engine.salvagePage(entry.id, canvas: entry.canvasSize, keep: false) {
                        let lost = s.salvage.lost ?? max(0, entry.elementCount - s.content.elements.count)
                        add(.error, pagePath(entry.id), "\(error); \(lost) of \(max(entry.elementCount, s.salvage.expected ?? 0)) elements lost, \(s.content.elements.count) can be salvaged (lnote repair)")
                    } else {
                        add(.error, pagePath(entry.id), "\(error)")
                    }
                }
            }
            // A torn journal tail, a stale journal, a damaged one.
            findings += engine.findings
        }
        if Task.isCancelled {
            add(.error, package.path, "verification cancelled after the pages, before the assets and the manifest; the document was not fully checked")
            cancelled = true
            return findings
        }
        let assetsOnDisk = (try? PackageReader.scanAssets(package, fileSystem: fs)) ?? (assets: [:], strangers: [])
        for (asset, page) in referenced.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where assetsOnDisk.assets[asset] == nil {
            add(.error, package.assetsPath, "page \(page) shows asset \(asset), which is missing")
        }
        var listedAssets = Set(doc.pages.flatMap(\.assets))
        if let engine {
            let listed = Set(doc.pages.map(\.id))
            let unlisted = ((try? PackageReader.scanPages(package, fileSystem: fs))?.pageFiles ?? []).filter { !listed.contains($0) }
            listedAssets.formUnion(PackageReader.assetsOfKeptPages(package, unlisted: Array(unlisted), engine: engine, fileSystem: fs))
        }
        for (asset, ext) in assetsOnDisk.assets where referenced[asset] == nil && !listedAssets.contains(asset) {
            add(.warning, package.assetPath(asset, ext: ext), "orphan asset (no page shows it); removed when the document closes")
        }
        for name in assetsOnDisk.strangers { add(.warning, package.assetsPath + "/" + name, "not an asset name this format knows") }
        // Asset bytes against the checksums document.json records (packages from before have none).
        for (asset, ext) in assetsOnDisk.assets.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            guard let recorded = doc.assetChecksums?[asset.uuidString] else { continue }
            if Task.isCancelled {
                add(.error, package.path, "verification cancelled before the checksum of asset \(asset); the document was not fully checked")
                cancelled = true
                return findings
            }
            let path = package.assetPath(asset, ext: ext)
            guard AssetChecksum.isWellFormed(recorded) else {
                add(.error, package.documentPath, "the checksum of asset \(asset) is \(recorded.debugDescription), not crc32c:<8 hex digits>")
                continue
            }
            do {
                let actual = try AssetChecksum.ofFile(path, fileSystem: fs)
                if actual != recorded { add(.error, path, "the asset's bytes do not match its checksum (\(actual), document.json records \(recorded)): it is damaged") }
            } catch {
                add(.error, path, "\(error)")
            }
        }

        if let scan = try? PackageReader.scanPages(package, fileSystem: fs) {
            let listed = Set(doc.pages.map(\.id))
            for id in scan.pageFiles.subtracting(listed).sortedByUUIDString() {
                add(.warning, package.pagePath(id), "page file not listed in document.json (kept; lnote repair moves it to recovered/)")
            }
            for id in scan.journalFiles.subtracting(listed).sortedByUUIDString() {
                add(.warning, package.journalPath(id), "journal of a page not listed in document.json")
            }
            for name in scan.keptAside.sorted() {
                add(.warning, package.pagesPath + "/" + name, "a damaged journal kept aside by the journal engine (the frames that checked, before and after the damage, are in the page; the damaged ones only here)")
            }
            for name in scan.strangers { add(.warning, package.pagesPath + "/" + name, "not a page file name this format knows") }
        } else {
            add(.error, package.pagesPath, "the pages folder cannot be listed")
        }

        switch PackageReader.readManifest(package, fileSystem: fs) {
        case nil:
            add(.error, package.manifestPath, "missing or corrupt (rebuilt from document.json on the next open)")
        case let m? where m != Manifest(doc):
            add(wasOpen ? .warning : .error, package.manifestPath, "disagrees with document.json (rebuilt on the next open)")
        default: break
        }
        for dir in [package.path, package.pagesPath, package.assetsPath, package.thumbnailsPath] {
            for name in (try? fs.contentsOfDirectory(dir)) ?? [] where name.hasPrefix(temporaryFilePrefix) {
                add(.warning, dir + "/" + name, "stale temporary file (removed on the next open)")
            }
        }
        return findings
    }
}
