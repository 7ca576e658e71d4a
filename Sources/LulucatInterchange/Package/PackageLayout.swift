// Which paths a document package may contain (SPEC §2), as the export archive allows them. Every
// rule is the store's own (Library.isPackageFile, DocumentPackage's names, the engine table), so
// the library and import cannot disagree on a name.

import Foundation
import LulucatStore

/// The names a document package holds, relative to the package folder. A name read from an
/// archive is accepted only if it is exactly one of these shapes, with ids in canonical UUID form
/// (upper-case hex, as `UUID.uuidString` writes them).
package enum PackageLayout {
    /// Image asset extensions an archive may carry: the store's.
    package static var assetExtensions: Set<String> { DocumentPackage.assetExtensions }
    /// Files at the package root: the two JSON files and every engine's root files.
    package static var rootFiles: Set<String> { EngineKind.allRootFiles.union(["manifest.json", "document.json"]) }
    /// Folders at the package root.
    package static let folders: Set<String> = ["pages", "assets", "thumbnails"]
    /// The suffix of a package folder (`<UUID>.lnote`).
    package static var packageExtension: String { DocumentPackage.pathExtension }

    /// Whether `path` (relative to the package folder, `/`-separated) is a file of the layout: the
    /// library's own rule (`Library.isPackageFile`), so an archive holds exactly what a package may.
    package static func allowsFile(_ path: String) -> Bool {
        Library.isPackageFile(path)
    }

    /// Whether `path` is a folder of the layout, written with its trailing `/`.
    package static func allowsFolder(_ path: String) -> Bool {
        guard path.hasSuffix("/") else { return false }
        return folders.contains(String(path.dropLast()))
    }

    /// Whether `name` is a package folder name `<UUID>.lnote`, and its id (the library's rule).
    package static func packageFolderID(_ name: Substring) -> UUID? {
        DocumentPackage.id(fromDirectoryName: String(name))
    }

    /// `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` with upper-case hex digits, nothing else: the
    /// store's one rule for ids (`UUID.isCanonicalString`), so an archive accepts exactly the
    /// names a package may hold.
    package static func isCanonicalUUID(_ s: Substring) -> Bool {
        UUID.isCanonicalString(s)
    }
}
