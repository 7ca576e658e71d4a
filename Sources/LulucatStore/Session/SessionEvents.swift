// Events for the UI: what changed in an open document (and in a library), as AsyncStreams any
// number of views can follow. Without a subscriber an event costs one lock and nothing else.

import Foundation
import LulucatInk

/// Something that happened in an open document. Events reach subscribers a few milliseconds
/// after they happen (under a display frame), several at a time; edits of one page in between
/// arrive as one event.
///
/// Two streams hand them out. `events()` says *that* something changed (`elementsChanged(page:)`,
/// `pagesChanged`); `observe()` says *what* changed: its first event is `state(_:)`, the session
/// as it is, and then `elementsEdited(_:)` and `documentEdited(_:)` carry the changes, so a view
/// model can follow the document without reading it again (Observation.md).
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
    /// `events()` only; `observe()` hands `elementsEdited(_:)`, which says what changed.
    case elementsChanged(page: UUID)
    /// Pages were added, removed or reordered, or the document was renamed (durable already).
    /// `events()` only; `observe()` hands `documentEdited(_:)`, which says what changed.
    case pagesChanged
    /// A page's content is durable; `sequence` increases with every save of the session.
    case pageSaved(page: UUID, sequence: UInt64)
    /// A save failed; the edits stay in memory. `willRetry`: autosave tries again by itself.
    case saveFailed(StoreError, willRetry: Bool)
    /// A page's thumbnail file was written.
    case thumbnailWritten(page: UUID)
    /// What the store found or repaired: the open report (sent first to a new subscriber of
    /// `events()` when it is not empty), and later findings.
    case findings([Finding])
    /// The session's undo history changed (`SessionOptions.undoLevels`): what `undo()` and
    /// `redo()` can do now.
    case undoChanged(UndoState)
    /// The session closed (or was released, or abandoned); the stream ends after this.
    case closed
    /// The session as it was when `observe()` subscribed: always its first event (never one of
    /// `events()`). Every later change arrives as an event; `SessionState.apply(_:)` folds them in.
    case state(SessionState)
    /// Elements of one page changed, with the edits themselves (`observe()` only). Edits of the
    /// same page made in one burst (strokes within a display frame) arrive merged into one event.
    case elementsEdited(ElementChanges)
    /// Pages were added, removed or moved, or the document was renamed: the page order and title
    /// after it (`observe()` only; durable already).
    case documentEdited(DocumentChanges)

    /// Merges `next` into `pending` (still waiting to be handed over) when one event can say what
    /// both did: edits of the same page, or two undo states (the later one wins).
    static func merge(_ pending: inout SessionEvent, _ next: SessionEvent) -> Bool {
        switch (pending, next) {
        case (.elementsEdited(var earlier), .elementsEdited(let later)) where earlier.page == later.page:
            pending = .closed  // the only reference to `earlier`'s edits is then `earlier`: merged in place
            earlier.edits.append(contentsOf: later.edits)
            pending = .elementsEdited(earlier)
            return true
        case (.undoChanged, .undoChanged):
            pending = next
            return true
        default:
            return false
        }
    }

    /// Whether `next` may be merged into an event pending before `earlier` (which then seems to
    /// come after it): each event's meaning does not depend on the other's place.
    static func commutes(_ earlier: SessionEvent, _ next: SessionEvent) -> Bool {
        func page(_ e: SessionEvent) -> UUID? {
            switch e {
            case .elementsEdited(let c): return c.page
            case .pageSaved(let p, _), .thumbnailWritten(let p): return p
            default: return nil
            }
        }
        switch (earlier, next) {
        case (.undoChanged, .elementsEdited), (.elementsEdited, .undoChanged),
             (.thumbnailWritten, .undoChanged), (.pageSaved, .undoChanged), (.findings, .undoChanged):
            return true
        case (.elementsEdited, .elementsEdited), (.pageSaved, .elementsEdited), (.thumbnailWritten, .elementsEdited):
            return page(earlier) != page(next)
        case (.findings, .elementsEdited):
            return true
        default:
            return false
        }
    }

    /// The event as `events()` hands it: the value cases as the notices they replace.
    static func notice(_ event: SessionEvent) -> SessionEvent? {
        switch event {
        case .elementsEdited(let c): return .elementsChanged(page: c.page)
        case .documentEdited: return .pagesChanged
        case .state: return nil
        default: return event
        }
    }
}

/// What changed on one page's elements since the last event: the edits, in the order they were
/// made, and what they add up to (`added`, `removed`, `changed`).
///
/// A view that keeps the page's elements applies the edits (`apply(to:)`) to its copy and has
/// the page exactly as the session has it; one that keeps only ids uses `apply(toIDs:)`, or
/// `added`, `removed` and `changed` to update its layers.
///
/// ```swift
/// case .elementsEdited(let change) where change.page == shown.id:
///     try change.apply(to: &shown.content)          // the page as the session has it
///     canvas.redraw(change.added + change.changed)  // and what to draw again
///     canvas.remove(change.removed)
/// ```
public struct ElementChanges: Sendable, Hashable {
    /// The page.
    public let page: UUID
    /// The edits, in the order the session applied them (strokes appended, erased, transformed,
    /// moved, deleted; undo and sync merges arrive as the edits they make).
    public internal(set) var edits: [PageChange]

    /// Makes a change of `page` (a view model's own, or a test's).
    public init(page: UUID, edits: [PageChange]) {
        self.page = page
        self.edits = edits
    }

    /// Applies the edits to `content`, the page as it was before them: it is then the page as
    /// the session has it.
    /// - Throws: `PageChangeError` when `content` is not the page the edits were made on (an
    ///   element they name is missing); `content` then holds the edits before the one that failed.
    public func apply(to content: inout PageContent) throws(PageChangeError) {
        for change in edits { try content.apply(change) }
    }

    /// Applies the edits to the page's element ids, in z-order (back to front), as they were
    /// before them: they are then the page's ids as the session has them. Ids the list does not
    /// hold are passed over.
    public func apply(toIDs ids: inout [UUID]) {
        for change in edits {
            switch change {
            case .append(let new): ids.append(contentsOf: new.map(\.id))
            case .delete(let gone):
                let set = Set(gone)
                ids.removeAll { set.contains($0) }
            case .replace(let id, let pieces):
                if let i = ids.firstIndex(of: id) { ids.replaceSubrange(i...i, with: pieces.map(\.id)) }
            case .update, .resize: break
            case .move(let moved, let position):
                let set = Set(moved)
                let moving = ids.filter { set.contains($0) }
                var rest = ids.filter { !set.contains($0) }
                switch position {
                case .front: rest.append(contentsOf: moving)
                case .back: rest.insert(contentsOf: moving, at: 0)
                case .index(let i): rest.insert(contentsOf: moving, at: min(max(i, 0), rest.count))
                }
                ids = rest
            }
        }
    }

    /// Ids on the page after the edits that were not before them, in the order they came.
    public var added: [UUID] { net.added }
    /// Ids on the page before the edits that are not after them.
    public var removed: [UUID] { net.removed }
    /// Ids on the page before and after the edits whose element changed: transformed, moved in
    /// the z-order, or removed and put back (an undo).
    public var changed: [UUID] { net.changed }
    /// The page's new canvas size, when the edits resized it.
    public var canvasSize: QuantizedSize? {
        for change in edits.reversed() { if case .resize(let size) = change { return size } }
        return nil
    }

    /// What the edits add up to, per id (relative to the page before them).
    private var net: (added: [UUID], removed: [UUID], changed: [UUID]) {
        enum Fate { case added, removed, changed }
        var fate: [UUID: Fate] = [:]
        var order: [UUID] = []
        func arrive(_ id: UUID) {
            switch fate[id] {
            case .removed: fate[id] = .changed
            case nil: fate[id] = .added; order.append(id)
            case .added?, .changed?: break
            }
        }
        func leave(_ id: UUID) {
            switch fate[id] {
            case .added?: fate[id] = nil
            case nil: fate[id] = .removed; order.append(id)
            case .changed?, .removed?: fate[id] = .removed
            }
        }
        func touch(_ id: UUID) {
            if fate[id] == nil { fate[id] = .changed; order.append(id) }
        }
        for change in edits {
            switch change {
            case .append(let new): for e in new { arrive(e.id) }
            case .delete(let gone): for id in gone { leave(id) }
            case .replace(let id, let pieces):
                leave(id)
                for e in pieces { arrive(e.id) }
            case .update(let new): for e in new { touch(e.id) }
            case .move(let ids, _): for id in ids { touch(id) }
            case .resize: break
            }
        }
        var result: (added: [UUID], removed: [UUID], changed: [UUID]) = ([], [], [])
        var seen: Set<UUID> = []
        for id in order where seen.insert(id).inserted {
            switch fate[id] {
            case .added?: result.added.append(id)
            case .removed?: result.removed.append(id)
            case .changed?: result.changed.append(id)
            case nil: break
            }
        }
        return result
    }
}

/// What a change of the page list or the title left: the page order after it, the pages it
/// added and removed, and the new title when it renamed the document.
public struct DocumentChanges: Sendable, Hashable {
    /// Every page's id, in order, after the change.
    public var pageOrder: [UUID]
    /// Pages the change added (empty, or with elements that an `elementsEdited` event right
    /// after it brings: a page put back by an undo, or merged in by sync).
    public var addedPages: [UUID]
    /// Pages the change removed.
    public var removedPages: [UUID]
    /// The new title, when the change renamed the document.
    public var title: String?

    /// Makes a change (a view model's own, or a test's).
    public init(pageOrder: [UUID], addedPages: [UUID], removedPages: [UUID], title: String?) {
        self.pageOrder = pageOrder
        self.addedPages = addedPages
        self.removedPages = removedPages
        self.title = title
    }

    /// The change from `old` to `new` metadata.
    init(from old: DocumentMetadata, to new: DocumentMetadata) {
        pageOrder = new.pages.map(\.id)
        let before = Set(old.pages.map(\.id)), after = Set(pageOrder)
        addedPages = pageOrder.filter { !before.contains($0) }
        removedPages = old.pages.map(\.id).filter { !after.contains($0) }
        title = old.title == new.title ? nil : new.title
    }
}

/// An open document as `observe()` hands it first: its title, page order, the ids of every
/// page's elements and the undo state. Applying the events that follow (`apply(_:)`) keeps it
/// equal to the session's own state, edit for edit.
///
/// ```swift
/// var state: SessionState?
/// for await event in try await session.observe() {
///     if case .state(let first) = event { state = first } else { state?.apply(event) }
///     grid.show(state!.pageOrder)
/// }
/// ```
public struct SessionState: Sendable, Equatable {
    /// The document's title.
    public var title: String
    /// Every page's id, in order.
    public var pageOrder: [UUID]
    /// The ids of each page's elements, in z-order (back to front).
    public var elementIDs: [UUID: [UUID]]
    /// What `undo()` and `redo()` can do.
    public var undo: UndoState

    /// Makes a state (a view model's own, or a test's).
    public init(title: String, pageOrder: [UUID], elementIDs: [UUID: [UUID]], undo: UndoState) {
        self.title = title
        self.pageOrder = pageOrder
        self.elementIDs = elementIDs
        self.undo = undo
    }

    /// Folds an event of `observe()` in: element edits, page changes, the title and the undo
    /// state. `state(_:)` replaces it whole; other events change nothing.
    public mutating func apply(_ event: SessionEvent) {
        switch event {
        case .state(let s): self = s
        case .elementsEdited(let change):
            guard var ids = elementIDs[change.page] else { return }
            elementIDs[change.page] = nil  // its ids referenced once while they change
            change.apply(toIDs: &ids)
            elementIDs[change.page] = ids
        case .documentEdited(let change):
            for p in change.removedPages { elementIDs[p] = nil }
            for p in change.addedPages { elementIDs[p] = [] }
            pageOrder = change.pageOrder
            if let t = change.title { title = t }
        case .undoChanged(let u): undo = u
        default: break
        }
    }
}

/// The subscribers of one source of events. Events are gathered and handed to the subscribers
/// together a moment later (`delay`, under a display frame), so a burst of edits wakes a
/// subscriber once instead of once per stroke; an event that can say what a pending one says
/// with it is merged into it (`merge`), so nothing it carries is lost. With no subscriber,
/// sending takes a lock and stops there.
///
/// A subscriber gets the events sent after it subscribed, never one sent before (an event still
/// pending then is not merged with later ones, so a merged event is all before or all after):
/// a first value taken where the events are sent (the session's actor) and the events after it
/// neither miss nor repeat a change.
final class EventHub<Event: Sendable>: @unchecked Sendable {
    private struct Subscriber {
        /// The first sequence number it receives.
        var from: UInt64
        /// Its first values are handed over: events go to the stream (else to `held`).
        var started = false
        var held: [Event] = []
        /// Hands an event over (made into what the stream carries); false when the stream's
        /// buffer was full.
        let deliver: @Sendable (Event) -> Bool
        /// Ends the stream.
        let end: @Sendable () -> Void
        /// A full buffer ends the stream instead of dropping the oldest event.
        let endsOnOverflow: Bool
        /// It wants values that cost something to make (`send(detailed:)`).
        let detailed: Bool
    }
    private struct Pending {
        var sequence: UInt64
        var event: Event
        /// Only this subscriber gets it (a poll's findings, for one stream).
        var target: UInt64?
    }
    private let lock = NSLock()
    private var subscribers: [UInt64: Subscriber] = [:]
    private var nextID: UInt64 = 0
    private var finished = false
    private var pending: [Pending] = []
    private var nextSequence: UInt64 = 0
    /// Events pending before this sequence number are not merged with later ones: a subscriber
    /// joined after them.
    private var mergeFloor: UInt64 = 0
    private var flushScheduled = false
    let delay: Duration
    /// Merges a new event into a pending one (`SessionEvent.merge`); false when they stay apart.
    let merge: @Sendable (inout Event, Event) -> Bool
    /// Whether a new event may be merged into one pending before this one (`SessionEvent.commutes`).
    let commutes: @Sendable (Event, Event) -> Bool

    init(delay: Duration = .milliseconds(8), merge: @escaping @Sendable (inout Event, Event) -> Bool = { _, _ in false },
         commutes: @escaping @Sendable (Event, Event) -> Bool = { _, _ in false }) {
        self.delay = delay
        self.merge = merge
        self.commutes = commutes
    }

    /// How many events a subscriber that does not keep up holds before the oldest are dropped
    /// (or, `endsOnOverflow`, its stream ends).
    static var bufferLimit: Int { 4096 }

    /// A new stream of the events sent from now on, made into `Output` by `transform` (nil:
    /// passed over). `first` is called once the subscriber is registered, and its values go
    /// first; events sent meanwhile follow them. `endsOnOverflow`: a subscriber 4,096 events
    /// behind has its stream ended rather than lose an event in the middle. `started` gets the
    /// subscriber's id (for `send(_:to:)`) before `first` is called; `ended` is called when the
    /// stream ends.
    func subscribe<Output: Sendable>(first: () -> [Output] = { [] }, detailed: Bool = false, endsOnOverflow: Bool = false,
                                     started: (UInt64) -> Void = { _ in }, ended: @escaping @Sendable () -> Void = {},
                                     transform: @escaping @Sendable (Event) -> Output?) -> AsyncStream<Output> {
        let limit = Self.bufferLimit
        let (stream, continuation) = AsyncStream<Output>.makeStream(
            bufferingPolicy: endsOnOverflow ? .bufferingOldest(limit) : .bufferingNewest(limit))
        let subscriber = Subscriber(from: 0, deliver: { event in
            guard let output = transform(event) else { return true }
            if case .dropped = continuation.yield(output) { return false }
            return true
        }, end: { continuation.finish() }, endsOnOverflow: endsOnOverflow, detailed: detailed)
        let id: UInt64? = lock.withLock {
            guard !finished else { return nil }
            nextID += 1
            var s = subscriber
            s.from = nextSequence
            subscribers[nextID] = s
            mergeFloor = nextSequence
            return nextID
        }
        guard let id else { continuation.finish(); ended(); return stream }
        continuation.onTermination = { [weak self] _ in
            self?.remove(id)
            ended()
        }
        started(id)
        let values = first()
        let overflow: Bool = lock.withLock {
            for v in values { continuation.yield(v) }
            guard var s = subscribers[id] else { return false }
            let held = s.held
            s.held = []
            s.started = true
            subscribers[id] = s
            for e in held where !s.deliver(e) && s.endsOnOverflow { subscribers[id] = nil; return true }
            return false
        }
        if overflow { continuation.finish() }
        return stream
    }

    var hasSubscribers: Bool { lock.withLock { !subscribers.isEmpty } }

    /// Queues an event for every subscriber (or the one `target` names); it is only made when
    /// someone listens. `detailed` tells `event` whether a subscriber wants the values that cost
    /// something to make.
    func send(to target: UInt64? = nil, _ event: (_ detailed: Bool) -> Event) {
        let schedule: Bool = lock.withLock {
            guard !subscribers.isEmpty else { return false }
            var e = event(subscribers.values.contains { $0.detailed })
            if target == nil {
                // Back over the pending events that it may pass, to one it can be merged into.
                var i = pending.count - 1
                while i >= 0, pending[i].sequence >= mergeFloor, pending[i].target == nil {
                    // Out of the queue while it is merged, so its values are referenced once
                    // and grow in place; put back when it cannot be.
                    var candidate = pending.remove(at: i)
                    if merge(&candidate.event, e) { e = candidate.event; break }
                    pending.insert(candidate, at: i)
                    if !commutes(candidate.event, e) { break }
                    i -= 1
                }
            }
            pending.append(Pending(sequence: nextSequence, event: e, target: target))
            nextSequence += 1
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

    /// `send` of an event that costs nothing to make.
    func send(_ event: @autoclosure () -> Event) { send { _ in event() } }

    /// Hands the pending events to every subscriber, in order.
    func flush() {
        var overflowed: [Subscriber] = []
        lock.withLock {
            let batch = pending
            pending = []
            flushScheduled = false
            deliver(batch, overflowed: &overflowed)
        }
        for s in overflowed { s.end() }
    }

    /// Hands `batch` to each subscriber it is for (under the lock; a subscriber whose stream
    /// overflowed and must end is taken out into `overflowed`, to be ended after the lock).
    private func deliver(_ batch: [Pending], overflowed: inout [Subscriber]) {
        guard !batch.isEmpty else { return }
        for (id, s) in subscribers {
            let mine = batch.lazy.filter { $0.sequence >= s.from && ($0.target == nil || $0.target == id) }.map(\.event)
            if !s.started {
                subscribers[id]!.held.append(contentsOf: mine)
                continue
            }
            for e in mine where !s.deliver(e) && s.endsOnOverflow {
                subscribers[id] = nil
                overflowed.append(s)
                break
            }
        }
    }

    /// Hands over what is pending, sends a last event and ends every stream; later subscribers
    /// get an ended stream.
    func finish(with last: Event? = nil) {
        var overflowed: [Subscriber] = []
        let targets: [Subscriber] = lock.withLock {
            finished = true
            let batch = pending
            pending = []
            deliver(batch, overflowed: &overflowed)
            defer { subscribers = [:] }
            return Array(subscribers.values)
        }
        for s in targets {
            if let last { _ = s.deliver(last) }
            s.end()
        }
        for s in overflowed { s.end() }
    }

    private func remove(_ id: UInt64) { _ = lock.withLock { subscribers.removeValue(forKey: id) } }
}

extension DocumentSession {
    /// The events of this session, from now until it closes. Any number of subscribers; each gets
    /// every event (a subscriber far behind loses the oldest beyond 4,096).
    public func events() -> AsyncStream<SessionEvent> {
        let report = openReport
        return eventHub.subscribe(first: { report.isEmpty ? [] : [.findings(report)] }, transform: SessionEvent.notice)
    }

    /// The session's state and then every change, with values: the first event is
    /// `.state(_:)` (the title, the page order, the ids of every page's elements, the undo
    /// state), and the events after it say what changed (`.elementsEdited`, `.documentEdited`,
    /// `.undoChanged`), with the saves, failures, thumbnails and findings as `events()` has them,
    /// until `.closed`. The first state and the events after it neither miss nor repeat an edit:
    /// the state is taken and the subscriber registered on the session's actor, with nothing in
    /// between, so `SessionState.apply(_:)` of every event after it gives the session's state.
    ///
    /// The first state loads every page that is not in memory (one file read each, as
    /// `content(of:)` does; they may be unloaded again). Edits of one page within a display frame
    /// arrive as one event. A subscriber 4,096 events behind has its stream ended (without
    /// `.closed`) rather than miss one: subscribe again for a fresh state.
    ///
    /// Only this session's changes are observed: no other process edits a document while a
    /// session has it open (its lock), and what this session saves reaches other processes
    /// through their `Library.observe(polling:)`, not as session events.
    ///
    /// ```swift
    /// var state: SessionState?
    /// for await event in try await session.observe() {
    ///     switch event {
    ///     case .state(let first): state = first
    ///     case .elementsEdited(let change): state?.apply(event); canvas.update(change)
    ///     default: state?.apply(event)
    ///     }
    /// }
    /// ```
    /// - Throws: `.sessionClosed` after a close, or what loading a page throws.
    public func observe() throws(StoreError) -> AsyncStream<SessionEvent> {
        try checkOpen()
        var elements: [UUID: [UUID]] = [:]
        for entry in metadata.pages { elements[entry.id] = try load(entry.id).content.elements.map(\.id) }
        let state = SessionState(title: metadata.title, pageOrder: metadata.pages.map(\.id), elementIDs: elements, undo: undoState)
        return eventHub.subscribe(first: { [.state(state)] }, endsOnOverflow: true, transform: { $0 })
    }

    /// A page's content now, and again after every change of it: the page as the session has it,
    /// for a view that shows one page (`values` as GRDB's `ValueObservation` hands them). A view
    /// that does not keep up gets the newest content and misses none of its changes. Ends when
    /// the page is removed or the session closes.
    ///
    /// ```swift
    /// for await content in try await session.values(of: page) {
    ///     canvas.show(content)
    /// }
    /// ```
    /// - Throws: `.pageNotFound`, `.sessionClosed`, or what loading the page throws.
    public func values(of page: UUID) throws(StoreError) -> AsyncStream<PageContent> {
        let first = try content(of: page)
        let changes = eventHub.subscribe(endsOnOverflow: true) { (event: SessionEvent) -> SessionEvent? in
            switch event {
            case .elementsEdited(let c): return c.page == page ? event : nil
            case .documentEdited(let d): return d.removedPages.contains(page) ? event : nil
            default: return nil
            }
        }
        let (stream, continuation) = AsyncStream<PageContent>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.yield(first)
        let follower = Task.detached {
            var content = first
            for await event in changes {
                guard case .elementsEdited(let change) = event else { break }  // the page was removed
                // The edits were made on exactly this content: they apply.
                try? change.apply(to: &content)
                continuation.yield(content)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in follower.cancel() }
        return stream
    }

    /// A save failed: the UI hears of it, and autosave tries again with backoff.
    func saveFailed(_ error: StoreError) {
        let willRetry = !isClosed && options.autosaveDelay != nil
        scheduleRetry()
        eventHub.send(.saveFailed(error, willRetry: willRetry))
    }
}
