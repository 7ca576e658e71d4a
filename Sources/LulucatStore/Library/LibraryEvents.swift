// Events of a library, for its view: documents created, renamed, trashed, restored or changed in
// this process. Every `Library` value with the same root shares them.

import Foundation
import LulucatInk

/// Something that happened to the documents of a library (in this process; `Library.observe(polling:)`
/// also sees what other processes do).
///
/// New cases will be added: switch over it with a `default`.
public enum LibraryEvent: Sendable, Equatable {
    /// A document was created (new, duplicated or imported).
    case created(UUID)
    /// A document got a new title.
    case renamed(UUID, title: String)
    /// A document went to the trash.
    case trashed(UUID)
    /// A document came back from the trash.
    case restored(UUID)
    /// A document's metadata changed (pages, times, cover): its manifest was rewritten.
    case changed(UUID)

    /// The document the event is about.
    public var documentID: UUID {
        switch self {
        case .created(let id), .renamed(let id, _), .trashed(let id), .restored(let id), .changed(let id): return id
        }
    }
}

/// What `Library.observe(polling:)` hands: the library's documents first, then each change with
/// the document's entry as a listing reads it now, so a grid updates one cell instead of listing
/// the library again.
///
/// ```swift
/// var entries: [LibraryEntry] = []
/// for await change in try library.observe(polling: .seconds(2)) {
///     change.apply(to: &entries)   // the list as `list()` gives it, in its order
///     grid.show(entries)
/// }
/// ```
public enum LibraryChange: Sendable, Equatable {
    /// Every document, as `list()` gives them: the first value of a stream.
    case list([LibraryEntry])
    /// A document was created, renamed, changed or restored (`event` says which): its entry now,
    /// to put in the place of the entry with its id, or to add.
    case updated(LibraryEntry, LibraryEvent)
    /// A document left the library (`.trashed`; or, seen by the poll, moved away by another
    /// process), or can no longer be read where it was.
    case removed(UUID, LibraryEvent)

    /// The change made to a list as `list()` gives it (newest first): it is then the list
    /// `list()` would give (entries replaced or added in their place, removed ones gone).
    public func apply(to entries: inout [LibraryEntry]) {
        switch self {
        case .list(let all): entries = all
        case .updated(let entry, _):
            entries.removeAll { $0.id == entry.id }
            let key = ListedDocument.SortKey(entry)
            let at = entries.firstIndex { ListedDocument.SortKey.newerFirst(key, ListedDocument.SortKey($0)) } ?? entries.count
            entries.insert(entry, at: at)
        case .removed(let id, _): entries.removeAll { $0.id == id }
        }
    }

    /// What a notice says to an observer.
    init(_ notice: LibraryNotice) {
        if let entry = notice.entry { self = .updated(entry, notice.event) } else { self = .removed(notice.event.documentID, notice.event) }
    }
}

/// What the library's hub carries: the event, and the entry when an observer wants it (nil for a
/// document trashed or no longer readable).
struct LibraryNotice: Sendable {
    var event: LibraryEvent
    var entry: LibraryEntry?
}

/// One hub per library root, created on first use.
enum LibraryEventHubs {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var hubs: [String: EventHub<LibraryNotice>] = [:]

    static func hub(_ root: String) -> EventHub<LibraryNotice> {
        let key = normalized(root)
        return lock.withLock {
            if let h = hubs[key] { return h }
            let h = EventHub<LibraryNotice>()
            hubs[key] = h
            return h
        }
    }

    /// Sends only when a hub exists for the root (someone subscribed once). The document's
    /// entry is read (one manifest and one stat, as a listing does) only when an observer wants it.
    static func send(_ library: Library, _ event: LibraryEvent) {
        let key = normalized(library.root)
        guard let h = lock.withLock({ hubs[key] }) else { return }
        h.send { detailed in LibraryNotice(event: event, entry: detailed ? library.entry(for: event) : nil) }
    }

    static func normalized(_ root: String) -> String {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        return r
    }
}

extension Library {
    /// The events of this library's documents, from now on (changes made in this process).
    public func events() -> AsyncStream<LibraryEvent> { LibraryEventHubs.hub(root).subscribe(transform: { $0.event }) }

    /// The library's documents, then every change with the document's entry: the first value is
    /// `.list` (what `list()` gives), and `.updated` and `.removed` follow for each document
    /// created, renamed, changed, trashed or restored; `LibraryChange.apply(to:)` keeps a list
    /// equal to `list()`'s. The subscriber is registered before the list is read, so no change is
    /// missed: one made while it is read may arrive after the list that holds it already, and
    /// applying it again changes nothing.
    ///
    /// Without `polling`, it hears of what this process does (every `Library` value of the same
    /// root, every session of its documents). With `polling`, it also sees what other processes
    /// do (`lnote`, another app sharing the folder): every `interval` it lists the root and
    /// compares each package's `manifest.json` and `document.json` (inode, size, modification
    /// and change times) and its needs-repair marker with what it saw last; a package that
    /// appeared is `.updated(entry, .created)`, a changed one `.updated(entry, .changed)`, one
    /// gone `.removed(id, .trashed)`. A change of this process is then heard twice (once as it
    /// happens, once by the poll): the second changes nothing. The poll costs one folder listing
    /// and two stats per document each interval, and ends with the stream.
    ///
    /// Another process's *session* events (strokes not yet saved) do not reach this process: a
    /// document has one writer at a time (its lock), and its saves reach other processes through
    /// the poll, as `.changed` with the entry its manifest has then. On Apple platforms an
    /// `NSFilePresenter` on the root folder would tell of changes without polling; this build
    /// polls there too.
    ///
    /// A subscriber 4,096 changes behind has its stream ended rather than miss one: subscribe
    /// again for a fresh list.
    ///
    /// - Throws: what `list()` throws for the first value.
    public func observe(polling interval: Duration? = nil) throws(StoreError) -> AsyncStream<LibraryChange> {
        let hub = LibraryEventHubs.hub(root)
        let library = self
        let poll = PollTask()
        var subscriber: UInt64 = 0
        var failure: StoreError?
        let stream = hub.subscribe(first: { () -> [LibraryChange] in
            // The stamps before the list: a change after them is seen by the next poll.
            if let interval { poll.start(library.watch(every: interval, from: library.packageStamps(), hub: hub, subscriber: subscriber)) }
            do throws(StoreError) { return [.list(try library.list())] } catch {
                failure = error
                return []
            }
        }, detailed: true, endsOnOverflow: true, started: { subscriber = $0 }, ended: { poll.cancel() }, transform: { LibraryChange($0) })
        if let failure { throw failure }  // the stream, dropped, ends its subscription and its poll
        return stream
    }

    /// The entry a listing shows now of the document `event` is about (nil when it is not in the
    /// library: trashed, or gone).
    func entry(for event: LibraryEvent) -> LibraryEntry? {
        if case .trashed = event { return nil }
        return (try? listedDocuments(in: root, only: event.documentID))?.first?.entry(in: root)
    }

    /// What the poll compares, per package in the root.
    struct PackageStamp: Equatable {
        var manifest: FileStamp?
        var document: FileStamp?
        var needsRepair: Bool
    }

    /// The stamps of the packages in the root (nothing when it cannot be listed).
    func packageStamps() -> [UUID: PackageStamp] {
        let fs = fileSystem
        guard let names = try? fs.contentsOfDirectory(root) else { return [:] }
        var stamps: [UUID: PackageStamp] = [:]
        for name in names {
            guard let id = DocumentPackage.id(fromDirectoryName: name) else { continue }
            let p = package(id)
            stamps[id] = PackageStamp(manifest: (try? fs.stamp(p.manifestPath)) ?? nil, document: (try? fs.stamp(p.documentPath)) ?? nil,
                                      needsRepair: ((try? fs.info(p.path + "/" + DocumentPackage.needsRepairName)) ?? nil) != nil)
        }
        return stamps
    }

    /// Polls the root every `interval` and sends what changed since `known` to one subscriber.
    func watch(every interval: Duration, from known: [UUID: PackageStamp], hub: EventHub<LibraryNotice>,
               subscriber: UInt64) -> Task<Void, Never> {
        let library = self
        return Task.detached {
            var known = known
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { return }
                let now = library.packageStamps()
                for (id, stamp) in now where known[id] != stamp {
                    let event: LibraryEvent = known[id] == nil ? .created(id) : .changed(id)
                    let entry = library.entry(for: event)
                    hub.send(to: subscriber) { _ in LibraryNotice(event: event, entry: entry) }
                }
                for id in known.keys where now[id] == nil {
                    hub.send(to: subscriber) { _ in LibraryNotice(event: .trashed(id), entry: nil) }
                }
                known = now
            }
        }
    }
}

/// The poll of one `observe(polling:)` stream, cancelled when the stream ends (which may come
/// before it starts).
final class PollTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var cancelled = false

    func start(_ t: Task<Void, Never>) {
        let stop = lock.withLock { () -> Bool in
            task = t
            return cancelled
        }
        if stop { t.cancel() }
    }

    func cancel() {
        let t = lock.withLock { () -> Task<Void, Never>? in
            cancelled = true
            return task
        }
        t?.cancel()
    }
}

extension ListedDocument.SortKey {
    /// The key of an entry, to place it as a listing does.
    init(_ entry: LibraryEntry) {
        self.init(ListedDocument(id: entry.id, title: "", created: entry.created, modified: entry.modified, pageCount: 0,
                                 coverPageID: nil, problem: nil), at: 0)
    }
}

extension DocumentSession {
    /// Tells the library's observers of a change of this document's metadata (after its manifest
    /// is written, so the entry they get is the one a listing reads).
    func sendLibraryEvent(_ event: LibraryEvent) {
        LibraryEventHubs.send(Library(root: package.libraryRootPath, fileSystem: fileSystem), event)
    }
}

extension DocumentPackage {
    /// The folder that holds the package (its library's root, or the trash).
    var libraryRootPath: String {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }
}
