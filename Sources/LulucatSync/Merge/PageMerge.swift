// The page rule of a merge into a document that may have been edited since the round read it
// (docs/sync.md §5): edits made since the read win. Pure functions from the page as read, the page
// as it is now and the merged page to the `PageChange`s that make it so; the store applies them in
// one step of the session (`DocumentSession.updatePage`).

import Foundation
import LulucatInk

/// A page as a round read it: its elements in z-order as (id, fingerprint), and its canvas.
struct SeenPage: Sendable {
    var elements: [(id: UUID, fingerprint: UInt64)]
    var canvas: QuantizedSize
}

enum PageMerge {
    /// The changes that turn `current` into `merged`, keeping what was edited here after `seen`
    /// was read: an element erased since stays erased, one changed since keeps its new version,
    /// one added since stays on top (in its order), a canvas resized since keeps its size;
    /// everything else becomes what `merged` says. With `seen` nil (nobody else can have edited
    /// the page since), the page becomes `merged` exactly.
    /// - Returns: the changes, and whether edits made since the read were kept (the page then
    ///   differs from `merged`, and the next round reads it again).
    static func changes(current: PageContent, seen: SeenPage?, merged: PageContent) -> (changes: [PageChange], editedSince: Bool) {
        var currentByID: [UUID: Element] = [:]
        for e in current.elements { currentByID[e.id] = e }
        var result = merged.elements
        var canvas = merged.canvasSize
        var editedSince = false
        if let seen {
            var seenPrint: [UUID: UInt64] = [:]
            for (id, print) in seen.elements { seenPrint[id] = print }
            var erasedSince = Set<UUID>()
            for (id, _) in seen.elements where currentByID[id] == nil { erasedSince.insert(id) }
            var changedSince: [UUID: Element] = [:]
            for e in current.elements { if let p = seenPrint[e.id], PageBlob.fingerprint(e) != p { changedSince[e.id] = e } }
            if current.canvasSize != seen.canvas { canvas = current.canvasSize; editedSince = true }
            if !erasedSince.isEmpty || !changedSince.isEmpty || current.elements.map(\.id) != seen.elements.map(\.id) { editedSince = true }
            result = []
            var inResult = Set<UUID>()
            for e in merged.elements where !erasedSince.contains(e.id) {
                result.append(changedSince[e.id] ?? e)
                inResult.insert(e.id)
            }
            // Added here since the read: on top, in their order.
            for e in current.elements where seenPrint[e.id] == nil && !inResult.contains(e.id) {
                result.append(e)
                inResult.insert(e.id)
            }
        }
        return (steps(from: current, to: result, canvas: canvas, currentByID: currentByID), editedSince)
    }

    /// Whether a page the merge removed may be removed: only when it is still as `seen` (an edit
    /// made since wins over a removal, and the next round publishes it). With `seen` nil, always.
    static func mayRemove(current: PageContent, seen: SeenPage?) -> Bool {
        guard let seen else { return true }
        guard current.canvasSize == seen.canvas, current.elements.count == seen.elements.count else { return false }
        for (e, s) in zip(current.elements, seen.elements) where e.id != s.id || PageBlob.fingerprint(e) != s.fingerprint { return false }
        return true
    }

    /// Resize, delete, update, append, then single moves to the wanted order (usually none).
    static func steps(from current: PageContent, to result: [Element], canvas: QuantizedSize,
                      currentByID: [UUID: Element]) -> [PageChange] {
        var changes: [PageChange] = []
        if canvas != current.canvasSize { changes.append(.resize(canvas)) }
        let resultIDs = Set(result.map(\.id))
        let gone = current.elements.map(\.id).filter { !resultIDs.contains($0) }
        if !gone.isEmpty { changes.append(.delete(gone)) }
        let updated = result.filter { e in currentByID[e.id].map { $0 != e } ?? false }
        if !updated.isEmpty { changes.append(.update(updated)) }
        let added = result.filter { currentByID[$0.id] == nil }
        if !added.isEmpty { changes.append(.append(added)) }
        var order = current.elements.map(\.id).filter { resultIDs.contains($0) } + added.map(\.id)
        let target = result.map(\.id)
        if order != target {
            for k in target.indices where order[k] != target[k] {
                let j = order[k...].firstIndex(of: target[k])!
                order.remove(at: j)
                order.insert(target[k], at: k)
                changes.append(.move([target[k]], to: .index(k)))
            }
        }
        return changes
    }
}
