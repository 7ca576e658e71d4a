// The optional parts of a storage engine: saving several pages together, and idle work. The file
// engines take the defaults (one atomic file write per page, nothing to do at idle).

import Foundation
import LulucatInk

/// One dirty page of a save: its whole content now and what changed since its last save.
package struct PageSave {
    package var id: UUID
    package var content: PageContent
    package var changes: [PageChange]
    package var reusing: EncodedStrokes?

    package init(id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) {
        self.id = id
        self.content = content
        self.changes = changes
        self.reusing = reusing
    }
}

extension StorageEngine {
    package var savesPagesTogether: Bool { false }

    /// One `savePage` after another; a failure stops there (pages before it are already durable).
    package func savePages(_ pages: [PageSave]) throws(StoreError) -> [EncodedStrokes?] {
        var result: [EncodedStrokes?] = []
        for p in pages { result.append(try savePage(p.id, content: p.content, changes: p.changes, reusing: p.reusing)) }
        return result
    }

    package func idle() throws(StoreError) {}
}
