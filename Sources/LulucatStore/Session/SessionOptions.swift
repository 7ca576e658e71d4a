// How a document session behaves: autosave delay, how many clean pages stay in memory.

import Foundation
import LulucatInk

/// Options of a `DocumentSession`.
public struct SessionOptions: Sendable {
    /// How long after the last change a save starts; nil turns autosave off (call `flush()`).
    public var autosaveDelay: Duration?
    /// How many clean pages stay loaded; beyond it the least recently used clean ones are dropped.
    public var maxLoadedPages: Int
    /// Called after a page is saved, off the saving path, to refresh derived files (thumbnails).
    public var pageSaved: (@Sendable (PageSavedEvent) -> Void)?

    public init(autosaveDelay: Duration? = .milliseconds(500), maxLoadedPages: Int = 8,
                pageSaved: (@Sendable (PageSavedEvent) -> Void)? = nil) {
        self.autosaveDelay = autosaveDelay
        self.maxLoadedPages = max(1, maxLoadedPages)
        self.pageSaved = pageSaved
    }
}

/// A page that was just made durable, for work derived from it (its thumbnail).
public struct PageSavedEvent: Sendable {
    public var package: DocumentPackage
    public var pageID: UUID
    public var pageIndex: Int
    public var content: PageContent
}
