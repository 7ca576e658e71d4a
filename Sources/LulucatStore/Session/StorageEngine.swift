// What a storage engine must do for a document session: load, create, save and remove pages.

import Foundation
import LulucatInk

/// Fills a package's page content. The session owns exactly one engine and calls it from its actor.
protocol StorageEngine: AnyObject {
    var kind: EngineKind { get }
    /// Loads a page's content; the only read that touches stroke data.
    func loadPage(_ id: UUID) throws(StoreError) -> PageContent
    /// Loads a page with what an engine keeps to save it faster next time (coded strokes).
    func loadPageForEditing(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?)
    /// Makes a new page durable, before document.json lists it.
    func createPage(_ id: UUID, content: PageContent) throws(StoreError)
    /// Makes a dirty page durable: `content` is the whole page now, `changes` what happened since
    /// its last save (an engine may write either).
    func savePage(_ id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes?
    /// Removes a page's stored content, after document.json stopped listing it.
    func removePage(_ id: UUID) throws(StoreError)
    /// Called when the session closes, after the last save.
    func close() throws(StoreError)
}
