// How a document session behaves: autosave delay, how many clean pages stay in memory.

import Foundation
import LulucatInk

/// Options of a `DocumentSession`.
public struct SessionOptions: Sendable {
    /// How long after the last change a save starts; nil turns autosave off (call `flush()`).
    public var autosaveDelay: Duration?
    /// How many clean pages stay loaded; beyond it the least recently used clean ones are dropped.
    public var maxLoadedPages: Int
    /// Thumbnails written in the background after each page save (nil: none). `close()` waits
    /// for them; a save never does. Written only where the build draws them
    /// (`Library.enableThumbnails()` from LulucatStoreThumbnails); elsewhere none is written.
    public var thumbnails: ThumbnailOptions?
    /// Compaction thresholds and preallocation of the journal engine (journal documents only).
    public var journal: JournalOptions
    /// How many edits (or groups, `beginUndoGroup`) the session's own undo history keeps
    /// (`undo()`, `redo()`); 0, the default, keeps none (an app that registers the changes each
    /// edit returns with its own `UndoManager` needs none).
    public var undoLevels: Int = 0

    /// Options with autosave 0.5 s after the last change, 8 clean pages kept loaded, thumbnails
    /// 256 px wide where the build draws them, the journal engine's defaults, and no undo history
    /// (set `undoLevels` to keep one). `maxLoadedPages` below 1 counts as 1.
    public init(autosaveDelay: Duration? = .milliseconds(500), maxLoadedPages: Int = 8,
                thumbnails: ThumbnailOptions? = ThumbnailOptions(), journal: JournalOptions = JournalOptions()) {
        self.autosaveDelay = autosaveDelay
        self.maxLoadedPages = max(1, maxLoadedPages)
        self.thumbnails = thumbnails
        self.journal = journal
    }
}

/// A page that was just made durable, for work derived from it (its thumbnail).
package struct PageSavedEvent: Sendable {
    /// The document's package.
    package var package: DocumentPackage
    /// The page saved.
    package var pageID: UUID
    /// Its place in the document when saved (0 is the cover).
    package var pageIndex: Int
    /// What was saved.
    package var content: PageContent
    /// Increases with every save of the session, so the newest content of a page wins.
    package var sequence: UInt64
}
