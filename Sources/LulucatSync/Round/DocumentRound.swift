// One document's part of a round: read what changed here, join it with the heads that changed
// there, apply the join under the document's lock, then upload its blobs and its head.

import Foundation
import LulucatInk
import LulucatStore

struct DocumentRound {
    let sync: LibrarySync
    let id: UUID
    let base: Base?
    let heads: [(name: String, etag: String?, head: Head)]
    let localPresent: Bool
    let inTrash: Bool
    let options: SyncOptions
    /// The heads that went into the join (their ETags are recorded as seen).
    var joinedHeads: [(name: String, etag: String?)] = []

    /// The remote as this document's round sees it (an encrypted remote needs the document).
    var remote: any Remote { (sync.remote as? any DocumentScopedRemote)?.scoped(to: id) ?? sync.remote }
    var library: Library { sync.library }

    init(sync: LibrarySync, id: UUID, base: Base?, heads: [(name: String, etag: String?, head: Head)],
         localPresent: Bool, inTrash: Bool, options: SyncOptions) {
        self.sync = sync
        self.id = id
        self.base = base
        self.heads = heads
        self.localPresent = localPresent
        self.inTrash = inTrash
        self.options = options
    }

    /// Page contents by blob name, decoded once per round.
    var snapshots: [BlobName: PageSnapshot] = [:]
    /// Elements this device has in its own pages, by page, and their coded strokes.
    var localContent: [UUID: PageContent] = [:]
    var localEncoded: [UUID: EncodedStrokes] = [:]
    var localPrints: [UUID: [UUID: UInt64]] = [:]
    /// Of each page read this round, its strokes' fingerprints by their coded bytes' digests
    /// (saved in the base, read next round instead of fingerprinting again).
    var localPrintTables: [UUID: PrintTable] = [:]
    /// Of each page read this round, the strokes read hollow (id and ink, no samples: only good
    /// for copying their coded bytes into a blob, `PageFile.decodeKeepingStrokes(_:hollowing:)`).
    var localHollow: [UUID: Set<UUID>] = [:]
    /// The document's session while the round holds it.
    var session: DocumentSession?
    /// The session is the app's (the document was open in this process): the round merges into
    /// it, keeps what is edited there meanwhile, and never closes it.
    var appHeld = false
    /// Each page's and the document's `modified` (ms) when `readLocal` read them.
    var readPageModified: [UUID: Int64] = [:]
    var readDocModified: Int64 = 0
    /// Of an app's session, the pages whose `modified` is known to match the merged state after
    /// the apply (the others are read again next round).
    var appliedModified: [UUID: Int64] = [:]
    var uncertainPages: Set<UUID> = []
    /// The base this round saved last (for the index).
    var savedBase: Base?
    /// How many element fingerprints this round computed (the others came from print tables).
    var fingerprinted = 0
    /// The document read under its lock alone (`runUnderLock`), while the round holds it.
    var lockedReader: LockedDocumentReader?

    mutating func run(_ report: inout SyncReport) async throws {
        if localPresent, let s = library.openSession(id), !(await s.closing) {
            // Open in this process: merged through its session, which stays the app's.
            session = s
            appHeld = true
            report.paths[id] = .appSession
            try await runLocked(&report)
            return
        }
        if heads.isEmpty, base != nil, localPresent, !inTrash {
            // Changed here only: read under the lock, without a session (nothing is written to
            // the document), unless the join asks for a write, which takes the session below.
            var attempt = self
            var r = report
            do {
                if try await attempt.runUnderLock(&r) {
                    self = attempt
                    report = r
                    return
                }
            } catch {
                report = r
                throw error
            }
        }
        session = localPresent ? try await library.open(id, options: options.session) : nil
        report.paths[id] = .session
        do {
            try await runLocked(&report)
        } catch {
            if let s = session {
                // Whatever was applied is a merge result: keep it (the next round records it
                // again and joins to the same state).
                do { try await s.close() } catch { await s.abandon() }
            }
            throw error
        }
        if let s = session { try await s.close() }
    }

    /// The round of a closed document that changed only here (no head of it changed): its writer
    /// lock and a read of its changed pages, no session (no open marker, no repair, no save).
    /// Returns false, having written nothing, when the document needs a session after all (it
    /// was not shut down cleanly, a page needs repair, or the join would change it).
    mutating func runUnderLock(_ report: inout SyncReport) async throws -> Bool {
        guard try await prepareUnderLock(&report, uploadEarly: false) else { return false }
        try await finishUnderLock(&report)
        return true
    }

    /// What `prepareUnderLock` made: the join of the document's local changes with its base,
    /// coded as blobs and a head, not yet published.
    struct Prepared {
        var coded: (Head, [UUID: PageState], [(String, [UInt8])], Int)
        var pageModified: [UUID: Int64]
        var docModified: Int64
        var pushed: Bool
    }
    var prepared: Prepared?
    /// The blobs' uploads started by `prepareUnderLock(uploadEarly: true)`.
    var earlyUploads: Task<Int, any Error>?

    /// The first half of `runUnderLock`: takes the lock (kept until `finishUnderLock` or
    /// `discard`), reads, records, joins and codes. Writes nothing but, with `uploadEarly`, starts
    /// uploading the blobs (content-addressed: while the listing of heads is still on its way,
    /// LibrarySync's speculation; a blob no head comes to name is garbage, §8). Returns false,
    /// with the lock let go, when the document needs a session.
    mutating func prepareUnderLock(_ report: inout SyncReport, uploadEarly: Bool) async throws -> Bool {
        guard let base, let reader = try library.lockForSyncRead(id) else { return false }
        lockedReader = reader
        var keep = false
        defer {
            if !keep {
                reader.release()
                lockedReader = nil
            }
        }
        let baseState = base.documentState
        let stamp = Stamp(clock: baseState.clock + 1, device: sync.device)
        let localDoc: LocalDocument
        do { localDoc = try await readLocal(reader) } catch let e as StoreError {
            if case .documentInUse = e { throw e }
            return false  // a session reads it (and repairs what needs it)
        }
        guard let merged = LocalChanges.record(base: baseState, local: localDoc, stamp: stamp), merged.isLive,
              applyWritesNothing(merged, localDoc: localDoc, document: reader.document) else { return false }
        var pageModified: [UUID: Int64] = [:]
        for e in reader.document.pages { pageModified[e.id] = e.modified.milliseconds }
        let coded = try await headAndBlobs(for: merged, base: base, remoteStates: [])
        prepared = Prepared(coded: coded, pageModified: pageModified, docModified: reader.document.modified.milliseconds,
                            pushed: merged != baseState)
        let uploads = coded.2
        if uploadEarly, !uploads.isEmpty, !base.published || base.head != coded.0 {
            let remote = self.remote
            earlyUploads = Task { try await Self.putAll(remote, uploads) }
        }
        keep = true
        return true
    }

    /// The second half: the base, the blobs (or the wait for their early uploads), the head.
    mutating func finishUnderLock(_ report: inout SyncReport) async throws {
        defer {
            lockedReader?.release()
            lockedReader = nil
        }
        guard let p = prepared else { throw SyncError.local("document \(id): nothing prepared") }
        let uploading = earlyUploads
        earlyUploads = nil
        report.paths[id] = .underLock
        try await publish(p.coded, pageModified: p.pageModified, docModified: p.docModified, uploading: uploading, &report)
        if p.pushed { report.documentsPushed += 1 }
    }

    /// Lets a prepared round go without publishing anything: the lock released, its early
    /// uploads awaited (whatever they did is garbage until a head names those blobs).
    mutating func discard() async {
        lockedReader?.release()
        lockedReader = nil
        prepared = nil
        if let t = earlyUploads { _ = try? await t.value }
        earlyUploads = nil
    }

    /// Whether `apply` would leave the document as it is: the same pages in the same order, each
    /// read page holding the merged elements (ids and fingerprints) and canvas, the same title.
    func applyWritesNothing(_ merged: DocumentState, localDoc: LocalDocument, document: DocumentMetadata) -> Bool {
        let order = merged.orderedLivePageIDs
        guard document.pages.map(\.id) == order, document.title == merged.title.value else { return false }
        let localPages = Dictionary(localDoc.pages.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for pid in order {
            guard let lp = localPages[pid], let rec = merged.pages[pid] else { return false }
            let canvas = QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height)
            guard lp.canvas == canvas else { return false }
            let have = lp.elements ?? base?.states[pid].map { st in st.orderedIDs.map { ($0, st.elements[$0]!.fingerprint) } } ?? []
            let wanted = rec.state.orderedIDs
            guard have.count == wanted.count else { return false }
            for (h, w) in zip(have, wanted) where h.id != w || h.fingerprint != rec.state.elements[w]!.fingerprint { return false }
        }
        return true
    }

    mutating func runLocked(_ report: inout SyncReport) async throws {
        let baseState = base?.documentState
        // 1. The heads that changed, as states (their page blobs fetched when new to us).
        var remoteStates: [(Head, DocumentState)] = []
        for h in heads {
            do {
                remoteStates.append((h.head, try await state(of: h.head)))
                joinedHeads.append((h.name, h.etag))
            } catch {
                report.problems.append("document \(id): head \(h.name) left out of this round (both kept): \(error)")
            }
        }
        // 2. What changed here, under one new stamp.
        var clock = baseState?.clock ?? 0
        for (h, s) in remoteStates { clock = max(clock, h.clock, s.clock) }
        let stamp = Stamp(clock: clock + 1, device: sync.device)
        var localDoc: LocalDocument?
        if let s = session { localDoc = try await readLocal(s) }
        let recorded = LocalChanges.record(base: baseState, local: localDoc, stamp: stamp)
        // 3. The join.
        var merged = recorded
        for (_, s) in remoteStates { merged = merged.map { $0.joined(s) } ?? s }
        guard let merged else { return }
        let localChanged = recorded != baseState
        let remoteChanged = remoteStates.contains { merged != recorded && $0.1 != baseState }

        // 4. Apply here.
        if appHeld, let hook = options.beforeApplyingToOpenSession { await hook(id) }
        if !merged.isLive {
            if appHeld {
                // A document open in the app is not moved away under it: applied when it is closed.
                throw SyncError.local("open in a session and deleted on another device; moved to the trash when it is closed")
            }
            if let s = session {
                try await s.close()
                session = nil
                try library.moveToTrash(id)
                report.documentsTrashed += 1
            }
        } else {
            if session == nil {
                if inTrash {
                    try library.restoreFromTrash(id)
                    report.documentsRestored += 1
                } else {
                    let created = Date(timeIntervalSince1970: Double(merged.origin.created) / 1000)
                    try library.createSyncedDocument(id: id, title: merged.title.value, created: created,
                                                     engine: EngineKind(rawValue: merged.origin.engine) ?? .snapshot,
                                                     codec: SampleCodecID(name: merged.origin.codec) ?? .compact)
                    report.documentsCreated += 1
                }
                let s = try await library.open(id, options: options.session)
                session = s
                localDoc = try await readLocal(s)
            }
            report.pagesPulled += try await apply(merged, localDoc: localDoc!, to: session!)
        }

        // 5. Blobs, then the head.
        let coded = try await headAndBlobs(for: merged, base: base, remoteStates: remoteStates)
        var pageModified: [UUID: Int64] = [:]
        var docModified: Int64 = 0
        if let s = session, appHeld {
            // The app's session: its one writer saves (with whatever was edited meanwhile). A page
            // counts as unchanged since this state only when the apply said so or nothing was
            // applied to it; the others (and the document) are read again next round.
            try await s.flush()
            let entries = await s.pageEntries()
            for e in entries {
                if uncertainPages.contains(e.id) { pageModified[e.id] = -1 }
                else if let m = appliedModified[e.id] { pageModified[e.id] = m }
                else if let m = readPageModified[e.id] { pageModified[e.id] = m }
                else { pageModified[e.id] = -1 }
            }
            let untouched = uncertainPages.isEmpty && appliedModified.isEmpty && Set(entries.map(\.id)) == Set(readPageModified.keys)
            docModified = untouched ? readDocModified : -1
        } else if let s = session {
            try await s.save()
            for e in await s.pageEntries() { pageModified[e.id] = e.modified.milliseconds }
            docModified = await s.document.modified.milliseconds
        }
        try await publish(coded, pageModified: pageModified, docModified: docModified, &report)
        if localChanged { report.documentsPushed += 1 }
        if remoteChanged || base == nil && !localPresent { report.documentsPulled += 1 }
        if localChanged && !remoteStates.isEmpty { report.documentsMerged += 1 }
    }

    /// Step 5 of a round once the document holds the join: the base durably (unpublished), the
    /// blobs, the head, then the base marked published.
    mutating func publish(_ coded: (Head, [UUID: PageState], [(String, [UInt8])], Int), pageModified: [UUID: Int64],
                          docModified: Int64, uploading: Task<Int, any Error>? = nil, _ report: inout SyncReport) async throws {
        let (head, newStates, uploads, pageBlobs) = coded
        var next = Base(head: head, states: newStates, docModified: docModified, pageModified: pageModified, published: false)
        next.headBytes = head.encode()
        // The tables of the pages read now; the others' as the base had them.
        for pid in newStates.keys {
            if var t = localPrintTables[pid] {
                t.base64 = Data(t.encode()).base64EncodedString()
                next.prints[pid] = t
            } else if let t = base?.prints[pid] {
                next.prints[pid] = t
            }
        }
        report.fingerprinted += fingerprinted
        report.readHollow += localHollow.values.reduce(0) { $0 + $1.count }
        let store = sync.store
        func save(_ b: Base, previous: Base?, durable: Bool) throws -> [UUID: (state: PageState, base64: String)] {
            try store.save(b, previous: previous, durable: durable)
        }
        let needsPublish = base == nil || !(base!.published) || base!.head != head
        if needsPublish {
            // The base durably, unpublished, before the head: a head on the remote is never
            // ahead of the base its stamps came from (a crash after the head's PUT must not reuse
            // its stamp). The blobs go up while the base is written: they are content-addressed
            // and immutable, so one written before the base (and never named, after a crash or
            // a failure) is only garbage (§8). The head goes up only once both are done.
            // A failure leaves the base unpublished: the next round publishes it even if
            // nothing else changes.
            if let task = uploading {
                // Started before the listing was in (`prepareUnderLock`).
                do {
                    next.savedStates = try save(next, previous: base, durable: true)
                } catch {
                    _ = try? await task.value
                    throw error
                }
                report.blobsUploaded += try await task.value
            } else if uploads.isEmpty {
                next.savedStates = try save(next, previous: base, durable: true)
            } else {
                let remote = self.remote
                async let uploaded = Self.putAll(remote, uploads)
                do {
                    next.savedStates = try save(next, previous: base, durable: true)
                } catch {
                    _ = try? await uploaded
                    throw error
                }
                report.blobsUploaded += try await uploaded
            }
            try await put(LibrarySync.headsFolder + "/" + Head.fileName(document: id, device: sync.device), next.headBytes)
            report.pagesPushed += pageBlobs
            let unpublished = next
            next.published = true
            // Not synced: rolled back, the same head is published again.
            _ = try save(next, previous: unpublished, durable: false)
        } else {
            next.published = true
            // The same head as the base's: a rollback only makes the next round read the pages again.
            _ = try save(next, previous: base, durable: false)
        }
        savedBase = next
    }

    func put(_ path: String, _ bytes: [UInt8]) async throws {
        do { try await remote.put(path, bytes) } catch { throw SyncError.remote(error) }
    }

    /// Uploads blobs one after the other; returns how many.
    static func putAll(_ remote: any Remote, _ uploads: [(String, [UInt8])]) async throws -> Int {
        for (path, bytes) in uploads {
            do { try await remote.put(path, bytes) } catch { throw SyncError.remote(error) }
        }
        return uploads.count
    }

    // MARK: Reading

    /// A head as a state: its pages' states from their blobs (fetched unless the base has them).
    mutating func state(of head: Head) async throws -> DocumentState {
        var pages: [UUID: PageRecord] = [:]
        for (pid, p) in head.pages {
            let st: PageState
            if let b = base, b.head.pages[pid]?.blob == p.blob, let known = b.states[pid] {
                st = known
            } else {
                st = try await snapshot(p.blob).state
            }
            pages[pid] = PageRecord(fields: p.fields, removed: p.removed, state: st)
        }
        return DocumentState(id: head.document, title: head.title, origin: head.origin, deleted: head.deleted,
                             assets: head.assets, pages: pages)
    }

    /// A page blob, fetched, checked against its name and decoded once per round.
    mutating func snapshot(_ name: BlobName) async throws -> PageSnapshot {
        if let s = snapshots[name] { return s }
        let bytes = try await fetchBlob(name)
        let snap = try PageBlob.decode(bytes)
        snapshots[name] = snap
        return snap
    }

    func fetchBlob(_ name: BlobName) async throws -> [UInt8] {
        let (bytes, _) = try await remote.get(LibrarySync.blobsFolder + "/" + name.hex, maxBytes: PageBlob.maxBytes)
        guard BlobName(of: bytes) == name else { throw SyncError.local("blob \(name.hex) is damaged: its SHA-256 is not its name") }
        return bytes
    }

    /// The document as it is here, reading only the pages that changed since the base.
    mutating func readLocal(_ s: some SyncReadable) async throws -> LocalDocument {
        let doc = await s.syncDocument
        readDocModified = doc.modified.milliseconds
        var pages: [LocalPage] = []
        for e in doc.pages {
            readPageModified[e.id] = e.modified.milliseconds
            let canvas = e.canvasSize
            if let b = base, b.pageModified[e.id] == e.modified.milliseconds, let rec = b.head.pages[e.id],
               rec.fields.value.width == canvas.width, rec.fields.value.height == canvas.height, b.states[e.id] != nil {
                pages.append(LocalPage(id: e.id, canvas: canvas, elements: nil))
                continue
            }
            let known = base?.prints[e.id]?.entries ?? [:]
            let (content, encoded, hollow): (PageContent, EncodedStrokes?, Set<UUID>)
            if s.readsHollow, !known.isEmpty {
                // Strokes whose coded bytes we fingerprinted before are not decoded: the blob
                // copies their bytes (the same codec), and their fingerprints are in the table.
                (content, encoded, hollow) = try await s.syncContent(of: e.id) { id, digest, codec in
                    codec == .compact && known[id]?.digest == digest
                }
            } else {
                (content, encoded) = try await s.syncContent(of: e.id)
                hollow = []
            }
            // Set or cleared: a page read again (through a session, after a head changed
            // elsewhere) has no hollow stroke left from the earlier read.
            localHollow[e.id] = hollow.isEmpty ? nil : hollow
            localContent[e.id] = content
            if let encoded { localEncoded[e.id] = encoded }
            let prints: [(id: UUID, fingerprint: UInt64)]
            if encoded == nil {
                prints = Self.fingerprints(content.elements)
                fingerprinted += prints.count
            } else {
                let (p, table, computed) = Self.fingerprints(content.elements, encoded: encoded!, known: known, hollow: hollow)
                // A hollow stroke has no samples to fingerprint: its entry must be there.
                guard hollow.allSatisfy({ table[$0] != nil }) else { throw SyncError.local("page \(e.id): a stroke read hollow has no fingerprint") }
                prints = p
                fingerprinted += computed
                localPrintTables[e.id] = PrintTable(entries: table, base64: nil)
            }
            localPrints[e.id] = Dictionary(prints, uniquingKeysWith: { a, _ in a })
            pages.append(LocalPage(id: e.id, canvas: content.canvasSize, elements: prints))
        }
        var assets: [UUID: AssetRef] = [:]
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: s.package.assetsPath)) ?? [] {
            guard let (aid, ext) = DocumentPackage.parseName(name, extensions: DocumentPackage.assetExtensions),
                  base?.head.assets[aid] == nil else { continue }
            let bytes = try library.fileSystem.readFile(s.package.assetPath(aid, ext: ext))
            assets[aid] = AssetRef(blob: BlobName(of: bytes), ext: ext)
        }
        let origin = DocumentOrigin(created: doc.created.milliseconds, engine: doc.engine.rawValue, codec: doc.codec.description)
        return LocalDocument(id: id, title: doc.title, origin: origin, pages: pages, assets: assets)
    }

    /// Each element's fingerprint, in order, taken from `known` for a stroke whose coded bytes
    /// have the digest recorded there (the fingerprint definition is unchanged: it was computed
    /// from those bytes' stroke); the others are computed. Also returns the page's new print
    /// table and how many fingerprints were computed.
    static func fingerprints(_ elements: [Element], encoded: EncodedStrokes, known: [UUID: StrokePrint], hollow: Set<UUID> = [])
        -> ([(id: UUID, fingerprint: UInt64)], [UUID: StrokePrint], Int) {
        var out: [(id: UUID, fingerprint: UInt64)] = []
        out.reserveCapacity(elements.count)
        var table: [UUID: StrokePrint] = [:]
        table.reserveCapacity(elements.count)
        var missing: [Int] = []
        var digests: [Int: UInt64] = [:]
        for (i, e) in elements.enumerated() {
            if !hollow.isEmpty, case .stroke(let st) = e, st.samples.isEmpty, hollow.contains(st.id), let k = known[st.id] {
                // Read hollow because its digest is the table's (checked by the read itself).
                out.append((st.id, k.fingerprint))
                table[st.id] = k
                continue
            }
            if case .stroke(let st) = e, let d = encoded.digest(of: st) {
                if let k = known[st.id], k.digest == d {
                    out.append((st.id, k.fingerprint))
                    table[st.id] = k
                    continue
                }
                digests[i] = d
            }
            missing.append(i)
            out.append((e.id, 0))
        }
        if !missing.isEmpty {
            let computed = fingerprints(missing.map { elements[$0] })
            for (k, i) in missing.enumerated() {
                out[i].fingerprint = computed[k].fingerprint
                if let d = digests[i] { table[out[i].id] = StrokePrint(digest: d, fingerprint: computed[k].fingerprint) }
            }
        }
        return (out, table, missing.count)
    }

    /// Each element's fingerprint, in order; a large page's are computed on every core (the same
    /// values, in a fraction of the time).
    static func fingerprints(_ elements: [Element]) -> [(id: UUID, fingerprint: UInt64)] {
        let n = elements.count
        guard n >= 256 else { return elements.map { ($0.id, PageBlob.fingerprint($0)) } }
        var prints = [UInt64](repeating: 0, count: n)
        let chunks = min(ProcessInfo.processInfo.activeProcessorCount * 2, 16)
        prints.withUnsafeMutableBufferPointer { out in
            nonisolated(unsafe) let out = out
            DispatchQueue.concurrentPerform(iterations: chunks) { c in
                for i in stride(from: c * n / chunks, to: (c + 1) * n / chunks, by: 1) { out[i] = PageBlob.fingerprint(elements[i]) }
            }
        }
        return zip(elements, prints).map { ($0.id, $1) }
    }

    // MARK: Applying

    /// The content of a merged page, from what this device has or fetched.
    mutating func content(of pid: UUID, in merged: DocumentState) async throws -> PageContent {
        try await contentAndCodedStrokes(of: pid, in: merged).0
    }

    /// The merged page's content, and the coded strokes of ours it may copy (only strokes taken
    /// from this device's page as read, whose samples are the merged ones).
    mutating func contentAndCodedStrokes(of pid: UUID, in merged: DocumentState) async throws -> (PageContent, EncodedStrokes?) {
        let (content, coded, _) = try await contentAndCodedStrokes(of: pid, in: merged, droppingMissing: false)
        return (content, coded)
    }

    /// With `droppingMissing`, elements no source holds are left out and returned instead of
    /// failing (a removed page whose only copy was a blob of ours that never reached the remote).
    mutating func contentAndCodedStrokes(of pid: UUID, in merged: DocumentState, droppingMissing: Bool) async throws
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let rec = merged.pages[pid]!
        var out = PageContent(canvasSize: QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height))
        var missing: Set<UUID> = []
        // One index per source, not a scan per element.
        var localIndex: [UUID: Element] = [:]
        localIndex.reserveCapacity(localContent[pid]?.elements.count ?? 0)
        for e in localContent[pid]?.elements ?? [] { localIndex[e.id] = e }
        let order = rec.state.orderedIDs
        var elements: [Element] = []
        elements.reserveCapacity(order.count)
        var fromLocal = Set<UUID>()
        fromLocal.reserveCapacity(localIndex.count)
        for eid in order {
            let entry = rec.state.elements[eid]!
            if let e = localIndex[eid], (localPrints[pid]?[eid] ?? PageBlob.fingerprint(e)) == entry.fingerprint {
                elements.append(e)
                fromLocal.insert(eid)
                continue
            }
            var found: Element?
            for s in snapshots.values where s.state.elements[eid]?.stamp == entry.stamp { found = s.elements[eid]; break }
            if let f = found { elements.append(f) } else { missing.insert(eid); elements.append(.unknown(try UnknownElement(kind: 0, payload: Data(count: 16)))) }
        }
        var currentElements: [Element]?
        if !missing.isEmpty, let s = session, await s.pageIDs().contains(pid) {
            currentElements = try await s.content(of: pid).elements
        } else if !missing.isEmpty, session == nil, let r = lockedReader, r.document.pages.contains(where: { $0.id == pid }) {
            currentElements = try r.contentForSync(of: pid).0.elements
        }
        if let currentElements {
            // The page as it is here now (it was not read this round, or has been merged since).
            var current: [UUID: Element] = [:]
            for e in currentElements { current[e.id] = e }
            for (i, eid) in order.enumerated() where missing.contains(eid) {
                if let e = current[eid], PageBlob.fingerprint(e) == rec.state.elements[eid]!.fingerprint {
                    elements[i] = e
                    missing.remove(eid)
                }
            }
        }
        if !missing.isEmpty {
            // Elements we hold only in our last published blob of the page (removed here, say).
            if let b = base?.head.pages[pid]?.blob, base?.published == true { _ = try await snapshot(b) }
            for (i, eid) in order.enumerated() where missing.contains(eid) {
                let entry = rec.state.elements[eid]!
                guard let f = snapshots.values.lazy.compactMap({ $0.state.elements[eid]?.stamp == entry.stamp ? $0.elements[eid] : nil }).first else {
                    if droppingMissing { continue }
                    throw SyncError.local("page \(pid): element \(eid) of version \(entry.stamp) is in no blob read this round")
                }
                elements[i] = f
                missing.remove(eid)
            }
        }
        if droppingMissing && !missing.isEmpty { elements = zip(order, elements).filter { !missing.contains($0.0) }.map(\.1) }
        out.elements = elements
        var coded = localEncoded[pid]
        if coded != nil, let lc = localContent[pid] { coded!.forget(lc.elements.map(\.id).filter { !fromLocal.contains($0) }) }
        return (out, coded, droppingMissing ? missing : [])
    }

    /// Makes the local document what the join says; returns how many pages it wrote.
    mutating func apply(_ merged: DocumentState, localDoc: LocalDocument, to s: DocumentSession) async throws -> Int {
        var written = 0
        let order = merged.orderedLivePageIDs
        let live = Set(order)
        let localPages = Dictionary(localDoc.pages.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        /// A page as this round read it (what the merge took as this device's), as ids and fingerprints.
        func seen(_ lp: LocalPage) -> [(id: UUID, fingerprint: UInt64)] {
            lp.elements ?? base?.states[lp.id].map { st in st.orderedIDs.map { ($0, st.elements[$0]!.fingerprint) } } ?? []
        }
        let fingerprint: @Sendable (Element) -> UInt64 = { PageBlob.fingerprint($0) }
        for p in await s.pageIDs() where !live.contains(p) {
            if appHeld {
                // Only a page this round read, and unchanged since: one added or edited in the
                // app meanwhile stays (an edit wins over a removal; the next round publishes it).
                guard let lp = localPages[p] else { continue }
                if try await s.removeSyncedPage(p, seen: (seen(lp), lp.canvas), fingerprint: fingerprint) { written += 1 }
                else { uncertainPages.insert(p) }
            } else {
                try await s.removePage(p)
                written += 1
            }
        }
        for (i, pid) in order.enumerated() {
            let rec = merged.pages[pid]!
            let canvas = QuantizedSize(width: rec.fields.value.width, height: rec.fields.value.height)
            let wanted = rec.state.orderedIDs.map { ($0, rec.state.elements[$0]!.fingerprint) }
            if let lp = localPages[pid] {
                let have = seen(lp)
                if lp.canvas == canvas && have.map(\.0) == wanted.map(\.0) && have.map(\.1) == wanted.map(\.1) { continue }
                let content = try await self.content(of: pid, in: merged)
                try await ensureAssets(content, merged, s)
                if appHeld {
                    guard await s.pageIDs().contains(pid) else { continue }  // removed in the app meanwhile
                    if let m = try await s.mergeSyncedContent(of: pid, seen: (have, lp.canvas), merged: content, fingerprint: fingerprint) {
                        appliedModified[pid] = m.milliseconds
                    } else {
                        uncertainPages.insert(pid)
                    }
                } else {
                    try await s.mergeSyncedContent(of: pid, seen: nil, merged: content, fingerprint: fingerprint)
                }
            } else {
                let content = try await self.content(of: pid, in: merged)
                try await ensureAssets(content, merged, s)
                let at = min(i, await s.pageIDs().count)
                try await s.insertSyncedPage(id: pid, content: content, at: at)
                if appHeld { uncertainPages.insert(pid) }
            }
            written += 1
        }
        if appHeld {
            // Pages added in the app meanwhile keep their places; the merged pages take the
            // places merged pages hold, in the merged order.
            let ids = await s.pageIDs()
            let slots = ids.indices.filter { live.contains(ids[$0]) }
            let placed = order.filter { Set(ids).contains($0) }
            var want = ids
            for (k, slot) in slots.enumerated() where k < placed.count { want[slot] = placed[k] }
            for (i, pid) in want.enumerated() {
                let now = await s.pageIDs()
                if i < now.count, now[i] != pid, now.contains(pid) { try await s.movePage(pid, to: i) }
            }
            let title = await s.title
            if title != merged.title.value && title == localDoc.title { try await s.rename(to: merged.title.value) }
        } else {
            for (i, pid) in order.enumerated() {
                let ids = await s.pageIDs()
                if ids[i] != pid { try await s.movePage(pid, to: i) }
            }
            if await s.title != merged.title.value { try await s.rename(to: merged.title.value) }
        }
        return written
    }

    /// Writes the assets a page shows and this device lacks, from their blobs, before the page.
    func ensureAssets(_ content: PageContent, _ merged: DocumentState, _ s: DocumentSession) async throws {
        for aid in content.assetIDs {
            guard let ref = merged.assets[aid] else { continue }
            let path = s.package.assetPath(aid, ext: ref.ext)
            if (try? library.fileSystem.info(path)) != nil { continue }
            let bytes = try await fetchBlob(ref.blob)
            try await s.importSyncedAsset(Data(bytes), id: aid, fileExtension: ref.ext)
        }
    }

    // MARK: Publishing

    /// Our head for the merged state, the page states to keep, and the blobs to upload first
    /// (assets, then pages) that no head we know names.
    mutating func headAndBlobs(for merged: DocumentState, base: Base?, remoteStates: [(Head, DocumentState)])
        async throws -> (Head, [UUID: PageState], [(String, [UInt8])], Int) {
        var known = Set<BlobName>()
        if let b = base, b.published {
            for p in b.head.pages.values { known.insert(p.blob) }
            for a in b.head.assets.values { known.insert(a.blob) }
        }
        for (h, _) in remoteStates {
            for p in h.pages.values { known.insert(p.blob) }
            for a in h.assets.values { known.insert(a.blob) }
        }
        var uploads: [(String, [UInt8])] = []
        var pages: [UUID: HeadPage] = [:]
        var states: [UUID: PageState] = [:]
        var pageUploads: [(String, [UInt8])] = []
        for (pid, rec) in merged.pages {
            states[pid] = rec.state
            var name: BlobName?
            if let b = base, let bp = b.head.pages[pid], b.states[pid] == rec.state { name = bp.blob }
            if name == nil {
                for (h, s) in remoteStates where s.pages[pid]?.state == rec.state { name = h.pages[pid]!.blob; break }
            }
            if name == nil {
                let (content, coded, lost) = try await contentAndCodedStrokes(of: pid, in: merged, droppingMissing: !rec.isLive)
                var byID: [UUID: Element] = [:]
                byID.reserveCapacity(content.elements.count)
                for e in content.elements { byID[e.id] = e }
                var st = rec.state
                for id in lost { st.elements[id] = nil }
                states[pid] = st
                let bytes = try PageBlob.encode(state: st, canvas: content.canvasSize, elements: byID, reusing: coded,
                                                hollow: localHollow[pid] ?? [])
                let n = BlobName(of: bytes)
                name = n
                if !known.contains(n) { pageUploads.append((LibrarySync.blobsFolder + "/" + n.hex, bytes)); known.insert(n) }
            } else if !known.contains(name!) {
                // Named by an unpublished base of ours: upload it again from what we hold. Of a
                // removed page, what no source holds any more is left out (it was only here).
                let (content, coded, lost) = try await contentAndCodedStrokes(of: pid, in: merged, droppingMissing: !rec.isLive)
                var byID: [UUID: Element] = [:]
                byID.reserveCapacity(content.elements.count)
                for e in content.elements { byID[e.id] = e }
                var st = rec.state
                for id in lost { st.elements[id] = nil }
                states[pid] = st
                let bytes = try PageBlob.encode(state: st, canvas: content.canvasSize, elements: byID, reusing: coded,
                                                hollow: localHollow[pid] ?? [])
                name = BlobName(of: bytes)
                pageUploads.append((LibrarySync.blobsFolder + "/" + name!.hex, bytes))
                known.insert(name!)
            }
            pages[pid] = HeadPage(fields: rec.fields, removed: rec.removed, blob: name!)
        }
        if let session = localPresentPackage {
            for (aid, ref) in merged.assets where !known.contains(ref.blob) {
                let path = session.assetPath(aid, ext: ref.ext)
                guard let bytes = try? library.fileSystem.readFile(path), BlobName(of: bytes) == ref.blob else { continue }
                uploads.append((LibrarySync.blobsFolder + "/" + ref.blob.hex, bytes))
                known.insert(ref.blob)
            }
        }
        let pageBlobs = pageUploads.count
        uploads += pageUploads
        let head = Head(document: id, device: sync.device, clock: merged.clock, title: merged.title, origin: merged.origin,
                        deleted: merged.deleted, assets: merged.assets, pages: pages)
        return (head, states, uploads, pageBlobs)
    }

    var localPresentPackage: DocumentPackage? {
        let p = library.package(id)
        return (try? library.fileSystem.info(p.path)) != nil ? p : nil
    }
}


/// What a round reads of a document: through its session, or under its lock alone.
protocol SyncReadable: Sendable {
    var syncDocument: DocumentMetadata { get async }
    var package: DocumentPackage { get }
    func syncContent(of page: UUID) async throws -> (PageContent, EncodedStrokes?)
    /// Whether `syncContent(of:hollowing:)` may read strokes hollow: only a reader whose content
    /// nothing applies or saves (the lock-only read, whose join writes nothing).
    var readsHollow: Bool { get }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws
        -> (PageContent, EncodedStrokes?, Set<UUID>)
}

extension DocumentSession: SyncReadable {
    var syncDocument: DocumentMetadata { get async { document } }
    func syncContent(of page: UUID) async throws -> (PageContent, EncodedStrokes?) { try contentForSync(of: page) }
    nonisolated var readsHollow: Bool { false }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let (c, e) = try contentForSync(of: page)
        return (c, e, [])
    }
}

extension LockedDocumentReader: SyncReadable {
    var syncDocument: DocumentMetadata { get async { document } }
    func syncContent(of page: UUID) async throws -> (PageContent, EncodedStrokes?) { try contentForSync(of: page) }
    var readsHollow: Bool { true }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        try contentForSync(of: page, hollowing: hollowing)
    }
}
