// Events for the UI: what changed in an open document (and in a library), as AsyncStreams any
// number of views can follow. Without a subscriber an event costs one lock and nothing else.

import Foundation
import LulucatInk

/// Something that happened in an open document.
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
    /// The session closed (or was released, or abandoned); the stream ends after this.
    case closed
}

/// The subscribers of one source of events. Sending takes a lock; with no subscriber it stops there.
final class EventHub<Event: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private var finished = false

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

    /// Sends to every subscriber; the event is only made when someone listens.
    func send(_ event: @autoclosure () -> Event) {
        let targets: [AsyncStream<Event>.Continuation] = lock.withLock {
            continuations.isEmpty ? [] : Array(continuations.values)
        }
        guard !targets.isEmpty else { return }
        let e = event()
        for c in targets { c.yield(e) }
    }

    /// Sends a last event and ends every stream; later subscribers get an ended stream.
    func finish(with last: Event? = nil) {
        let targets: [AsyncStream<Event>.Continuation] = lock.withLock {
            finished = true
            defer { continuations = [:] }
            return Array(continuations.values)
        }
        for c in targets {
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
