// What migration needs of every engine: its leftovers after an interruption and the FormWriter
// protocol. Each engine's writer lives in its own folder (Engines/*/…FormWriter.swift); which one a
// migration uses is chosen in Engines/Engines.swift.

import Foundation
import LulucatInk

/// The page-holding files of one engine inside a package.
enum EngineForm {
    /// Every file of another engine's form that `keeping`'s form does not own: what an
    /// interrupted migration leaves beside the form document.json names.
    static func leftovers(keeping: EngineKind, in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> [String] {
        var others = Set<String>()
        for engine in EngineKind.allCases where engine != keeping {
            others.formUnion(try engine.formFiles(in: package, fileSystem: fs))
        }
        return others.subtracting(try keeping.formFiles(in: package, fileSystem: fs)).sorted()
    }

    /// Removes `files`, then syncs the folders they were in.
    static func remove(_ files: [String], in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) {
        do {
            for f in files { try fs.checked.removeIfPresent(f) }
            var dirs = Set<String>()
            for f in files { dirs.insert(splitPath(f).0) }
            for d in dirs.sorted() { try fs.checked.syncDirectory(d) }
        }
    }
}

/// Writes pages in a new engine's form beside the old one; `finish` makes the form complete
/// under its final file names (still ignored until document.json names the engine).
package protocol FormWriter: AnyObject {
    func write(_ page: UUID, _ content: PageContent) throws(StoreError)
    func finish() throws(StoreError)
    /// Gives up: closes what is open (the files left are leftovers open-time cleanup removes).
    func abandon()
}

/// Nothing to write: the old form already is the new one (snapshot files are journal pages
/// without journals); verification still reads every page through the new engine.
final class ExistingFormWriter: FormWriter {
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) {}
    func finish() throws(StoreError) {}
    func abandon() {}
}

