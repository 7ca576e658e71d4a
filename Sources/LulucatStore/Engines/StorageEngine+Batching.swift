// The optional parts of a storage engine: saving several pages together, and idle work. The file
// engines take the defaults (one atomic file write per page, nothing to do at idle).

import Foundation
import LulucatInk

/// One dirty page of a save: its whole content now and what changed since its last save.
struct PageSave {
    var id: UUID
    var content: PageContent
    var changes: [PageChange]
    var reusing: EncodedStrokes?
}

extension StorageEngine {
    var savesPagesTogether: Bool { false }

    /// One `savePage` after another; a failure stops there (pages before it are already durable).
    func savePages(_ pages: [PageSave]) throws(StoreError) -> [EncodedStrokes?] {
        var result: [EncodedStrokes?] = []
        for p in pages { result.append(try savePage(p.id, content: p.content, changes: p.changes, reusing: p.reusing)) }
        return result
    }

    func idle() throws(StoreError) {}
}
