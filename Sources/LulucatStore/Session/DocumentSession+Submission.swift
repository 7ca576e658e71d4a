// Edits submitted in order (issue 32, item 4): an app's pen-up callback submits its stroke
// synchronously, from any thread, and batches apply in the order they were submitted, whatever
// the priority of the tasks that wait for them. Actor calls made from tasks of mixed priority can
// land in any order (66 of 300 strokes out of drawing order, measured); a place in line taken
// synchronously cannot.

import Foundation
import LulucatInk

/// An outcome that arrives later, awaited by any number of tasks: a submitted batch's or a
/// submitted close's.
final class PendingOutcome<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Value, StoreError>?
    private var waiters: [CheckedContinuation<Result<Value, StoreError>, Never>] = []

    init(_ outcome: Result<Value, StoreError>? = nil) { self.outcome = outcome }

    func value() async -> Result<Value, StoreError> {
        await withCheckedContinuation { (c: CheckedContinuation<Result<Value, StoreError>, Never>) in
            let done: Result<Value, StoreError>? = lock.withLock {
                if let outcome { return outcome }
                waiters.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }

    var isDone: Bool { lock.withLock { outcome != nil } }

    func finish(_ r: Result<Value, StoreError>) {
        let w: [CheckedContinuation<Result<Value, StoreError>, Never>] = lock.withLock {
            outcome = r
            defer { waiters = [] }
            return waiters
        }
        for c in w { c.resume(returning: r) }
    }
}

/// One submitted batch (`DocumentSession.submit`): its outcome, once applied.
public final class SubmittedEdit: Sendable {
    let pending = PendingOutcome<[PageChange]>()

    init() {}

    /// The changes that undo the batch, once it is applied (its turn comes after every batch
    /// submitted before it).
    /// - Throws: what `DocumentSession.apply(_:to:)` throws for it (the page is then unchanged).
    public func value() async throws(StoreError) -> [PageChange] {
        try await pending.value().get()
    }

    /// Whether it has been applied (or refused).
    public var isDone: Bool { pending.isDone }

    func finish(_ r: Result<[PageChange], StoreError>) { pending.finish(r) }
}

/// A close started from synchronous code (`DocumentSession.close()` or `SessionHolder.close()`
/// without `await`: a `deinit`, a UIKit callback): it takes its place in the session's line of
/// submitted batches at once, and runs after every batch submitted before it.
public final class SubmittedClose: Sendable {
    let pending: PendingOutcome<Void>

    init(_ outcome: Result<Void, StoreError>? = nil) { pending = PendingOutcome(outcome) }

    /// Returns once the close is done: every edit the session accepted before it is durable, and
    /// the document's lock is released when this was the session's last holder.
    /// - Throws: what the `async` `close()` throws (a failed save; the session then stays open
    ///   and autosave keeps retrying).
    public func value() async throws(StoreError) {
        try await pending.value().get()
    }

    /// Whether the close is done (or failed).
    public var isDone: Bool { pending.isDone }
}

/// The line of submitted batches and closes, shared by the actor and its nonisolated `submit`
/// and `close()`.
final class SubmissionQueue: @unchecked Sendable {
    enum Item {
        case batch([PageChange], page: UUID, edit: SubmittedEdit)
        case close(SubmittedClose)
    }

    private let lock = NSLock()
    private var items: [Item] = []
    private var head = 0
    private var draining = false
    /// A close handed out by `next()` is running: nothing after it is handed out until `resume()`.
    private var paused = false

    /// Appends an item; true when no drain is running (the caller starts one).
    func append(_ item: Item) -> Bool {
        lock.withLock {
            items.append(item)
            if draining { return false }
            draining = true
            return true
        }
    }

    /// The next item in line, or nil (and the drain marked over, unless a close is running) when
    /// there is none to hand out.
    func next() -> Item? {
        lock.withLock {
            if paused { return nil }
            guard head < items.count else {
                items = []
                head = 0
                draining = false
                return nil
            }
            defer { head += 1 }
            if case .close = items[head] { paused = true }
            return items[head]
        }
    }

    /// The close `next()` handed out is done: the items after it may go.
    func resume() {
        lock.withLock { paused = false }
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
        if submissions.append(.batch(changes, page: page, edit: edit)) {
            Task { await self.applySubmitted() }
        }
        return edit
    }

    /// Closes from synchronous code (a `deinit`, a UIKit callback that cannot `await`), in
    /// submission order: callable from any thread, it takes its place in the line of `submit`ted
    /// batches at once and returns a handle the caller may await (or drop). The close runs as the
    /// `async` `close()` does, after every batch submitted before it and before every batch
    /// submitted after it (those are refused with `StoreError.sessionClosed` when this was the
    /// session's last holder). Every edit accepted before the call is durable when the handle's
    /// `value()` returns, and the document's lock is released then. Nothing waits on a thread:
    /// the close runs on the session's actor.
    ///
    /// ```swift
    /// deinit { session.close() }                          // no await: the close is queued
    /// let closing = session.close()                       // or keep the handle
    /// Task { try await closing.value() }                  // a failed save throws here
    /// ```
    /// From an `async` context, `close()` is the `async` overload (`try await session.close()`).
    @discardableResult
    public nonisolated func close() -> SubmittedClose {
        let handle = SubmittedClose()
        if submissions.append(.close(handle)) {
            Task { await self.applySubmitted() }
        }
        return handle
    }

    /// Applies the submitted batches in line, one after the other, with no suspension between
    /// them (so nothing else runs on the session meanwhile). A submitted close stops the line
    /// until it is done (it runs in a task of the actor, since closing awaits).
    func applySubmitted() {
        while let item = submissions.next() {
            switch item {
            case .batch(let changes, let page, let edit):
                do { edit.finish(.success(try apply(changes, to: page))) } catch {
                    edit.finish(.failure(error))
                }
            case .close(let handle):
                Task { await self.closeInLine(handle) }
                return
            }
        }
    }

    /// Runs a submitted close, then lets the line go on.
    private func closeInLine(_ handle: SubmittedClose) async {
        do throws(StoreError) {
            try await close()
            handle.pending.finish(.success(()))
        } catch {
            handle.pending.finish(.failure(error))
        }
        submissions.resume()
        applySubmitted()
    }
}
