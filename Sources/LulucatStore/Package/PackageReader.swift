// Reading a package's structure: document.json, and which page files and assets are on disk.

import Foundation
import LulucatInk

package enum PackageReader {
    /// Reads and decodes document.json, checking it names this package's document.
    package static func readDocument(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> DocumentMetadata {
        let path = package.documentPath
        let bytes: [UInt8]
        do { bytes = try fs.readFile(path, limit: PackageJSON.maxFileSize) } catch {
            if error.isNotFound { throw .corruptFile(path: path, reason: "the file is missing") }
            if error.errno == ELOOP { throw .unexpectedFileKind(path: error.found != nil ? error.path : path, found: .symlink) }
            throw .file(error)
        }
        let doc = try PackageJSON.decodeDocument(bytes, path: path)
        guard doc.id == package.id else {
            throw .corruptFile(path: path, reason: "it names document \(doc.id) but the package is \(package.id)")
        }
        return doc
    }

    /// Reads the manifest, or nil when it is missing or unreadable.
    package static func readManifest(_ package: DocumentPackage, fileSystem fs: any FileSystem) -> Manifest? {
        guard let bytes = try? fs.readFile(package.manifestPath, limit: PackageJSON.maxFileSize) else { return nil }
        return try? PackageJSON.decodeManifest(bytes, path: package.manifestPath)
    }

    package struct PageScan {
        /// Pages with a snapshot file.
        package var pageFiles: Set<UUID> = []
        /// Pages with a journal file.
        package var journalFiles: Set<UUID> = []
        /// Damaged journals kept aside (`<page>.journal.corrupt-<n>`), by name.
        package var keptAside: [String] = []
        /// Names in pages/ that are not ours.
        package var strangers: [String] = []
    }

    package static func scanPages(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> PageScan {
        var scan = PageScan()
        // A SQLite package has no pages/ (DocumentPackage.contentFolders): no page files.
        guard try fs.checked.info(package.pagesPath) != nil else { return scan }
        let names = try fs.checked.contentsOfDirectory(package.pagesPath)
        for name in names {
            if let (id, ext) = DocumentPackage.parseName(name, extensions: ["content", "journal"]) {
                if ext == "content" { scan.pageFiles.insert(id) } else { scan.journalFiles.insert(id) }
            } else if isKeptAsideJournal(name) {
                scan.keptAside.append(name)
            } else if !name.hasPrefix(temporaryFilePrefix) {
                scan.strangers.append(name)
            }
        }
        return scan
    }

    /// Whether a package folder is there: false when missing; a link, file or FIFO in its place is
    /// refused (`StoreError.unexpectedFileKind`), never treated as empty and never followed.
    static func folderIsPresent(_ path: String, fileSystem fs: any FileSystem) throws(StoreError) -> Bool {
        switch try fs.checked.info(path)?.kind {
        case nil: return false
        case .directory?: return true
        case let kind?: throw .unexpectedFileKind(path: path, found: kind)
        }
    }

    /// Whether a name is `<UUID>.journal.corrupt-<n>`, a damaged journal the journal engine kept aside.
    static func isKeptAsideJournal(_ name: String) -> Bool {
        let marker = ".journal.corrupt-"
        guard let r = name.range(of: marker), UUID(strictString: String(name[..<r.lowerBound])) != nil else { return false }
        let n = name[r.upperBound...]
        return !n.isEmpty && n.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The assets on disk: id to file extension.
    package static func scanAssets(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> (assets: [UUID: String], strangers: [String]) {
        var assets: [UUID: String] = [:]
        var strangers: [String] = []
        guard try folderIsPresent(package.assetsPath, fileSystem: fs) else { return ([:], []) }
        for name in try fs.checked.contentsOfDirectory(package.assetsPath) {
            if let (id, ext) = DocumentPackage.parseName(name, extensions: DocumentPackage.assetExtensions) {
                assets[id] = ext
            } else if !name.hasPrefix(temporaryFilePrefix) {
                strangers.append(name)
            }
        }
        return (assets, strangers)
    }
}

extension PackageReader {
    /// The assets shown by page files kept outside the page list: pages on disk that document.json
    /// does not list, and pages `lnote repair` moved to recovered/. Orphan removal keeps these, so
    /// a page someone may still recover keeps its images.
    package static func assetsOfKeptPages(_ package: DocumentPackage, unlisted: [UUID], engine: any StorageEngine,
                                  fileSystem fs: any FileSystem) -> Set<UUID> {
        var assets = Set<UUID>()
        for id in unlisted {
            if let content = try? engine.loadPage(id) { assets.formUnion(content.assetIDs) }
        }
        var damaged: [[UInt8]] = []
        for name in (try? fs.contentsOfDirectory(package.recoveredPath)) ?? [] where name.contains(".content") {
            guard let bytes = try? fs.readFile(package.recoveredPath + "/" + name) else { continue }
            if let content = try? PageFile.decode(bytes) { assets.formUnion(content.assetIDs) } else { damaged.append(bytes) }
        }
        // A damaged page kept in recovered/ may show an image whose record no longer checks: every
        // asset whose 16 id bytes still appear in such a file is kept (restore-page may need it).
        if !damaged.isEmpty, let onDisk = try? scanAssets(package, fileSystem: fs) {
            for id in onDisk.assets.keys where !assets.contains(id) {
                let needle = withUnsafeBytes(of: id.uuid) { Array($0) }
                if damaged.contains(where: { bytes in
                    bytes.count >= 16 && (0...(bytes.count - 16)).contains { i in bytes[i] == needle[0] && bytes[i..<(i + 16)].elementsEqual(needle) }
                }) { assets.insert(id) }
            }
        }
        return assets
    }
}

extension DocumentMetadata {
    /// Reads a package's document.json (read-only; no lock taken).
    public static func read(_ package: DocumentPackage, fileSystem: any FileSystem = PosixFileSystem()) throws(StoreError) -> DocumentMetadata {
        try PackageReader.readDocument(package, fileSystem: fileSystem)
    }
}
