// Events for the UI: what changed in an open document (and in a library), as AsyncStreams any
// number of views can follow. Without a subscriber an event costs one lock and nothing else.

import Foundation
import LulucatInk

/// Something that happened in an open document. Events reach subscribers a few milliseconds
/// after they happen (under a display frame), several at a time; repeated `elementsChanged` of
/// the same page in between arrive once.
///
/// New cases will be added (salvage findings, for instance): switch over it with a `default`.
///
/// ```swift
/// for await event in await session.events() {
///     switch event {
///     case .elementsChanged(let page): canvas.reload(page)
///     case .saveFailed(let error, _): banner.show(error.localizedDescription)
///     default: break
///     }
/// }
/// ```
public enum SessionEvent: Sendable {
    /// Elements were appended, erased, moved, transformed or deleted on a page (in memory).
    case elementsChanged(page: UUID)
    /// Pages were added, removed or reordered, or the document was renamed (durable already).
    case pagesChanged
    /// A page's content is durable; `sequence` increases with every save of the session.
    case pageSaved(page: UUID, sequence: UInt64)
    /// A save failed; the edits stay in memory. `willRetry`: autosave tries again by itself.
    case saveFailed(StoreError, willRetry: Bool)
    /// A page's thumbnail file was written.
    case thumbnailWritten(page: UUID)
    /// What the store found or repaired: the open report (sent first to a new subscriber when
    /// it is not empty), and later findings.
    case findings([Finding])
    /// The session's undo history changed (`SessionOptions.undoLevels`): what `undo()` and
    /// `redo()` can do now.
    case undoChanged(UndoState)
    /// The session closed (or was released, or abandoned); the stream ends after this.
    case closed

    /// Whether `self`, still pending, already tells what `next` would.
    static func absorbs(_ pending: SessionEvent, _ next: SessionEvent) -> Bool {
        if case .elementsChanged(let a) = pending, case .elementsChanged(let b) = next { return a == b }
        return false
    }
}

/// The subscribers of one source of events. Events are gathered and handed to the subscribers
/// together a moment later (`delay`, under a display frame), so a burst of edits wakes a
/// subscriber once instead of once per stroke; consecutive events that say the same thing
/// (`absorbs`) are sent once. With no subscriber, sending takes a lock and stops there.
final class EventHub<Event: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private var finished = false
    private var pending: [Event] = []
    private var flushScheduled = false
    let delay: Duration
    /// Whether a pending event already says what a new one would (the new one is then dropped).
    let absorbs: @Sendable (Event, Event) -> Bool

    init(delay: Duration = .milliseconds(8), absorbs: @escaping @Sendable (Event, Event) -> Bool = { _, _ in false }) {
        self.delay = delay
        self.absorbs = absorbs
    }

    /// How many events a subscriber that does not keep up holds before the oldest are dropped.
    static var bufferLimit: Int { 4096 }

    func subscribe(first: [Event] = []) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        for e in first { continuation.yield(e) }
        let id: UInt64? = lock.withLock {
            guard !finished else { return nil }
            nextID += 1
            continuations[nextID] = continuation
            return nextID
        }
        guard let id else { continuation.finish(); return stream }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    var hasSubscribers: Bool { lock.withLock { !continuations.isEmpty } }

    /// Queues an event for every subscriber; it is only made when someone listens.
    func send(_ event: @autoclosure () -> Event) {
        let schedule: Bool = lock.withLock {
            guard !continuations.isEmpty else { return false }
            let e = event()
            if let last = pending.last, absorbs(last, e) { return false }
            pending.append(e)
            guard !flushScheduled else { return false }
            flushScheduled = true
            return true
        }
        guard schedule else { return }
        let delay = self.delay
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            self.flush()
        }
    }

    /// Hands the pending events to every subscriber, in order.
    func flush() {
        let (batch, targets): ([Event], [AsyncStream<Event>.Continuation]) = lock.withLock {
            defer { pending = []; flushScheduled = false }
            return (pending, Array(continuations.values))
        }
        for c in targets { for e in batch { c.yield(e) } }
    }

    /// Hands over what is pending, sends a last event and ends every stream; later subscribers
    /// get an ended stream.
    func finish(with last: Event? = nil) {
        let (batch, targets): ([Event], [AsyncStream<Event>.Continuation]) = lock.withLock {
            finished = true
            defer { continuations = [:]; pending = [] }
            return (pending, Array(continuations.values))
        }
        for c in targets {
            for e in batch { c.yield(e) }
            if let last { c.yield(last) }
            c.finish()
        }
    }

    private func remove(_ id: UInt64) { _ = lock.withLock { continuations.removeValue(forKey: id) } }
}

extension DocumentSession {
    /// The events of this session, from now until it closes. Any number of subscribers; each gets
    /// every event (a subscriber far behind loses the oldest beyond 4,096).
    public func events() -> AsyncStream<SessionEvent> {
        eventHub.subscribe(first: openReport.isEmpty ? [] : [.findings(openReport)])
    }

    /// A save failed: the UI hears of it, and autosave tries again with backoff.
    func saveFailed(_ error: StoreError) {
        let willRetry = !isClosed && options.autosaveDelay != nil
        scheduleRetry()
        eventHub.send(.saveFailed(error, willRetry: willRetry))
    }
}
