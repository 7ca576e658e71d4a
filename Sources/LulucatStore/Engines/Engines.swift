// The one place that chooses by engine kind. Everything an engine knows (how it opens, how a new
// document's first pages are written, which files hold its pages, what a copy must do first) lives
// in its own folder as static members of its type; the switches below only dispatch. Adding an
// engine is its folder plus a case in each switch here (docs/platforms.md lists the fences; this
// file is the engine table).

import Foundation
import LulucatInk

extension EngineKind {
    /// The engine a session (or verify, repair, migration) works through for a document of this kind.
    func makeEngine(_ package: DocumentPackage, codec: SampleCodecID, fileSystem: any FileSystem,
                    journal: JournalOptions = JournalOptions()) throws(StoreError) -> any StorageEngine {
        switch self {
        case .snapshot: return SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
        case .journal: return JournalEngine(package: package, fileSystem: fileSystem, codec: codec, options: journal)
        case .sqlite: return try SQLiteEngine(package: package, fileSystem: fileSystem)
        }
    }

    /// Writes the pages of a document being built (in its staging folder) in this engine's form.
    func createPages(_ pages: [(UUID, PageContent)], in package: DocumentPackage, codec: SampleCodecID,
                     fileSystem: any FileSystem) throws(StoreError) {
        switch self {
        case .snapshot, .journal:
            // A journal page with no journal is its snapshot: both start as snapshot files.
            let engine = SnapshotEngine(package: package, fileSystem: fileSystem, codec: codec)
            for (page, content) in pages { try engine.createPage(page, content: content) }
        case .sqlite:
            try SQLiteEngine.createDatabase(package, pages: pages, fileSystem: fileSystem)
        }
    }

    /// The files of this engine's form found in `package` now, as absolute paths.
    func formFiles(in package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> Set<String> {
        switch self {
        case .snapshot: return try SnapshotEngine.formFiles(in: package, fileSystem: fileSystem)
        case .journal: return try JournalEngine.formFiles(in: package, fileSystem: fileSystem)
        case .sqlite: return try SQLiteEngine.formFiles(in: package, fileSystem: fileSystem)
        }
    }

    /// What must happen before a document of this kind is copied file by file (duplicate, export),
    /// with its lock held: a SQLite database is checkpointed into its one file.
    func prepareForCopy(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        switch self {
        case .snapshot, .journal: return
        case .sqlite: try SQLiteEngine.checkpointForCopy(package, fileSystem: fileSystem)
        }
    }
}
