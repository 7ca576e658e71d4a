// Batches of page changes applied as one unit, each returning the changes that undo it: what an
// app registers with its UndoManager.

import Foundation
import LulucatInk

extension DocumentSession {
    /// Applies `changes` to a page in order, all or none, and returns the changes that undo them.
    ///
    /// The batch is one synchronous step of the actor: no autosave, and no other call, runs between
    /// its changes, so a save holds all of them or none. Applying the returned changes gives the
    /// page back exactly as it was (element ids, values and z-order), and returns the redo.
    ///
    /// ```swift
    /// let undo = try await session.apply([.delete(selection)], to: page)
    /// undoManager.registerUndo(withTarget: canvas) { canvas in canvas.perform(undo, on: page) }
    /// ```
    ///
    /// - Throws: `StoreError.invalidArgument` naming the change that does not fit the page (the page
    ///   is then unchanged), `.pageNotFound`, `.sessionClosed`.
    @discardableResult
    public func apply(_ changes: [PageChange], to page: UUID) throws(StoreError) -> [PageChange] {
        let inverse = try applyUnrecorded(changes, to: page)
        recordUndo(.page(page, inverse), name: "Edit")
        return inverse
    }

    /// `apply` without a record in the session's undo history (the history's own replays).
    func applyUnrecorded(_ changes: [PageChange], to page: UUID) throws(StoreError) -> [PageChange] {
        try checkWritable()
        _ = try pageIndex(page)
        var inverse: [[PageChange]] = []
        do {
            // Every change is tried on a copy first: a batch that does not fit leaves the page alone.
            var scratch = try load(page).content
            for (k, change) in changes.enumerated() {
                try Self.checkChannels(change)
                let undo = Self.inverse(of: change, on: scratch)
                do { try scratch.apply(change) } catch {
                    throw StoreError.invalidArgument("change \(k + 1) of \(changes.count) does not fit page \(page): \(error)")
                }
                inverse.append(undo)
            }
        }
        for (k, change) in changes.enumerated() {
            do { try edit(page, change) } catch {
                // Not expected (every change was tried above); put back what was applied.
                for undo in inverse[..<k].reversed() { for c in undo { try? edit(page, c) } }
                throw error
            }
        }
        return inverse.reversed().flatMap { $0 }
    }

    static func checkChannels(_ change: PageChange) throws(StoreError) {
        let elements: [Element]
        switch change {
        case .append(let e), .update(let e), .replace(_, let e): elements = e
        case .delete, .move, .resize: return
        }
        for case .stroke(let s) in elements where !s.channelsAreConsistent {
            throw .invalidArgument("stroke \(s.id) has an optional channel whose length differs from its samples")
        }
        // What no engine may store (an unknown element under a known kind, ...): ElementCodec's rule.
        for element in elements {
            do { try ElementCodec.check(element) } catch { throw .invalidArgument("\(error)") }
        }
    }

    /// The changes that undo `change` applied to `content` (which it must fit).
    static func inverse(of change: PageChange, on content: PageContent) -> [PageChange] {
        /// Puts elements back at their indices: ascending, so each lands where it was.
        func reinsert(_ removed: [(Int, Element)]) -> [PageChange] {
            removed.sorted { $0.0 < $1.0 }.flatMap { i, e in [PageChange.append([e]), .move([e.id], to: .index(i))] }
        }
        switch change {
        case .append(let new):
            return new.isEmpty ? [] : [.delete(new.map(\.id))]
        case .delete(let ids):
            let set = Set(ids)
            return reinsert(content.elements.enumerated().filter { set.contains($0.element.id) }.map { ($0.offset, $0.element) })
        case .replace(let id, let pieces):
            guard let i = content.index(of: id) else { return [] }
            let original = content.elements[i]
            guard let first = pieces.first else { return reinsert([(i, original)]) }
            // The first piece is where the original was: the rest go, then it becomes the original.
            let rest = pieces.dropFirst().map(\.id)
            return (rest.isEmpty ? [] : [.delete(Array(rest))]) + [.replace(first.id, with: [original])]
        case .update(let new):
            return [.update(new.compactMap { e in content.index(of: e.id).map { content.elements[$0] } })]
        case .move(let ids, _):
            // All of them on top first, then each back to its index, lowest first: every element
            // below the one being placed is then where it was.
            let set = Set(ids)
            guard !set.isEmpty else { return [] }
            return [.move(ids, to: .front)] + content.elements.enumerated().filter { set.contains($0.element.id) }
                .map { PageChange.move([$0.element.id], to: .index($0.offset)) }
        case .resize:
            return [.resize(content.canvasSize)]
        }
    }
}
