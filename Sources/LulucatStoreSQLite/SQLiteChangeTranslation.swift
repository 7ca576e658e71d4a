// The session's `PageChange`s in the content store's terms (`SQLiteContentStore.Change`). Only a
// z-order move needs to know the page as it was (the element it lands below), so only a save with
// a move reads the stored page and replays the changes on it.

import Foundation
import LulucatInk
import LulucatStore

enum SQLiteChangeTranslation {
    /// - Parameter stored: the page as last saved; called only when `changes` holds a move.
    static func translate(_ changes: [PageChange], page: UUID,
                          stored: () throws(SQLiteEngineError) -> PageContent) throws(SQLiteEngineError) -> [SQLiteContentStore.Change] {
        let hasMove = changes.contains { if case .move = $0 { return true } else { return false } }
        var state: PageContent? = hasMove ? try stored() : nil
        var out: [SQLiteContentStore.Change] = []
        for change in changes {
            switch change {
            case .append(let elements): out.append(.append(elements))
            case .delete(let ids): out.append(.delete(ids))
            case let .replace(id, pieces): out.append(.replace(id, with: pieces))
            case .update(let elements): out += elements.map { .replace($0.id, with: [$0]) }
            case .resize(let size): out.append(.setCanvasSize(size))
            case let .move(ids, position):
                guard let s = state else { throw .invalidChange("a move on page \(page) without the stored page") }
                let set = Set(ids)
                // The session moves the elements in their current relative order, not in `ids` order.
                let moved = s.elements.filter { set.contains($0.id) }.map(\.id)
                let rest = s.elements.filter { !set.contains($0.id) }
                let at: Int
                switch position {
                case .front: at = rest.count
                case .back: at = 0
                case .index(let i): at = min(max(i, 0), rest.count)
                }
                out.append(.move(moved, before: at < rest.count ? rest[at].id : nil))
            }
            if state != nil {
                do { try state!.apply(change) } catch { throw .invalidChange("page \(page): \(error)") }
            }
        }
        return out
    }
}
