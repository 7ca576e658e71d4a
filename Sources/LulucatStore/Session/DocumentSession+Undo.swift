// The session's own undo history (issue 32, item 3): every edit of the app records its exact
// inverse (elements appended, erased, transformed, deleted, moved, an image, a canvas, pages
// added, removed and moved, the title), grouped as the app says, undone and redone without an
// `await` inside an undo registration. Merges from sync are not the user's edits: not recorded.

import Foundation
import LulucatInk

/// What the session's undo history can do now (`DocumentSession.undoState`, `SessionEvent.undoChanged`).
public struct UndoState: Sendable, Equatable {
    /// Whether `undo()` has something to undo.
    public var canUndo: Bool
    /// Whether `redo()` has something to redo.
    public var canRedo: Bool
    /// The name of the group `undo()` would undo ("" when it has none).
    public var undoName: String
    /// The name of the group `redo()` would redo.
    public var redoName: String

    /// Nothing to undo or redo: a session's state when it opens, and always without an undo
    /// history (`SessionOptions.undoLevels` 0).
    public static let empty = UndoState(canUndo: false, canRedo: false, undoName: "", redoName: "")
}

/// One step of an undo group: what brings one edit back.
enum UndoStep: Sendable {
    case page(UUID, [PageChange])
    case insertPage(UUID, content: PageContent, at: Int)
    case removePage(UUID)
    case movePage(UUID, to: Int)
    case rename(String)

    var page: UUID? {
        if case .page(let p, _) = self { return p }
        return nil
    }
}

/// Edits undone together: their steps in the order they undo them (newest first).
struct UndoGroup: Sendable {
    var name: String
    var steps: [UndoStep]
    /// The page all its steps are on, nil when it changed the pages or the title.
    var page: UUID? {
        let pages = Set(steps.map(\.page))
        guard pages.count == 1, let p = pages.first else { return nil }
        return p
    }
}

/// The history of one session.
struct UndoHistory: Sendable {
    var undo: [UndoGroup] = []
    var redo: [UndoGroup] = []
    /// The group being gathered (`beginUndoGroup`), and how deep.
    var open: UndoGroup?
    var depth = 0

    var state: UndoState {
        UndoState(canUndo: !undo.isEmpty, canRedo: !redo.isEmpty, undoName: undo.last?.name ?? "", redoName: redo.last?.name ?? "")
    }
}

extension DocumentSession {
    var undoEnabled: Bool { options.undoLevels > 0 }
    /// Whether an edit must compute its inverse: for the undo history, or for a transaction's rollback.
    var recordingInverses: Bool { undoEnabled || transactionLog != nil }

    /// What `undo()` and `redo()` can do now.
    public var undoState: UndoState { undoHistory.state }

    /// Gathers the edits until the matching `endUndoGroup()` into one undo step named `name` (a
    /// gesture, a paste over several pages). Groups nest: the outermost one counts. Batches
    /// submitted before it (`submit`) apply first, outside the group.
    public func beginUndoGroup(_ name: String = "") {
        guard undoEnabled else { return }
        applySubmitted()
        if undoHistory.depth == 0 { undoHistory.open = UndoGroup(name: name, steps: []) }
        undoHistory.depth += 1
    }

    /// Ends the group `beginUndoGroup()` began; an empty group records nothing. Batches
    /// submitted before it (`submit`) apply first, inside the group.
    public func endUndoGroup() {
        guard undoEnabled, undoHistory.depth > 0 else { return }
        applySubmitted()
        undoHistory.depth -= 1
        guard undoHistory.depth == 0, let g = undoHistory.open else { return }
        undoHistory.open = nil
        if !g.steps.isEmpty { push(g) }
    }

    /// Forgets the undo history (a document the app reloaded, a sync that changed it much).
    public func clearUndoHistory() {
        let before = undoHistory.state
        undoHistory = UndoHistory()
        announceUndo(before)
    }

    /// Undoes the newest group, of `page` when given (a group whose edits are all on that page;
    /// page structure and the title are undone with `page` nil). Its inverse becomes the redo.
    /// Batches submitted before it (`submit`) apply first, so an undo asked for right after a
    /// pen-up undoes that stroke.
    /// - Returns: false when there was nothing to undo.
    /// - Throws: when the group no longer fits (another device's merge removed what it names): the
    ///   document is left as it was and the group is dropped from the history. When it cannot be
    ///   read or written (`StoreError.file`: the disk is full), the document is left as it was
    ///   and the group stays, to be undone again.
    @discardableResult
    public func undo(page: UUID? = nil) throws(StoreError) -> Bool {
        applySubmitted()
        return try replay(from: \.undo, to: \.redo, page: page)
    }

    /// Redoes the newest undone group (of `page` when given); a new edit clears what can be redone.
    /// Batches submitted before it (`submit`) apply first (one of them clears the redo).
    @discardableResult
    public func redo(page: UUID? = nil) throws(StoreError) -> Bool {
        applySubmitted()
        return try replay(from: \.redo, to: \.undo, page: page)
    }

    private func replay(from source: WritableKeyPath<UndoHistory, [UndoGroup]>, to target: WritableKeyPath<UndoHistory, [UndoGroup]>,
                        page: UUID?) throws(StoreError) -> Bool {
        try checkWritable()
        let list = undoHistory[keyPath: source]
        guard let index = page == nil ? list.indices.last : list.lastIndex(where: { $0.page == page }) else { return false }
        let before = undoHistory.state
        let group = undoHistory[keyPath: source].remove(at: index)
        var inverse: [UndoStep] = []
        // A group over several pages is undone as a transaction is made: all of it or none, a
        // crash included (DocumentSession+Transactions.swift).
        let outermost = beginDeferring()
        do {
            for step in group.steps { inverse.insert(try perform(step), at: 0) }
            if outermost { try commitDeferred() }
        } catch {
            // Put back what was done of it, newest first; the group is dropped.
            for step in inverse { _ = try? perform(step) }
            if outermost { settleRolledBack() }
            // A group that failed to be written (the disk) stays to be tried again; one that no
            // longer fits the document is dropped.
            switch error {
            case .pageNotFound, .elementNotFound, .invalidArgument: break
            default: undoHistory[keyPath: source].insert(group, at: index)
            }
            announceUndo(before)
            throw error
        }
        undoHistory[keyPath: target].append(UndoGroup(name: group.name, steps: inverse))
        trimUndo()
        announceUndo(before)
        return true
    }

    /// Performs one step, returning the step that undoes it.
    func perform(_ step: UndoStep) throws(StoreError) -> UndoStep {
        switch step {
        case let .page(p, changes):
            return .page(p, try applyUnrecorded(changes, to: p))
        case let .insertPage(id, content, at):
            try insertSyncedPage(id: id, content: content, at: min(at, metadata.pages.count))
            return .removePage(id)
        case .removePage(let id):
            let i = try pageIndex(id)
            let content = try self.content(of: id)
            try removePageUnrecorded(id)
            return .insertPage(id, content: content, at: i)
        case let .movePage(id, to):
            let from = try pageIndex(id)
            try movePageUnrecorded(id, to: min(to, metadata.pages.count - 1))
            return .movePage(id, to: from)
        case .rename(let title):
            let old = metadata.title
            try renameUnrecorded(to: title)
            return .rename(old)
        }
    }

    // MARK: Recording

    /// Records `step` (what undoes an edit just made): into the open group, or as a group of its own.
    func recordUndo(_ step: UndoStep, name: String) {
        if transactionLog != nil { transactionLog!.insert(step, at: 0) }
        guard undoEnabled else { return }
        if undoHistory.open != nil {
            undoHistory.open!.steps.insert(step, at: 0)
            if !undoHistory.redo.isEmpty {
                let before = undoHistory.state
                undoHistory.redo = []
                announceUndo(before)
            }
            return
        }
        push(UndoGroup(name: name, steps: [step]))
    }

    private func push(_ group: UndoGroup) {
        let before = undoHistory.state
        undoHistory.undo.append(group)
        undoHistory.redo = []
        trimUndo()
        announceUndo(before)
    }

    private func trimUndo() {
        let n = options.undoLevels
        if undoHistory.undo.count > n { undoHistory.undo.removeFirst(undoHistory.undo.count - n) }
        if undoHistory.redo.count > n { undoHistory.redo.removeFirst(undoHistory.redo.count - n) }
    }

    private func announceUndo(_ before: UndoState) {
        let now = undoHistory.state
        if now != before { eventHub.send(.undoChanged(now)) }
    }

    /// One page change made and recorded: its inverse computed on the page as it is.
    func editRecorded(_ page: UUID, _ change: PageChange, name: String) throws(StoreError) {
        guard recordingInverses else { return try edit(page, change) }
        let inverse = Self.inverse(of: change, on: try load(page).content)
        try edit(page, change)
        recordUndo(.page(page, inverse), name: name)
    }
}
