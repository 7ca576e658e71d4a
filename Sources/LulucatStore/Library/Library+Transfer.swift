// Documents leaving and entering the library: a consistent read of a package for export, and the
// checked import of a package from elsewhere (untrusted input).

import Foundation
import LulucatInk

/// What an import brought in, and what verification noticed that was not an error.
public struct ImportResult: Sendable {
    public var package: DocumentPackage
    /// True when the archive's document id was already in the library and a new one was given.
    public var renumbered: Bool
    public var findings: [Finding]
}

extension StoreError {
    /// An imported package that fails verification; nothing was added to the library.
    public static func importRejected(_ findings: [Finding]) -> StoreError {
        .invalidArgument("the imported document is not valid, nothing was imported:\n" + findings.map { "  \($0)" }.joined(separator: "\n"))
    }
}

extension Library {
    /// Calls `body` with the package and its files (relative paths) while holding the document's
    /// lock, so no session changes it while it is read (an export sees one consistent state).
    public func withConsistentFiles<T>(_ id: UUID, _ body: (DocumentPackage, [String]) throws -> T) throws -> T {
        let fs = fileSystem
        let package = self.package(id)
        let lock = try package.lockForWriting(fs)
        defer { fs.unlock(lock) }
        _ = try PackageReader.readDocument(package, fileSystem: fs)
        try EngineHooks.prepareForCopy(package, fileSystem: fs)
        let files = ["document.json", "manifest.json"] + (try PackageReader.contentFiles(package, fileSystem: fs))
        return try body(package, files)
    }

    /// Whether `path` (relative to a package) is a file of the package layout.
    public static func isPackageFile(_ path: String) -> Bool {
        if ["manifest.json", "document.json", "content.sqlite"].contains(path) { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        switch parts[0] {
        case "pages": return DocumentPackage.parseName(String(parts[1]), extensions: ["content", "journal"]) != nil
        case "assets": return DocumentPackage.parseName(String(parts[1]), extensions: DocumentPackage.assetExtensions) != nil
        case "thumbnails": return DocumentPackage.parseName(String(parts[1]), extensions: ["jpg"]) != nil
        default: return false
        }
    }

    /// Imports a package from elsewhere. `fill` writes its files through the function it is given
    /// (relative path, bytes) into a staging folder; then the package is checked as `lnote verify`
    /// checks it and only a valid one is renamed into the library. A document id already in the
    /// library (or its trash) gets a new id. On any failure nothing is left behind.
    public func importPackage(_ fill: (_ write: (String, Data) throws -> Void) throws -> Void) throws -> ImportResult {
        try prepare()
        let fs = fileSystem
        let stagingID = UUID()
        let staging = DocumentPackage(unchecked: root + "/" + temporaryFilePrefix + "import-" + stagingID.uuidString, id: stagingID)
        do {
            try StoreError.io { () throws(FileError) in
                try fs.makeDirectory(staging.path)
                for dir in [staging.pagesPath, staging.assetsPath, staging.thumbnailsPath] { try fs.makeDirectory(dir) }
            }
            var written = Set<String>()
            try fill { path, data in
                guard Library.isPackageFile(path) else { throw StoreError.invalidArgument("'\(path)' is not a file of a document package") }
                guard written.insert(path).inserted else { throw StoreError.invalidArgument("'\(path)' appears twice") }
                try StoreError.io { () throws(FileError) in try fs.writeAtomically(data, to: staging.path + "/" + path) }
            }
            // The archive's document.json names the document; it must parse before anything else.
            let docBytes: [UInt8]
            do { docBytes = try fs.readFile(staging.documentPath, limit: PackageJSON.maxFileSize) } catch {
                throw StoreError.corruptFile(path: "document.json", reason: "the imported package has none")
            }
            var doc = try PackageJSON.decodeDocument(docBytes, path: "document.json (imported)")
            // Page metadata in document.json is derived from the pages (a document exported from a
            // session that was killed may lag them): brought in line, as an open after a crash does.
            let staged = DocumentPackage(unchecked: staging.path, id: doc.id)
            if let engine = try? DocumentSession.makeEngine(doc, package: staged, fileSystem: fs) {
                for i in doc.pages.indices {
                    if let content = try? engine.loadPage(doc.pages[i].id) { _ = doc.pages[i].reconcile(with: content) }
                }
                try? engine.close()
            }
            let taken = try fs.info(package(doc.id).path) != nil
                || (try fs.info(trashPath + "/" + DocumentPackage.directoryName(doc.id)) != nil)
            if taken { doc.id = UUID() }
            // The manifest is a cache: always rebuilt from the imported truth.
            try StoreError.io { () throws(FileError) in
                try fs.writeAtomically(PackageJSON.encode(doc), to: staging.documentPath)
                try fs.writeAtomically(PackageJSON.encode(Manifest(doc)), to: staging.manifestPath)
            }
            let check = DocumentPackage(unchecked: staging.path, id: doc.id)
            let findings = DocumentVerifier(fileSystem: fs).verify(check)
            let errors = findings.filter { $0.severity == .error }
            guard errors.isEmpty else { throw StoreError.importRejected(errors) }
            let final = package(doc.id)
            try StoreError.io { () throws(FileError) in
                try fs.syncDirectory(staging.path)
                try fs.rename(staging.path, to: final.path)
                try fs.syncDirectory(root)
            }
            return ImportResult(package: final, renumbered: taken, findings: findings)
        } catch {
            try? fs.removeTree(staging.path)
            throw error
        }
    }
}

/// What each engine must do before its files are copied (a SQLite database is checkpointed into
/// one file). The snapshot and journal engines need nothing.
enum EngineHooks {
    /// Called with the document's lock held, so no session writes while the files are copied.
    static func prepareForCopy(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        try PackageReader.readDocument(package, fileSystem: fileSystem).engine.prepareForCopy(package, fileSystem: fileSystem)
    }
}
