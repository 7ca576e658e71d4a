// What a storage engine must do for a document session: load, create, save and remove pages.

import Foundation
import LulucatInk

/// Fills a package's page content. The session owns exactly one engine and calls it from its actor.
package protocol StorageEngine: AnyObject {
    var kind: EngineKind { get }
    /// Loads a page's content; the only read that touches stroke data.
    func loadPage(_ id: UUID) throws(StoreError) -> PageContent
    /// Checks a page as `loadPage` would read it and says what it holds, without keeping its
    /// elements (verify and import check pages they do not edit). Defaults to `loadPage`; the
    /// snapshot engine, and the journal engine for a page without a journal, decode one element
    /// at a time, so checking a page costs its file's bytes, not its decoded strokes too.
    func checkPage(_ id: UUID) throws(StoreError) -> PageSummary
    /// Loads a page with what an engine keeps to save it faster next time (coded strokes).
    func loadPageForEditing(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?)
    /// Makes a new page durable, before document.json lists it.
    func createPage(_ id: UUID, content: PageContent) throws(StoreError)
    /// Makes a page hold `content` whole, whatever it held (or whether it was there): how a
    /// transaction's record is written (TransactionRecord.swift), so running it twice writes the
    /// same. Defaults to `createPage`, which replaces the page in the snapshot and SQLite engines.
    func replacePage(_ id: UUID, content: PageContent) throws(StoreError)
    /// Makes a dirty page durable: `content` is the whole page now, `changes` what happened since
    /// its last save (an engine may write either).
    func savePage(_ id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes?
    /// `savePage`, handed the page's coded strokes to use up instead of to read: an engine may
    /// change them in place (the snapshot engine extends its file where it is instead of copying
    /// it), and leaves in `reusing` what the next save may reuse when this one fails. Defaults to
    /// `savePage(_:content:changes:reusing:)`.
    func savePage(_ id: UUID, content: PageContent, changes: [PageChange], takingOver reusing: inout EncodedStrokes?) throws(StoreError) -> EncodedStrokes?
    /// Whether `savePages` makes all the dirty pages of a save durable together (one transaction);
    /// the session then hands them over in one call. Defaults to false (StorageEngine+Batching.swift).
    var savesPagesTogether: Bool { get }
    /// Makes several dirty pages durable, all or none; returns what `savePage` would, per page.
    func savePages(_ pages: [PageSave]) throws(StoreError) -> [EncodedStrokes?]
    /// Called when the session has been quiet for a while after a save (an engine may tidy up:
    /// the SQLite engine checkpoints its WAL). Defaults to nothing.
    func idle() throws(StoreError)
    /// Removes a page's stored content, after document.json stopped listing it.
    func removePage(_ id: UUID) throws(StoreError)
    /// Called when the session closes, after the last save.
    func close() throws(StoreError)
    /// What loading and repairing pages found (a torn journal tail, a journal kept aside).
    var findings: [Finding] { get }
    /// Merges whatever an engine keeps beside a page's snapshot into it (`lnote compact`).
    /// - Returns: whether anything was written.
    func compact(_ id: UUID) throws(StoreError) -> Bool
    /// The session let a clean page go (the page closed): an engine may merge and release what it
    /// keeps for it. Failures are findings, never errors: nothing unsaved depends on it.
    func pageUnloaded(_ id: UUID)
    /// Lets go of the engine after a read-only use (verify, repair's look, a migration's source)
    /// without tidying anything on disk: the SQLite engine closes without its closing checkpoint.
    /// Defaults to nothing.
    func closeWithoutTidying()
    /// Saves that could not be applied as changes and rewrote the whole page instead (the SQLite
    /// engine counts them; engines that always write whole pages report 0, the default).
    var rewriteFallbacks: Int { get }
    /// A writer that leaves this engine's form for the snapshot form by compacting each page in
    /// place, for an engine whose pages are snapshot files plus something more (the journal's);
    /// nil where the snapshot form must be written from scratch.
    func compactingFormWriter() -> (any FormWriter)?
    /// Bounds the work of reading a page from untrusted files (import, verify of an import): an
    /// engine whose reads can cost more than the bytes read (the journal's replay) refuses a page
    /// over `budget`; nil is no bound.
    func limitReadCost(_ budget: Int?)
    /// Makes the package's files whole by themselves while this engine holds it open, so they
    /// can be copied as they are (a SQLite database checkpointed into its one file).
    func prepareForCopyWhileOpen() throws(StoreError)
    /// A page that does not load (`corruptPage`): every element whose own bytes still check, with
    /// a finding saying how many were salvaged and lost. With `keep` the damaged bytes are first
    /// kept durably in `recovered/`, and the next save of the page writes what was salvaged; without
    /// it nothing is written (verify). Nil: this engine salvages another way (SQLite: repair).
    func salvagePage(_ id: UUID, canvas: QuantizedSize, keep: Bool) throws(StoreError) -> SalvagedPage?
    /// `loadPageForEditing` for sync's read of a closed document: the strokes `hollowing` picks
    /// may come back hollow (`PageFile.decodeKeepingStrokes(_:hollowing:)`), their ids returned.
    /// Defaults to `loadPageForEditing` (nothing hollow); the snapshot engine hollows.
    func loadPageForSync(_ id: UUID, hollowing: (UUID, UInt64, SampleCodecID) -> Bool) throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>)
}

extension StorageEngine {
    package func savePage(_ id: UUID, content: PageContent, changes: [PageChange], takingOver reusing: inout EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        try savePage(id, content: content, changes: changes, reusing: reusing)
    }
    package func checkPage(_ id: UUID) throws(StoreError) -> PageSummary { PageSummary(try loadPage(id)) }
    package var findings: [Finding] { [] }
    package func compact(_ id: UUID) throws(StoreError) -> Bool { false }
    package func pageUnloaded(_ id: UUID) {}
    package func closeWithoutTidying() {}
    package func replacePage(_ id: UUID, content: PageContent) throws(StoreError) { try createPage(id, content: content) }
    package var rewriteFallbacks: Int { 0 }
    package func compactingFormWriter() -> (any FormWriter)? { nil }
    package func limitReadCost(_ budget: Int?) {}
    package func prepareForCopyWhileOpen() throws(StoreError) {}
    package func salvagePage(_ id: UUID, canvas: QuantizedSize, keep: Bool) throws(StoreError) -> SalvagedPage? { nil }
    package func loadPageForSync(_ id: UUID, hollowing: (UUID, UInt64, SampleCodecID) -> Bool) throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let (content, encoded) = try loadPageForEditing(id)
        return (content, encoded, [])
    }
}
