// The SQLite engine's entry in the store's engine table: what Engines.swift dispatches to for
// `EngineKind.sqlite`, registered by `Library.enableSQLiteEngine()`.

import Foundation
import LulucatInk
import LulucatStore

extension Library {
    /// Makes the SQLite engine (`EngineKind.sqlite`, docs/sqlite-engine.md) available to every
    /// library, session, reader, verify, repair, migration and import in this process. Call it once
    /// at launch, before the first document is opened; calling it again, from any thread, changes
    /// nothing.
    ///
    /// ```swift
    /// import LulucatStore
    /// import LulucatStoreSQLite
    ///
    /// Library.enableSQLiteEngine()
    /// let library = Library(root: Library.defaultRoot())
    /// try library.createDocument(title: "Notes", engine: .sqlite)
    /// ```
    ///
    /// Without it a SQLite document is listed (with `LibraryEntry.unavailableEngine` set), and
    /// opening, verifying, repairing, copying or migrating it throws
    /// `StoreError.engineNotAvailable`, changing nothing in it.
    public static func enableSQLiteEngine() {
        EngineProviders.register(SQLiteEngineProvider())
    }
}

/// The SQLite engine's part of each of the engine table's dispatches.
struct SQLiteEngineProvider: EngineProvider {
    var kind: EngineKind { .sqlite }

    func makeEngine(_ package: DocumentPackage, fileSystem: any FileSystem, readOnly: Bool) throws(StoreError) -> any StorageEngine {
        try SQLiteEngine(package: package, fileSystem: fileSystem, readOnly: readOnly)
    }

    func createPages(_ pages: [(UUID, PageContent)], in package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        try SQLiteEngine.createDatabase(package, pages: pages, fileSystem: fileSystem)
    }

    func prepareForCopy(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) {
        try SQLiteEngine.checkpointForCopy(package, fileSystem: fileSystem)
    }

    func verifyForm(_ package: DocumentPackage, _ doc: DocumentMetadata, verifier: DocumentVerifier,
                    _ add: (Finding.Severity, String, String) -> Void) -> Bool {
        verifier.verifyContentDatabase(package, doc, add)
    }

    func repairForm(_ package: DocumentPackage, _ doc: DocumentMetadata, fileSystem: any FileSystem,
                    findings: inout [Finding]) throws(StoreError) {
        try SQLiteDatabaseRepair(fileSystem: fileSystem).rebuildDamagedDatabase(package, doc, findings: &findings)
    }

    func formWriter(package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> any FormWriter {
        try SQLiteFormWriter(package: package, fileSystem: fileSystem)
    }

    func pagesForRebuild(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> [(UUID, PageContent)] {
        try SQLiteContentStore.pagesForRebuild(package, fileSystem: fileSystem)
    }
}
