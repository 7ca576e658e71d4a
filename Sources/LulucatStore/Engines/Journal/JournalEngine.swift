// Level 1: a snapshot per page plus an append-only journal beside it. A save appends one frame
// and syncs it; replay on load applies the valid frames; compaction merges them into a new snapshot.

import Foundation
import LulucatInk

/// The journal engine: `pages/<id>.content` (a snapshot, the page format unchanged) and
/// `pages/<id>.journal` (docs/journal-format.md).
package final class JournalEngine: StorageEngine {
    let package: DocumentPackage
    let fileSystem: any FileSystem
    /// The codec of snapshots this engine writes (the document's).
    let codec: SampleCodecID
    /// The codec of stroke records in new journals.
    var frameCodec: SampleCodecID { options.frameCodec ?? codec }
    let options: JournalOptions
    package var kind: EngineKind { .journal }
    /// What loads and repairs found, oldest first.
    package private(set) var findings: [Finding] = []
    /// The pages this engine has loaded for editing or created.
    var pages: [UUID: PageJournal] = [:]

    /// One page's journal as the engine writes it.
    struct PageJournal {
        /// The page as replayed, kept only while a damaged journal waits to be compacted from it.
        /// The engine does not hold the page otherwise: a second reference to the session's
        /// element array would make every edit copy the whole page.
        var replayed: (content: PageContent, encoded: EncodedStrokes?)?
        var snapshot: SnapshotIdentity
        /// The journal's header, or nil when a new journal must be started before the next frame
        /// (none on disk, or a stale or damaged one).
        var header: JournalFormat.Header?
        /// The damaged journal to keep aside before anything is written.
        var damaged = false
        /// Generation of the journal last seen, so new journals count on from it.
        var lastGeneration: UInt64 = 0
        var frameCount = 0
        var frameBytes = 0
        var writeOffset = JournalFormat.headerSize
        /// Bytes after `writeOffset` that must be zeroed before the next frame (a torn tail, or a
        /// frame whose write failed).
        var tailToClear: Range<Int>?
        /// The open journal and where its offset is, and how big the file is.
        var fd: FileDescriptor?
        var position = 0
        var allocated = 0
        /// Every change since the snapshot (the journal's frames, replayed or written) appended
        /// elements or resized the canvas: the snapshot's coded strokes (the session's) extended
        /// with the appended elements give the page, and a compaction extends the snapshot's file
        /// instead of coding the page again. False whenever not known.
        var onlyAppended = false
        // Set by a creation, a first read (from the replay that gave the session its coded
        // strokes) and a save's compaction (whose coded strokes the session takes); cleared by any
        // other change and by `compact(_:)`, whose new snapshot the session does not see.
    }

    package init(package: DocumentPackage, fileSystem: any FileSystem, codec: SampleCodecID, options: JournalOptions) {
        self.package = package
        self.fileSystem = fileSystem
        self.codec = codec
        self.options = options
    }

    deinit {
        for p in pages.values { if let fd = p.fd { try? fileSystem.close(fd) } }
    }

    // MARK: Loading

    /// Adds what a replay found, once: a page read again finds the same torn tail again.
    func record(_ new: [Finding]) {
        for f in new where !findings.contains(f) { findings.append(f) }
    }

    /// Most elements a replay of one page's journal may visit (`JournalReplay.scanBudget`); nil,
    /// the default, for no limit. An import sets `ImportLimits.maxReplayScan`.
    var replayScanBudget: Int?
    package func limitReadCost(_ budget: Int?) { replayScanBudget = budget }

    package func loadPage(_ id: UUID) throws(StoreError) -> PageContent {
        let replay = try JournalReplay.read(package, page: id, fileSystem: fileSystem, scanBudget: replayScanBudget)
        if replay.overBudget, let budget = replayScanBudget {
            throw .invalidArgument("replaying the journal of page \(id) visits more than \(budget) elements (more frames on a page of more elements than the journal engine ever leaves uncompacted): refused")
        }
        record(replay.findings)
        return replay.content
    }

    /// A page without a journal is its snapshot: checked one element at a time. With a journal,
    /// the replay needs the whole page.
    package func checkPage(_ id: UUID) throws(StoreError) -> PageSummary {
        let journal = try fileSystem.checked.info(package.journalPath(id))
        guard journal == nil else { return PageSummary(try loadPage(id)) }
        return try SnapshotEngine.checkSnapshot(package.pagePath(id), page: id, fileSystem: fileSystem)
    }

    package func loadPageForEditing(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        if let p = pages[id] {
            // Loaded again after the session let it go: what is on disk is what was saved.
            if let r = p.replayed { return r }
            return try replayedPage(id)
        }
        var p = try readState(id)
        let page = p.replayed!
        if !p.damaged { p.replayed = nil }
        pages[id] = p
        return page
    }

    /// The page a damaged journal's replay recovered, to compact before the journal goes.
    func damagedPage(_ id: UUID, _ p: PageJournal) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        if let r = p.replayed { return r }
        return try replayedPage(id)
    }

    /// The page as its snapshot and journal give it now.
    func replayedPage(_ id: UUID) throws(StoreError) -> (PageContent, EncodedStrokes?) {
        let replay = try JournalReplay.read(package, page: id, fileSystem: fileSystem)
        return (replay.content, replay.encoded)
    }

    /// The page's state, replayed from disk when the engine has not seen it yet.
    func state(_ id: UUID) throws(StoreError) -> PageJournal {
        if let p = pages[id] { return p }
        return try readState(id)
    }

    /// Replays a page from disk into the state the engine writes from.
    func readState(_ id: UUID) throws(StoreError) -> PageJournal {
        let replay = try JournalReplay.read(package, page: id, fileSystem: fileSystem)
        record(replay.findings)
        var p = PageJournal(replayed: (replay.content, replay.encoded), snapshot: replay.snapshot)
        p.lastGeneration = replay.header?.generation ?? 0
        switch replay.journal {
        case .missing, .stale:
            // Nothing applied: the page is its snapshot.
            p.onlyAppended = true
        case .damaged:
            p.damaged = true
        case .current:
            p.onlyAppended = replay.onlyAppended
            p.header = replay.header
            p.frameCount = replay.frameCount
            p.frameBytes = replay.frameBytes
            p.writeOffset = replay.validEnd
            p.tailToClear = replay.tailToClear
            p.allocated = replay.fileSize
        }
        return p
    }

    // MARK: Writing

    package func createPage(_ id: UUID, content: PageContent) throws(StoreError) {
        let (bytes, strokes) = try encodeSnapshot(id, content, reusing: nil)
        try fileSystem.checked.writeAtomically(bytes, to: package.pagePath(id))
        _ = strokes
        pages[id] = PageJournal(snapshot: SnapshotIdentity(snapshot: bytes), onlyAppended: true)
    }

    /// The page's journal goes first, then its snapshot is written whole: a crash in between
    /// leaves the old snapshot alone, which the transaction record that asked for this writes again.
    package func replacePage(_ id: UUID, content: PageContent) throws(StoreError) {
        if let fd = pages[id]?.fd { try? fileSystem.close(fd) }
        pages[id] = nil
        try fileSystem.checked.removeIfPresent(package.journalPath(id))
        try createPage(id, content: content)
    }

    /// Appends one frame holding `changes` and syncs it; the save is acknowledged only after the sync.
    package func savePage(_ id: UUID, content: PageContent, changes: [PageChange], reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        var p = try state(id)
        defer { pages[id] = p }
        if changes.isEmpty {
            // Nothing to append; a salvaged page (damaged snapshot) is still written out whole.
            guard p.damaged else { return reusing }
            try prepareForWriting(id, &p)
            return nil
        }
        let encoded: (type: UInt8, payload: [UInt8])
        do { encoded = try JournalChangeCodec(codec: p.header?.codec ?? frameCodec, version: p.header?.version ?? JournalFormat.version).encodeSave(changes) } catch {
            throw .invalidArgument("page \(id): \(error)")
        }
        guard encoded.payload.count <= options.maxFramePayload else {
            // More than one frame holds: the save is written as a compaction instead (the page as
            // it is after these changes as the new snapshot, then a new journal generation), which
            // is atomic the same way (docs/journal-format.md, "A save larger than a frame").
            return try saveAsCompaction(id, &p, content: content, reusing: reusing)
        }
        try prepareForWriting(id, &p)
        p.replayed = nil
        if !SnapshotEngine.onlyAppend(changes) { p.onlyAppended = false }
        let header = p.header!
        let frame = JournalFormat.encodeFrame(type: encoded.type, payload: encoded.payload,
                                              generation: header.generation, sequence: UInt64(p.frameCount))
        try append(frame, page: id, &p)
        p.frameCount += 1
        p.frameBytes += frame.count
        if p.frameCount >= options.compactAfterFrames || p.frameBytes >= options.compactAfterBytes {
            // The save is already durable: a failed compaction must not look like a failed save
            // (the session would append the same changes again). It is retried at the next save.
            do {
                guard let strokes = try compact(id, &p, content: content, encoded: reusing, preallocate: true) else { return reusing }
                // The session gets the new snapshot's coded strokes: appends from here extend it.
                p.onlyAppended = true
                return strokes
            } catch {
                findings.append(Finding(.warning, package.journalPath(id), "compaction failed and will be retried: \(error)"))
            }
        }
        return reusing
    }

    /// A save whose frame would be larger than a frame may be: `content` (the page with the save's
    /// changes applied) written as the new snapshot, atomically, then a new journal naming it. A
    /// crash before the snapshot's rename leaves the page as it was before the save (never
    /// acknowledged); after it, the old journal names the old snapshot and is stale, so the page
    /// is the new snapshot: all of the save or none of it. A damaged journal is kept aside first
    /// (what its replay salvaged is in `content`).
    private func saveAsCompaction(_ id: UUID, _ p: inout PageJournal, content: PageContent,
                                  reusing: EncodedStrokes?) throws(StoreError) -> EncodedStrokes? {
        if p.damaged {
            try keepAside(id)
            p.damaged = false
        }
        p.replayed = nil
        guard let strokes = try compact(id, &p, content: content, encoded: reusing, preallocate: true) else {
            // The new snapshot's CRC32C and length equal the old one's with other bytes (about
            // 2^-32): a new journal could not tell them apart, so the save cannot be written now.
            throw .invalidArgument("page \(id): a save too large for one journal frame could not be written as a compaction (the new snapshot's CRC32C and length collide with the old one's); it stays unsaved")
        }
        return strokes
    }

    /// Writes `frame` at the write offset, growing the preallocated region when it does not fit,
    /// then `fdatasync`s.
    private func append(_ frame: [UInt8], page id: UUID, _ p: inout PageJournal) throws(StoreError) {
        let fs = fileSystem
        let path = package.journalPath(id)
        let fd = try openForWriting(path, &p)
        let start = p.writeOffset
        var bytes = frame
        if let header = p.header, header.version >= 2 {
            // The end mark of the next frame number, in the same write (docs/journal-format.md).
            bytes += JournalFormat.encodeEndMark(generation: header.generation, sequence: UInt64(p.frameCount + 1))
        }
        let written = bytes.count
        // A journal claiming an allocation chunk (version 3) keeps its size a multiple of it and
        // room for the ack mark `ackGap` bytes after the frame.
        let claimed = p.header?.allocationChunk ?? 0
        let chunk = claimed > 0 ? claimed : options.preallocationChunk
        let room = claimed > 0 ? JournalFormat.ackGap + JournalFormat.frameHeaderSize - (written - frame.count) : 0
        if chunk > 0 && start + written + max(0, room) > p.allocated {
            // Grow by whole chunks in the same write, so the one sync that commits the new size
            // also commits the frame.
            let target = ((start + written + max(0, room) + chunk - 1) / chunk) * chunk
            bytes.append(contentsOf: repeatElement(0, count: target - start - written))
        }
        do {
            if p.position != start { try fs.seek(fd, to: start) }
            p.position = -1
            try fs.write(fd, bytes)
            p.position = start + bytes.count
            try fs.syncData(fd)
        } catch {
            // Whatever reached the file must not be mistaken for a frame: clear it before the next one.
            let end = start + written
            p.tailToClear = p.tailToClear.map { min($0.lowerBound, start)..<max($0.upperBound, end) } ?? start..<end
            throw .file(error)
        }
        p.allocated = max(p.allocated, start + bytes.count)
        p.writeOffset = start + frame.count
        if claimed > 0, let header = p.header {
            // Acknowledged: the ack mark, not synced (docs/journal-format.md, Ack mark). Best
            // effort: the save is durable whether or not it gets there.
            let at = p.writeOffset + JournalFormat.ackGap
            let mark = JournalFormat.encodeAckMark(generation: header.generation, sequence: UInt64(p.frameCount))
            if at + mark.count <= p.allocated {
                p.position = -1
                if (try? fs.seek(fd, to: at)) != nil, (try? fs.write(fd, mark)) != nil { p.position = at + mark.count }
            }
        }
    }

    private func openForWriting(_ path: String, _ p: inout PageJournal) throws(StoreError) -> FileDescriptor {
        if let fd = p.fd { return fd }
        let fs = fileSystem
        let fd = try fs.checked.open(path, .readWrite)
        p.fd = fd
        p.position = 0
        p.allocated = (try? fs.size(fd)) ?? p.allocated
        return fd
    }

    /// Before the first frame of a session: keeps a damaged journal aside, starts a new journal
    /// when there is none that applies, and zeroes a torn tail.
    private func prepareForWriting(_ id: UUID, _ p: inout PageJournal) throws(StoreError) {
        if p.damaged {
            try keepAside(id)
            // The snapshot must contain what replay recovered before the damaged journal goes.
            let page = try damagedPage(id, p)
            try compact(id, &p, content: page.0, encoded: page.1, preallocate: true)
            p.damaged = false
            p.replayed = nil
        }
        if p.header == nil { try startJournal(id, &p, preallocate: true) }
        if let tail = p.tailToClear {
            let fs = fileSystem
            let fd = try openForWriting(package.journalPath(id), &p)
            let lower = min(tail.lowerBound, p.writeOffset)
            var upper = tail.upperBound
            if let chunk = p.header?.allocationChunk, chunk > 0 {
                // A claimed chunk: the size goes back to a multiple of it (a torn write that grew
                // the file may have left it between two).
                let size = max(upper, p.allocated, (try? fs.size(fd)) ?? 0)
                upper = (size + chunk - 1) / chunk * chunk
            }
            var zeros = [UInt8](repeating: 0, count: max(0, upper - lower))
            if let header = p.header, header.version >= 2, lower == p.writeOffset {
                // The end mark goes back where the torn frame began: a crash before the next frame
                // then leaves a journal that ends cleanly, not one that looks damaged.
                let mark = JournalFormat.encodeEndMark(generation: header.generation, sequence: UInt64(p.frameCount))
                if zeros.count < mark.count { zeros += [UInt8](repeating: 0, count: mark.count - zeros.count) }
                zeros.replaceSubrange(0..<mark.count, with: mark)
            }
            p.position = -1  // unknown until the zeros are written
            try fs.checked.seek(fd, to: lower)
            try fs.checked.write(fd, zeros)
            try fs.checked.syncData(fd)
            p.position = lower + zeros.count
            p.allocated = max(p.allocated, p.position)
            p.tailToClear = nil
        }
    }

    /// Copies the journal to `pages/<id>.journal.corrupt-<n>` (the first free n), durably.
    private func keepAside(_ id: UUID) throws(StoreError) {
        let fs = fileSystem
        let source = package.journalPath(id)
        let files = fs.checked
        if try files.fileExists(source) {
            let bytes = try files.readFile(source)
            var n = 1
            while try files.info(source + ".corrupt-\(n)") != nil { n += 1 }
            try files.writeAtomically(bytes, to: source + ".corrupt-\(n)")
            findings.append(Finding(.repaired, source, "damaged journal kept aside as \(splitPath(source).1).corrupt-\(n); the page continues from the frames before the damage"))
        }
    }

    /// Replaces the journal with an empty one of the next generation on top of the current
    /// snapshot (atomically: a crash leaves the old journal or the new one).
    func startJournal(_ id: UUID, _ p: inout PageJournal, preallocate: Bool) throws(StoreError) {
        let fs = fileSystem
        if let fd = p.fd { try? fs.close(fd); p.fd = nil }
        let generation = max(p.lastGeneration, p.header?.generation ?? 0) + 1
        let header = JournalFormat.Header(codec: frameCodec, generation: generation, base: p.snapshot,
                                          allocationShift: JournalFormat.allocationShift(forChunk: options.preallocationChunk))
        var bytes = JournalFormat.encodeHeader(header)
        if header.version >= 2 { bytes += JournalFormat.encodeEndMark(generation: generation, sequence: 0) }
        if preallocate && options.preallocationChunk > bytes.count {
            bytes.append(contentsOf: repeatElement(0, count: options.preallocationChunk - bytes.count))
        }
        try fs.checked.writeAtomically(bytes, to: package.journalPath(id))
        p.header = header
        p.lastGeneration = generation
        p.frameCount = 0
        p.frameBytes = 0
        p.writeOffset = JournalFormat.headerSize
        p.allocated = bytes.count
        p.tailToClear = nil
    }

    // MARK: Compaction

    /// Merges a page's journal into a new snapshot of `content` (the page with every frame
    /// applied), then starts a new journal generation on top of it. A crash after the snapshot
    /// and before the new journal leaves a journal that names the old snapshot: replay sees it is
    /// stale and does not apply it again.
    ///
    /// - Returns: the coded strokes of the new snapshot, or nil when compaction was skipped.
    @discardableResult
    func compact(_ id: UUID, _ p: inout PageJournal, content: PageContent, encoded: EncodedStrokes?,
                 preallocate: Bool) throws(StoreError) -> EncodedStrokes? {
        let (bytes, strokes) = try encodeSnapshot(id, content, reusing: encoded, onlyAppended: p.onlyAppended && !p.damaged)
        let identity = SnapshotIdentity(snapshot: bytes)
        if identity == p.snapshot {
            // Same length and CRC as the snapshot the journal applies to. If the bytes are the same
            // the journal changed nothing and only needs to start over; if they differ (a CRC
            // collision) the new journal could not tell the snapshots apart: keep the journal.
            let current = try SnapshotEngine.readBytes(package.pagePath(id), page: id, fileSystem: fileSystem)
            guard current == bytes else {
                findings.append(Finding(.info, package.pagePath(id), "compaction skipped: the new snapshot's CRC32C and length equal the old one's"))
                return nil
            }
        } else {
            try fileSystem.checked.writeAtomically(bytes, to: package.pagePath(id))
            p.snapshot = identity
            // The old journal is stale from here on: if the new one cannot be written now, the
            // next save must start it before appending, or its frames would land in a journal
            // that names the old snapshot and be ignored.
            p.header = nil
        }
        try startJournal(id, &p, preallocate: preallocate)
        return strokes
    }

    /// Compacts one page now (`lnote compact`, and every edited page at close), loading it first
    /// when needed. A damaged journal is kept aside first.
    ///
    /// - Returns: whether anything was written.
    @discardableResult
    package func compact(_ id: UUID) throws(StoreError) -> Bool {
        var p = try state(id)
        defer {
            if !p.damaged { p.replayed = nil }
            // The session keeps the coded strokes it has (of the snapshot before this one): a
            // later compaction from them codes the page whole.
            p.onlyAppended = false
            pages[id] = p
        }
        if p.damaged {
            try keepAside(id)
            let page = try damagedPage(id, p)
            p.damaged = false
            p.replayed = nil
            return try compact(id, &p, content: page.0, encoded: page.1, preallocate: false) != nil
        }
        if p.frameCount > 0 {
            let page = try replayedPage(id)
            return try compact(id, &p, content: page.0, encoded: page.1, preallocate: false) != nil
        }
        // A stale journal (a compaction that stopped before its new journal) is replaced.
        let fs = fileSystem
        if p.header == nil, try fs.checked.fileExists(package.journalPath(id)) {
            try startJournal(id, &p, preallocate: false)
            return true
        }
        return false
    }

    /// With `onlyAppended`, `content` is the snapshot `reusing` holds plus appended elements, and
    /// the snapshot's file is extended instead of coded again.
    func encodeSnapshot(_ id: UUID, _ content: PageContent, reusing: EncodedStrokes?, onlyAppended: Bool = false) throws(StoreError) -> ([UInt8], EncodedStrokes) {
        do {
            if onlyAppended, let reusing, let extended = try PageFile.encode(content, codec: codec, appendingTo: reusing) { return extended }
            return try PageFile.encode(content, codec: codec, reusing: reusing)
        } catch {
            throw .invalidArgument("page \(id): \(error)")
        }
    }

    // MARK: Removing and closing

    package func removePage(_ id: UUID) throws(StoreError) {
        if let fd = pages[id]?.fd { try? fileSystem.close(fd) }
        pages[id] = nil
        try fileSystem.checked.removeIfPresent(package.journalPath(id))
        try fileSystem.checked.removeIfPresent(package.pagePath(id))
        try fileSystem.checked.syncDirectory(package.pagesPath)
    }

    /// The page closed: its journal is merged into its snapshot (when `compactOnClose`) and its
    /// descriptor released; a failure is a warning and the journal stays as it is, still valid.
    package func pageUnloaded(_ id: UUID) {
        guard let p = pages[id] else { return }
        if options.compactOnClose && (p.damaged || p.frameCount > 0) {
            do { try compact(id) } catch {
                findings.append(Finding(.warning, package.journalPath(id), "compaction when the page closed failed (the journal stays valid): \(error)"))
            }
        }
        if let fd = pages[id]?.fd { try? fileSystem.close(fd) }
        pages[id] = nil
    }

    /// Merges every edited page's journal into its snapshot (leaving a header-only journal, so the
    /// generation keeps counting), then closes the journals.
    package func close() throws(StoreError) {
        if options.compactOnClose {
            for id in pages.keys.sortedByUUIDString() {
                let p = pages[id]!
                if p.damaged || p.frameCount > 0 { try compact(id) }
            }
        }
        for (id, p) in pages {
            if let fd = p.fd { try? fileSystem.close(fd) }
            pages[id]?.fd = nil
        }
    }
}

extension JournalEngine {
    /// The files of the journal form in `package`: the snapshot files and `pages/<id>.journal`.
    static func formFiles(in package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> Set<String> {
        guard try fs.checked.info(package.pagesPath)?.kind == .directory else { return [] }
        let scan = try PackageReader.scanPages(package, fileSystem: fs)
        return Set(scan.pageFiles.map(package.pagePath)).union(scan.journalFiles.map(package.journalPath))
    }
}

// MARK: Salvage

extension JournalEngine {
    /// A page whose snapshot does not decode: the snapshot's salvaged elements (SnapshotEngine's
    /// salvage, the damaged file kept in recovered/ with `keep`), then the journal's frames replayed
    /// on top as far as they apply. The journal is then treated as damaged: kept aside, and the page
    /// compacted into a new snapshot, before anything else is written.
    package func salvagePage(_ id: UUID, canvas: QuantizedSize, keep: Bool) throws(StoreError) -> SalvagedPage? {
        var salvaged = try SnapshotEngine.salvage(id, canvas: canvas, package: package, fileSystem: fileSystem, keep: keep)
        let snapshotBytes = try SnapshotEngine.readBytes(package.pagePath(id), page: id, fileSystem: fileSystem)
        let identity = SnapshotIdentity(snapshot: snapshotBytes)
        var content = salvaged.content
        var encoded: EncodedStrokes?
        var generation: UInt64 = 0
        let path = package.journalPath(id)
        if let base = try? PageFile.encode(content, codec: codec, reusing: nil),
           let bytes = try? fileSystem.readFile(path, limit: JournalFormat.maxPayload * 4) {
            let replay = JournalReplay.replaying(bytes, path: path, on: content, encoded: base.strokes, snapshot: identity, salvaging: true)
            record(replay.findings)
            content = replay.content
            encoded = replay.encoded
            generation = replay.header?.generation ?? 0
            if replay.frameCount > 0 {
                salvaged.finding.message += "; \(replay.frameCount) journal frame\(replay.frameCount == 1 ? "" : "s") applied on top (the page holds \(content.elements.count) elements)"
            }
        }
        salvaged.content = content
        if keep {
            var p = PageJournal(replayed: (content, encoded), snapshot: identity)
            p.lastGeneration = generation
            p.damaged = true
            pages[id] = p
        }
        return salvaged
    }
}
