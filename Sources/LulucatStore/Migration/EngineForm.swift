// What migration needs of every engine: its leftovers after an interruption (removed at every
// open, so here in the store; the migration itself is EngineMigration, in LulucatStoreMaintenance)
// and the FormWriter protocol. Each engine's writer lives in its own folder (Engines/*/…FormWriter.swift); which one a
// migration uses is chosen in Engines/Engines.swift.

import Foundation
import LulucatInk

/// The page-holding files of one engine inside a package.
package enum EngineForm {
    /// Every file of another engine's form that `keeping`'s form does not own: what an
    /// interrupted migration leaves beside the form document.json names.
    package static func leftovers(keeping: EngineKind, in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> [String] {
        var others = Set<String>()
        for engine in EngineKind.allCases where engine != keeping {
            others.formUnion(try engine.formFiles(in: package, fileSystem: fs))
        }
        return others.subtracting(try keeping.formFiles(in: package, fileSystem: fs)).sorted()
    }

    /// The marker of a migration under way, `<package>/.migration` (written by `EngineMigration`,
    /// in LulucatStoreMaintenance; read here, by every open).
    package static let migrationMarkerName = ".migration"

    /// Open-time cleanup (session open, repair, migrate): when the marker of an interrupted
    /// migration is there, the files of every form but the one document.json names are removed,
    /// then the marker. Without the marker nothing is touched.
    package static func cleanUpInterruptedMigration(_ package: DocumentPackage, engine: EngineKind, fileSystem fs: any FileSystem,
                                   findings: inout [Finding]) throws(StoreError) {
        let markerPath = package.path + "/" + migrationMarkerName
        guard try fs.checked.info(markerPath) != nil else { return }
        let leftovers = try EngineForm.leftovers(keeping: engine, in: package, fileSystem: fs)
        try EngineForm.remove(leftovers, in: package, fileSystem: fs)
        _ = try package.removeEmptyPagesFolder(engine, fileSystem: fs)
        for f in leftovers {
            findings.append(Finding(.repaired, f, "removed: left by an interrupted engine migration (document.json names the \(engine.rawValue) engine)"))
        }
        try fs.checked.removeIfPresent(markerPath)
        try fs.checked.syncDirectory(package.path)
        findings.append(Finding(.repaired, markerPath, "an interrupted engine migration was finished; the document uses the \(engine.rawValue) engine"))
    }

    /// Removes `files`, then syncs the folders they were in.
    package static func remove(_ files: [String], in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) {
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

/// A migration whose new form does not match the old; the document stays on its old engine.
public enum MigrationError: Error, CustomStringConvertible, Sendable {
    /// Reading the new form back gave something else than the old: for `page` (nil for what is
    /// not one page's: the assets, the page list), with what differed. `StoreError.migrationRefused`
    /// carries it.
    case verification(page: UUID?, String)

    public var description: String {
        switch self {
        case let .verification(page?, detail): return "migration refused, page \(page) would change: \(detail); the document is unchanged"
        case let .verification(nil, detail): return "migration refused: \(detail); the document is unchanged"
        }
    }
}

/// How many elements of each kind a page holds (for verified migration and the document index).
package struct ElementCounts: Hashable, Sendable {
    package var strokes: Int
    package var images: Int
    package var unknown: Int
    package var total: Int { strokes + images + unknown }
    package init(strokes: Int, images: Int, unknown: Int) {
        self.strokes = strokes; self.images = images; self.unknown = unknown
    }
}
