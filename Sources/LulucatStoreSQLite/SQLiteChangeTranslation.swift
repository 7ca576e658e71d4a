// The session's `PageChange`s in the content store's terms (`SQLiteContentStore.Change`). Each maps
// on its own: a z-order move keeps its position (`moveTo`), which the store resolves against the
// rows as the save has left them, so no save reads the stored page.

import Foundation
import LulucatInk
import LulucatStore

enum SQLiteChangeTranslation {
    static func translate(_ changes: [PageChange]) -> [SQLiteContentStore.Change] {
        var out: [SQLiteContentStore.Change] = []
        for change in changes {
            switch change {
            case .append(let elements): out.append(.append(elements))
            case .delete(let ids): out.append(.delete(ids))
            case let .replace(id, pieces): out.append(.replace(id, with: pieces))
            case .update(let elements): out += elements.map { .replace($0.id, with: [$0]) }
            case .resize(let size): out.append(.setCanvasSize(size))
            case let .move(ids, position): out.append(.moveTo(ids, position))
            }
        }
        return out
    }
}
