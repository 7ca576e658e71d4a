// Events of a library, for its view: documents created, renamed, trashed, restored or changed in
// this process. Every `Library` value with the same root shares them.

import Foundation
import LulucatInk

/// Something that happened to the documents of a library (in this process).
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
}

/// One hub per library root, created on first use.
enum LibraryEventHubs {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var hubs: [String: EventHub<LibraryEvent>] = [:]

    static func hub(_ root: String) -> EventHub<LibraryEvent> {
        let key = normalized(root)
        return lock.withLock {
            if let h = hubs[key] { return h }
            let h = EventHub<LibraryEvent>()
            hubs[key] = h
            return h
        }
    }

    /// Sends only when a hub exists for the root (someone subscribed once).
    static func send(_ root: String, _ event: @autoclosure () -> LibraryEvent) {
        let key = normalized(root)
        guard let h = lock.withLock({ hubs[key] }) else { return }
        h.send(event())
    }

    static func normalized(_ root: String) -> String {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        return r
    }
}

extension Library {
    /// The events of this library's documents, from now on (changes made in this process).
    public func events() -> AsyncStream<LibraryEvent> { LibraryEventHubs.hub(root).subscribe() }
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
