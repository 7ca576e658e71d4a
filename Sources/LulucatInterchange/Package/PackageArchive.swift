// One-file export of a document package as a zip archive, and its checked import.

import Foundation
import LulucatStore

/// A document package as one zip file (layout in `docs/export-format.md`).
///
/// This type knows names and bytes only: reading files from the package folder, writing them to
/// a new one and validating what they contain belong to the store.
///
/// ```swift
/// let zip = try PackageArchive.export(files: files, topFolder: documentID)
/// let back = try PackageArchive.read(zip)   // [(relativePath, data)], top folder removed
/// ```
package enum PackageArchive {
    /// Bounds for importing a package: generous for real notebooks, fatal for zip bombs.
    package static var defaultLimits: ZipReader.Limits {
        var l = ZipReader.Limits()
        l.maxEntries = ImportLimits.maxFiles
        l.maxTotalUncompressed = ImportLimits.maxDocumentBytes
        l.maxEntryUncompressed = 2 << 30
        // No ratio check: deflate cannot pass 1032:1, and a valid page of repeated strokes comes
        // close (our own export must import back). What an import costs is bounded by the totals,
        // by the per-file limits of the store's import and by inflating in pieces.
        l.maxRatio = .max
        return l
    }

    /// Writes the package files into one archive.
    ///
    /// Entries are ordered `manifest.json`, `document.json`, then the rest by byte order of the
    /// path, so the same files always give the same bytes. JPEG, PNG and HEIC are stored (they
    /// are compressed already), everything else is deflated.
    /// - Parameters:
    ///   - files: paths relative to the package folder; each must be a file of `PackageLayout`.
    ///   - topFolder: when given, every entry is put under `<id>.lnote/`, so unzipping the file
    ///     with any tool gives back a package folder.
    /// - Throws: `ArchiveError` `.outsideLayout` for a path the layout does not allow (we never
    ///   write what `read` would refuse), `.duplicateName`, `.tooLarge`.
    package static func export(files: [(relativePath: String, data: Data)], topFolder: UUID? = nil,
                               options: ZipWriter.Options = ZipWriter.Options()) throws(ArchiveError) -> Data {
        let writer = ZipWriter(options: options)
        try write(files: files, topFolder: topFolder, to: writer)
        return try writer.finish()
    }

    /// Like `export(files:topFolder:options:)` into a writer the caller made (for instance one
    /// streaming to a file); the caller calls `finish()`.
    package static func write(files: [(relativePath: String, data: Data)], topFolder: UUID?,
                              to writer: ZipWriter) throws(ArchiveError) {
        let prefix = topFolder.map { "\($0.uuidString).\(PackageLayout.packageExtension)/" } ?? ""
        for file in files.sorted(by: { exportOrder($0.relativePath, before: $1.relativePath) }) {
            guard PackageLayout.allowsFile(file.relativePath) else {
                throw ArchiveError(.outsideLayout, entry: file.relativePath, "this path is not part of a document package")
            }
            let ext = file.relativePath.split(separator: ".").last.map(String.init) ?? ""
            let method: ZipWriter.Method = PackageLayout.assetExtensions.contains(ext) ? .stored : .deflated
            try writer.add(path: prefix + file.relativePath, data: file.data, method: method)
        }
    }

    /// Like `write(files:topFolder:to:)`, loading each file only when its turn comes, so a large
    /// package never has more than one file in memory (with a writer that streams to a sink,
    /// the archive is not held either).
    /// - Parameters:
    ///   - paths: package-relative paths, each a file of `PackageLayout`.
    ///   - contents: reads one file; an error it throws is rethrown as is.
    package static func write(paths: [String], topFolder: UUID?, to writer: ZipWriter,
                              contents: (String) throws -> Data) throws {
        for path in paths.sorted(by: exportOrder) {
            try write(files: [(path, try contents(path))], topFolder: topFolder, to: writer)
        }
    }

    /// Reads and checks an exported package.
    /// - Returns: the files with paths relative to the package folder (a single `<UUID>.lnote/`
    ///   top folder, if the archive has one, is removed), in archive order; folder entries are
    ///   dropped.
    /// - Throws: `ArchiveError` for every way the archive can be unsafe or foreign (see
    ///   `ZipReader`), `.outsideLayout` for a name that is not a package path or entries that do
    ///   not share one top folder, `.malformed` when there is no `document.json`.
    package static func read(_ data: Data, limits: ZipReader.Limits = defaultLimits) throws(ArchiveError) -> [(relativePath: String, data: Data)] {
        var files: [(relativePath: String, data: Data)] = []
        let zip = try open(data, limits: limits)
        for entry in zip.reader.entries where !entry.isDirectory {
            files.append((String(entry.path.dropFirst(zip.prefixLength)), try zip.reader.contents(of: entry)))
        }
        return files
    }

    /// Checks the archive, then calls `body` with each file's package-relative path and contents,
    /// one at a time (only one file's contents is in memory at once). Nothing is inflated before
    /// every name and size has been checked.
    package static func forEachFile(in data: Data, limits: ZipReader.Limits = defaultLimits,
                                    _ body: (String, Data) throws -> Void) throws {
        let zip = try open(data, limits: limits)
        try zip.reader.forEachFile { entry, contents in
            try body(String(entry.path.dropFirst(zip.prefixLength)), contents)
        }
    }

    /// Checks the archive and lists its files (package-relative paths, folders dropped) with
    /// their entries, inflating nothing: the caller streams the ones it wants with
    /// `ZipReader.stream(_:chunkSize:into:)`.
    /// - Returns: also the id of the archive's `<UUID>.lnote/` top folder, when it has one.
    package static func files(in data: Data, limits: ZipReader.Limits = defaultLimits) throws(ArchiveError)
        -> (reader: ZipReader, files: [(path: String, entry: ZipReader.Entry)], topFolder: UUID?) {
        let zip = try open(data, limits: limits)
        let files = zip.reader.entries.filter { !$0.isDirectory }.map { (String($0.path.dropFirst(zip.prefixLength)), $0) }
        let top = zip.prefixLength > 0 ? zip.reader.entries.first.flatMap { topFolderPrefix(of: $0.path) }
            .flatMap { PackageLayout.packageFolderID(Substring($0.dropLast())) } : nil
        return (zip.reader, files, top)
    }

    // MARK: - Private

    private static func open(_ data: Data, limits: ZipReader.Limits) throws(ArchiveError) -> (reader: ZipReader, prefixLength: Int) {
        let reader = try ZipReader(data, limits: limits, allowedName: allowsArchiveName)
        // Either no entry has a top folder or all share the same one.
        let prefixes = Set(reader.entries.map { topFolderPrefix(of: $0.path) ?? "" })
        if prefixes.count > 1 {
            let first = reader.entries.first { (topFolderPrefix(of: $0.path) ?? "") != (topFolderPrefix(of: reader.entries[0].path) ?? "") }
            throw ArchiveError(.outsideLayout, entry: first?.path,
                               "entries do not share one package folder (found \(prefixes.sorted().map { $0.isEmpty ? "none" : $0 }.joined(separator: ", ")))")
        }
        let prefix = prefixes.first ?? ""
        guard reader.entries.contains(where: { $0.path == prefix + "document.json" }) else {
            throw ArchiveError(.malformed, "the archive holds no \(prefix)document.json: it is not an exported document")
        }
        return (reader, prefix.utf8.count)
    }

    /// The layout predicate handed to the zip reader: package paths, optionally under one
    /// `<UUID>.lnote/` folder (which is how Finder and `zip -r` archive a package folder).
    static func allowsArchiveName(_ name: String) -> Bool {
        var rest = Substring(name)
        if let prefix = topFolderPrefix(of: name) {
            rest = rest.dropFirst(prefix.count)
            if rest.isEmpty { return true } // the top folder's own entry
        }
        return PackageLayout.allowsFile(String(rest)) || PackageLayout.allowsFolder(String(rest))
    }

    /// "<UUID>.lnote/" when `name` starts with such a folder.
    private static func topFolderPrefix(of name: String) -> String? {
        guard let slash = name.firstIndex(of: "/"),
              PackageLayout.packageFolderID(name[..<slash]) != nil else { return nil }
        return String(name[...slash])
    }

    /// Metadata first (a reader streaming the archive meets it before the pages), then by bytes.
    private static func exportOrder(_ a: String, before b: String) -> Bool {
        func rank(_ p: String) -> Int { p == "manifest.json" ? 0 : p == "document.json" ? 1 : 2 }
        if rank(a) != rank(b) { return rank(a) < rank(b) }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
