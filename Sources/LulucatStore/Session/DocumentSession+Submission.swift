// Edits submitted in order (issue 32, item 4): an app's pen-up callback submits its stroke
// synchronously, from any thread, and batches apply in the order they were submitted, whatever
// the priority of the tasks that wait for them. Actor calls made from tasks of mixed priority can
// land in any order (66 of 300 strokes out of drawing order, measured); a place in line taken
// synchronously cannot.

import Foundation
import LulucatInk

/// One submitted batch (`DocumentSession.submit`): its outcome, once applied.
public final class SubmittedEdit: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<[PageChange], StoreError>?
    private var waiters: [CheckedContinuation<Result<[PageChange], StoreError>, Never>] = []

    init() {}

    /// The changes that undo the batch, once it is applied (its turn comes after every batch
    /// submitted before it).
    /// - Throws: what `DocumentSession.apply(_:to:)` throws for it (the page is then unchanged).
    public func value() async throws(StoreError) -> [PageChange] {
        let r = await withCheckedContinuation { (c: CheckedContinuation<Result<[PageChange], StoreError>, Never>) in
            let done: Result<[PageChange], StoreError>? = lock.withLock {
                if let outcome { return outcome }
                waiters.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
        return try r.get()
    }

    /// Whether it has been applied (or refused).
    public var isDone: Bool { lock.withLock { outcome != nil } }

    func finish(_ r: Result<[PageChange], StoreError>) {
        let w: [CheckedContinuation<Result<[PageChange], StoreError>, Never>] = lock.withLock {
            outcome = r
            defer { waiters = [] }
            return waiters
        }
        for c in w { c.resume(returning: r) }
    }
}

/// The line of submitted batches, shared by the actor and its nonisolated `submit`.
final class SubmissionQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(changes: [PageChange], page: UUID, edit: SubmittedEdit)] = []
    private var head = 0
    private var draining = false

    /// Appends a batch; true when no drain is running (the caller starts one).
    func append(_ changes: [PageChange], page: UUID, edit: SubmittedEdit) -> Bool {
        lock.withLock {
            items.append((changes, page, edit))
            if draining { return false }
            draining = true
            return true
        }
    }

    /// The next batch in line, or nil (and the drain marked over) when there is none.
    func next() -> (changes: [PageChange], page: UUID, edit: SubmittedEdit)? {
        lock.withLock {
            guard head < items.count else {
                items = []
                head = 0
                draining = false
                return nil
            }
            defer { head += 1 }
            return items[head]
        }
    }
}

extension DocumentSession {
    /// Submits a batch of changes to a page **in order**: callable from any thread without
    /// `await` (a pen-up callback), it takes its place in line at once, and batches apply in the
    /// order they were submitted, whatever the priority of the tasks that wait for them. Each batch
    /// is `apply(_:to:)`: all or none, with the changes that undo it as its value.
    ///
    /// ```swift
    /// func penUp(_ stroke: Stroke) {                       // on the main thread
    ///     let edit = session.submit([.append([.stroke(stroke)])], to: page)
    ///     Task { undoStack.push(try await edit.value()) }
    /// }
    /// ```
    /// `flush()`, `save()`, `close()`, `undo()`, `redo()` and the undo group bounds apply every
    /// batch submitted before them first.
    @discardableResult
    public nonisolated func submit(_ changes: [PageChange], to page: UUID) -> SubmittedEdit {
        let edit = SubmittedEdit()
        if submissions.append(changes, page: page, edit: edit) {
            Task { await self.applySubmitted() }
        }
        return edit
    }

    /// Applies the submitted batches in line, one after the other, with no suspension between
    /// them (so nothing else runs on the session meanwhile).
    func applySubmitted() {
        while let item = submissions.next() {
            do { item.edit.finish(.success(try apply(item.changes, to: item.page))) } catch {
                item.edit.finish(.failure(error))
            }
        }
    }
}
