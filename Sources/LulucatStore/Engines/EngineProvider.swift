// Engines that live in a module of their own (the SQLite engine, in LulucatStoreSQLite) and reach
// the engine table only when an app links that module and enables it. The table (Engines.swift)
// asks `EngineProviders` for such an engine's code; its names (document.json's `engine` value, its
// files in a package) stay in the table, so a build without the engine still recognises its
// documents, lists them and leaves their files alone (docs/platforms.md, "Optional engines").

import Foundation
import LulucatInk

/// What the engine table needs of an engine that is not built into LulucatStore: the code behind
/// each of the table's dispatches. Registered once per process (`EngineProviders.register`).
package protocol EngineProvider: Sendable {
    /// The engine this provides.
    var kind: EngineKind { get }
    /// The engine a session, verify, repair or migration works through (`readOnly`: never writes).
    func makeEngine(_ package: DocumentPackage, fileSystem: any FileSystem, readOnly: Bool) throws(StoreError) -> any StorageEngine
    /// Writes the pages of a document being built (in its staging folder) in this engine's form.
    func createPages(_ pages: [(UUID, PageContent)], in package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError)
    /// What must happen before the document's files are copied one by one (its lock held).
    func prepareForCopy(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError)
    /// The engine's checks of its form before verify reads the pages; false when they cannot be read.
    func verifyForm(_ package: DocumentPackage, _ doc: DocumentMetadata, verifier: DocumentVerifier,
                    _ add: (Finding.Severity, String, String) -> Void) -> Bool
    /// What repair (`DocumentRepair`, in LulucatStoreMaintenance) does to the engine's form before
    /// it reads the pages.
    func repairForm(_ package: DocumentPackage, _ doc: DocumentMetadata, fileSystem: any FileSystem,
                    findings: inout [Finding]) throws(StoreError)
    /// The writer that puts a document's pages into this engine's form (migration).
    func formWriter(package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> any FormWriter
    /// Every page the engine's files hold, in its recorded order, for rebuilding document.json.
    func pagesForRebuild(_ package: DocumentPackage, fileSystem: any FileSystem) throws(StoreError) -> [(UUID, PageContent)]
}

/// The engines registered by their modules in this process. Registering is idempotent and safe
/// from any thread; an engine is never unregistered.
package enum EngineProviders {
    private final class Table: @unchecked Sendable {
        let lock = NSLock()
        var providers: [EngineKind: any EngineProvider] = [:]
    }
    private static let table = Table()

    /// Makes `provider`'s engine available to every library, session, verify, repair, migration
    /// and import of this process. A second registration of the same engine changes nothing.
    package static func register(_ provider: any EngineProvider) {
        table.lock.withLock {
            if table.providers[provider.kind] == nil { table.providers[provider.kind] = provider }
        }
    }

    /// The registered provider of `kind`, or nil.
    static func provider(_ kind: EngineKind) -> (any EngineProvider)? {
        table.lock.withLock { table.providers[kind] }
    }

    /// The registered provider of `kind`, for a document at `path`.
    ///
    /// - Throws: `StoreError.engineNotAvailable` when this build has not enabled it (nothing has
    ///   been read or written through it).
    static func require(_ kind: EngineKind, for path: String) throws(StoreError) -> any EngineProvider {
        guard let p = provider(kind) else { throw .engineNotAvailable(kind, path: path) }
        return p
    }
}
