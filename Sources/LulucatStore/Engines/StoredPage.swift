// The one reader of a page outside a session (lnote, lnote-dev and the tests; an app opens a
// `ReadOnlySession`), correct for every engine.

import Foundation
import LulucatInk

/// Reads one page of a closed document as it is now, whatever its engine: the snapshot, the
/// snapshot with its journal replayed, or the page's rows in `content.sqlite`. It writes nothing
/// (a SQLite database is closed without its closing checkpoint).
package enum StoredPage {
    package static func read(_ package: DocumentPackage, page: UUID, fileSystem: any FileSystem = PosixFileSystem()) throws(StoreError) -> PageContent {
        let doc = try PackageReader.readDocument(package, fileSystem: fileSystem)
        let engine = try doc.engine.makeEngine(package, codec: doc.sampleCodec, fileSystem: fileSystem)
        defer { engine.closeWithoutTidying() }
        return try engine.loadPage(page)
    }
}
