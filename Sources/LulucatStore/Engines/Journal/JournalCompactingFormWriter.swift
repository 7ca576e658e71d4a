// Migration out of the journal engine's form (into snapshot files), beside the engine (Migration/EngineForm.swift has the FormWriter protocol).

import Foundation
import LulucatInk

/// Journal to snapshot: each page's journal merged into its snapshot by the journal engine's own
/// compaction (crash-safe: until document.json switches, the journal document opens with every
/// page, compacted or not; after, the journals are leftovers open-time cleanup removes).
final class JournalCompactingFormWriter: FormWriter {
    let engine: JournalEngine
    init(engine: JournalEngine) { self.engine = engine }
    func write(_ page: UUID, _ content: PageContent) throws(StoreError) { try engine.compact(page) }
    func finish() throws(StoreError) { try engine.close() }
    func abandon() { try? engine.close() }
}

extension JournalEngine {
    /// Leaving the journal for the snapshot engine is compacting every page (see above).
    package func compactingFormWriter() -> (any FormWriter)? { JournalCompactingFormWriter(engine: self) }
}
