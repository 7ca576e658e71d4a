// Which paths a document package may contain (SPEC §2), as the export archive allows them. The
// names come from the store (its engine table and asset extensions); the shape rules are stricter
// here only in that a name read from an archive must already be canonical.

import Foundation
import LulucatStore

/// The names a document package holds, relative to the package folder. A name read from an
/// archive is accepted only if it is exactly one of these shapes, with ids in canonical UUID form
/// (upper-case hex, as `UUID.uuidString` writes them).
public enum PackageLayout {
    /// Image asset extensions an archive may carry: the store's.
    public static var assetExtensions: Set<String> { DocumentPackage.assetExtensions }
    /// Files at the package root: the two JSON files and every engine's root files.
    public static var rootFiles: Set<String> { EngineKind.allRootFiles.union(["manifest.json", "document.json"]) }
    /// Folders at the package root.
    public static let folders: Set<String> = ["pages", "assets", "thumbnails"]
    /// The suffix of a package folder (`<UUID>.lnote`).
    public static let packageExtension = "lnote"

    /// Whether `path` (relative to the package folder, `/`-separated) is a file of the layout.
    public static func allowsFile(_ path: String) -> Bool {
        if rootFiles.contains(path) { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let (id, ext) = splitIDName(parts[1]), isCanonicalUUID(id) else { return false }
        switch parts[0] {
        case "pages": return EngineKind.allPageFileExtensions.contains(String(ext))
        case "assets": return assetExtensions.contains(String(ext))
        case "thumbnails": return ext == "jpg"
        default: return false
        }
    }

    /// Whether `path` is a folder of the layout, written with its trailing `/`.
    public static func allowsFolder(_ path: String) -> Bool {
        guard path.hasSuffix("/") else { return false }
        return folders.contains(String(path.dropLast()))
    }

    /// Whether `name` is a package folder name `<UUID>.lnote`, and its id.
    public static func packageFolderID(_ name: Substring) -> UUID? {
        guard let (id, ext) = splitIDName(name), ext == packageExtension, isCanonicalUUID(id) else { return nil }
        return UUID(uuidString: String(id))
    }

    /// `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` with upper-case hex digits, nothing else: the
    /// store's one rule for ids (`UUID.isCanonicalString`), so an archive accepts exactly the
    /// names a package may hold.
    public static func isCanonicalUUID(_ s: Substring) -> Bool {
        UUID.isCanonicalString(s)
    }

    /// "ID.ext" -> ("ID", "ext") when there is exactly one dot.
    private static func splitIDName(_ name: Substring) -> (Substring, Substring)? {
        let pieces = name.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2 else { return nil }
        return (pieces[0], pieces[1])
    }
}
