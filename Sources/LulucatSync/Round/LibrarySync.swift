// A sync round of a library with a remote (docs/sync.md §6): list the heads, merge each document
// that changed here or there under its writer lock, apply, then upload blobs before the head.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreSQLite

public struct SyncOptions: Sendable {
    /// A round that would move more documents than this to the trash stops before applying anything.
    public var trashLimit: Int
    /// Options of the sessions the round opens (thumbnails, journal thresholds).
    public var session: SessionOptions
    /// For tests: runs after a document open in this process was read and joined and before the
    /// join is applied to it, where an app's edits race the round.
    var beforeApplyingToOpenSession: (@Sendable (UUID) async -> Void)?
    /// Garbage collection of unreferenced blobs (§8), at the end of a round that did work, when
    /// due; nil: never in a round (`LibrarySync.collectGarbage` still can).
    public var garbage: GarbageOptions?
    public init(trashLimit: Int = 5, session: SessionOptions = SessionOptions(autosaveDelay: nil),
                garbage: GarbageOptions? = GarbageOptions()) {
        self.trashLimit = trashLimit
        self.session = session
        self.garbage = garbage
    }
}

/// Where a round is: `done` of `total` documents that needed work.
public struct SyncProgress: Sendable {
    public var done: Int
    public var total: Int
    public var document: UUID?
}

/// What a round did.
public struct SyncReport: Sendable, CustomStringConvertible {
    public var requests = 0
    public var bytesSent = 0
    public var bytesReceived = 0
    public var documentsChecked = 0
    public var documentsPulled = 0
    public var documentsPushed = 0
    public var documentsMerged = 0
    public var documentsCreated = 0
    public var documentsTrashed = 0
    public var documentsRestored = 0
    public var pagesPulled = 0
    public var pagesPushed = 0
    public var blobsUploaded = 0
    /// Documents left alone this round, and why (open in a session, a head that cannot be read...).
    public var skipped: [UUID: String] = [:]
    /// Problems that kept a head or a page out of the merge (both kept).
    public var problems: [String] = []
    /// The garbage collection this round ran, if it ran one.
    public var garbage: GarbageReport?
    /// Element fingerprints computed this round (the rest came from the bases' print tables).
    public var fingerprinted = 0
    /// Strokes read hollow this round (their samples not decoded: their bytes copied into a blob).
    public var readHollow = 0
    /// How this round reached each document it worked on (the tests and the crash check tell
    /// the paths apart).
    package var paths: [UUID: DocumentPath] = [:]

    public var description: String {
        var s = "\(documentsChecked) documents checked: \(documentsPulled) pulled, \(documentsPushed) pushed, "
            + "\(documentsMerged) merged (\(documentsCreated) new here, \(documentsTrashed) to the trash, \(documentsRestored) restored); "
            + "pages \(pagesPulled) pulled, \(pagesPushed) pushed; \(requests) requests, \(bytesSent) bytes sent, \(bytesReceived) received"
        for (id, why) in skipped.sorted(by: { $0.key.uuidString < $1.key.uuidString }) { s += "\nskipped \(id): \(why)" }
        for p in problems { s += "\nproblem: \(p)" }
        return s
    }
}

/// How a round reached a document.
package enum DocumentPath: Sendable, Equatable {
    /// Changed here only, closed: read under its writer lock, no session.
    case underLock
    /// Through a session the round opened.
    case session
    /// Through the app's own session (open in this process).
    case appSession
}

public enum SyncError: Error, CustomStringConvertible {
    case massDeletion(count: Int, limit: Int, documents: [UUID])
    case remote(RemoteError)
    case local(String)

    public var description: String {
        switch self {
        case let .massDeletion(count, limit, _):
            return "this sync would move \(count) documents to the trash (more than \(limit)); nothing was changed. "
                + "If that is what you want, run it again with a larger limit (lnote sync --trash-limit N)"
        case .remote(let e): return e.description
        case .local(let m): return m
        }
    }
}

/// A flag one task sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Syncs one library with one remote. One round at a time per library.
public struct LibrarySync: Sendable {
    public let library: Library
    public let remote: any Remote
    public let device: UUID
    let store: SyncStateStore

    /// Enables the SQLite engine (`Library.enableSQLiteEngine()`): a synced library holds the
    /// documents of every device, whichever engine made them.
    public init(library: Library, remote: any Remote) throws {
        Library.enableSQLiteEngine()
        self.library = library
        self.remote = remote
        try library.prepare()
        store = SyncStateStore(library: library)
        try store.prepare()
        device = try store.deviceID()
    }

    static let headsFolder = "heads"
    static let blobsFolder = "blobs"

    /// One round. Cancellable between documents (a document is applied and published whole).
    public func sync(options: SyncOptions = SyncOptions(),
                     progress: @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
        let stats0 = (remote.statistics.requests, remote.statistics.bytesSent, remote.statistics.bytesReceived)
        var report = SyncReport()
        // 1. The heads: one PROPFIND, on its way while the local side is read (2) and while the
        //    documents that changed only here are prepared (speculation, below).
        let remote = self.remote
        let listingAnswered = Flag()
        async let listedAhead = Self.attempt { () async throws(RemoteError) in
            defer { listingAnswered.set() }
            return try await remote.list(Self.headsFolder)
        }
        var seen = store.seen()
        // 2. The local side: manifests only. A document needs work for a local reason when it
        //    has no base, or its index entry (or base) says it changed here or was not published.
        let local = try library.list()
        let localByID = Dictionary(local.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let trashed = Set(((try? library.trashedDocuments()) ?? []).map(\.id))
        let baseIDs = Set(store.baseIDs())
        var localWork = Set<UUID>()
        var bases: [UUID: Base] = [:]
        // The index tells, without reading a base, whether its document needs work; a base is
        // read only when its entry is missing or describes another version of the file.
        var index = store.index()
        var indexChanged = false
        for id in Set(localByID.keys).union(baseIDs).sorted(by: { $0.uuidString < $1.uuidString }) {
            if !baseIDs.contains(id) { localWork.insert(id); continue }
            var summary = index[id]
            if summary == nil || summary!.file != store.baseFileIdentity(id) {
                guard let base = store.base(id) else { localWork.insert(id); continue }
                bases[id] = base
                summary = store.indexEntry(for: base)
                index[id] = summary
                indexChanged = true
                if summary == nil { localWork.insert(id); continue }
            }
            let entry = localByID[id]
            var modified = entry?.modified.milliseconds
            // Open in this process: its edits are in memory before the manifest has them.
            if entry != nil, let s = library.openSession(id) { modified = await s.document.modified.milliseconds }
            if !summary!.published || (entry == nil) == summary!.live || (entry != nil && modified != summary!.docModified) {
                localWork.insert(id)
            }
        }
        // Speculation: a closed document that changed here is read, joined with its base and
        // coded under its lock, and its blobs start going up, before the listing says whether a
        // head of it changed elsewhere. If none did (the usual case) the round goes on from there;
        // if one did, the prepared work is let go (its blobs, if any went up, are garbage, §8)
        // and the document is merged as below. Nothing is written locally before the listing.
        var prepared: [UUID: DocumentRound] = [:]
        do {
            for id in localWork.sorted(by: { $0.uuidString < $1.uuidString }) where prepared.count < Self.speculationLimit {
                guard baseIDs.contains(id), localByID[id] != nil, !trashed.contains(id), library.openSession(id) == nil else { continue }
                if bases[id] == nil { bases[id] = store.base(id) }
                guard bases[id] != nil else { continue }
                var round = DocumentRound(sync: self, id: id, base: bases[id], heads: [], localPresent: true, inTrash: false, options: options)
                // Whatever goes wrong here is met again, and reported, by the document's own round.
                // Its blobs start going up now only while the listing is still on its way: once it
                // is in, they wait for it to say no head of the document changed (otherwise they
                // would be sent for nothing), and go up while the base is written.
                if (try? await round.prepareUnderLock(&report, uploadEarly: !listingAnswered.isSet)) == true { prepared[id] = round }
            }
        }
        let listed = await listedAhead
        do {
            return try await finishRound(listed: listed, report: report, seen: &seen, localByID: localByID, trashed: trashed,
                                         baseIDs: baseIDs, localWork: localWork, bases: &bases, index: &index,
                                         indexChanged: indexChanged, prepared: &prepared, stats0: stats0, options: options,
                                         progress: progress)
        } catch {
            for id in Array(prepared.keys) { await prepared[id]!.discard() }
            throw error
        }
    }

    /// Documents prepared before the listing at most (each holds its lock and its coded page).
    static let speculationLimit = 4

    /// A round once the listing of heads is in: steps 1 (the listing's result) to 6.
    func finishRound(listed: Result<[RemoteEntry], RemoteError>, report: SyncReport, seen: inout [String: String],
                     localByID: [UUID: LibraryEntry], trashed: Set<UUID>, baseIDs: Set<UUID>, localWork: Set<UUID>,
                     bases: inout [UUID: Base], index: inout [UUID: SyncStateStore.IndexEntry], indexChanged: Bool,
                     prepared: inout [UUID: DocumentRound], stats0: (Int, Int, Int), options: SyncOptions,
                     progress: @Sendable (SyncProgress) -> Void) async throws -> SyncReport {
        var report = report
        var indexChanged = indexChanged
        var entries: [RemoteEntry] = []
        switch listed {
        case .success(let e): entries = e
        case .failure(.notFound):
            // A remote without heads/ (new, or emptied): nothing prepared goes on.
            for id in Array(prepared.keys) { await prepared[id]!.discard() }
            prepared = [:]
            try await remote.makeFolder(Self.headsFolder)
            try await remote.makeFolder(Self.blobsFolder)
        case .failure(let e): throw SyncError.remote(e)
        }
        var changed: [UUID: [(name: String, etag: String?)]] = [:]
        for e in entries where !e.isFolder {
            guard let (doc, dev) = Head.parseFileName(e.name) else { continue }
            if dev == device { continue }
            let etag = RemotePath.normalizedETag(e.etag)
            if etag == nil || seen[e.name] != etag { changed[doc, default: []].append((e.name, etag)) }
        }
        var work: [UUID] = []
        for id in Set(localByID.keys).union(baseIDs).union(changed.keys).sorted(by: { $0.uuidString < $1.uuidString }) {
            report.documentsChecked += 1
            if changed[id] != nil || localWork.contains(id) { work.append(id) }
        }
        // Prepared, but a head of it changed: merged from the start instead.
        for id in Array(prepared.keys) where changed[id] != nil {
            await prepared[id]!.discard()
            prepared[id] = nil
        }
        if work.isEmpty {
            if indexChanged { try? store.saveIndex(index) }
            return finish(report, stats0)
        }
        // The bases of the documents at work (those of changed heads too, for the deletion stop).
        for id in work where bases[id] == nil && baseIDs.contains(id) { bases[id] = store.base(id) }

        // 3. The changed heads.
        var heads: [UUID: [(name: String, etag: String?, head: Head)]] = [:]
        for (doc, list) in changed {
            for (name, etag) in list {
                let got: Result<(bytes: [UInt8], etag: String?), RemoteError> = await Self.attempt { () async throws(RemoteError) in
                    try await remote.get(Self.headsFolder + "/" + name, maxBytes: Head.maxBytes)
                }
                switch got {
                case .failure(.notFound): continue  // removed between the listing and now
                case .failure(let e): report.problems.append("head \(name): \(e)")
                case .success(let (bytes, getTag)):
                    guard let head = try? Head.decode(bytes) else {
                        report.problems.append("head \(name) cannot be read (damaged or newer); left out until it can")
                        continue
                    }
                    guard head.document == doc, Head.fileName(document: head.document, device: head.device) == name else {
                        report.problems.append("head \(name) names another document or device; left out")
                        continue
                    }
                    heads[doc, default: []].append((name, RemotePath.normalizedETag(getTag) ?? etag, head))
                }
            }
        }

        // 4. The mass-deletion stop, before anything is applied: documents here that a head
        //    now says are deleted, and that did not change here since the last round.
        var doomed: [UUID] = []
        for (doc, hs) in heads where localByID[doc] != nil {
            guard hs.contains(where: { $0.head.deleted != nil }) else { continue }
            if let b = bases[doc], localByID[doc]!.modified.milliseconds != b.docModified { continue }
            var probe = bases[doc]?.documentState
            for h in hs {
                let s = DocumentState(id: doc, title: h.head.title, origin: h.head.origin, deleted: h.head.deleted,
                                      assets: [:], pages: h.head.pages.mapValues { PageRecord(fields: $0.fields, removed: $0.removed) })
                probe = probe.map { $0.joined(s) } ?? s
            }
            if let p = probe, p.deleted != nil, p.deleted!.covers(p.title.stamp) { doomed.append(doc) }
        }
        if doomed.count > options.trashLimit {
            throw SyncError.massDeletion(count: doomed.count, limit: options.trashLimit, documents: doomed.sorted { $0.uuidString < $1.uuidString })
        }

        // 5. Each document, one at a time.
        for (i, doc) in work.enumerated() {
            try Task.checkCancellation()
            progress(SyncProgress(done: i, total: work.count, document: doc))
            let speculated = prepared.removeValue(forKey: doc)
            func fresh() -> DocumentRound {
                DocumentRound(sync: self, id: doc, base: bases[doc], heads: heads[doc] ?? [],
                              localPresent: localByID[doc] != nil, inTrash: trashed.contains(doc), options: options)
            }
            var round = speculated ?? fresh()
            do {
                if speculated != nil && (heads[doc] ?? []).isEmpty { try await round.finishUnderLock(&report) } else {
                    if speculated != nil {
                        // A head of it listed as changed but not read (gone, or damaged): merged as usual.
                        await round.discard()
                        round = fresh()
                    }
                    try await round.run(&report)
                }
                var seenChanged = false
                for h in round.joinedHeads { if let e = h.etag, seen[h.name] != e { seen[h.name] = e; seenChanged = true } }
                // Unchanged (only this device changed the document): not written again.
                if seenChanged { try store.saveSeen(seen) }
                if let b = round.savedBase { index[doc] = store.indexEntry(for: b) } else { index[doc] = nil }
                indexChanged = true
            } catch let e as StoreError {
                if case .documentInUse = e { report.skipped[doc] = "open in a session; synced when it is closed" }
                else { report.skipped[doc] = "\(e)" }
            } catch let e as RemoteError {
                report.skipped[doc] = "\(e)"
            } catch let e as SyncError {
                report.skipped[doc] = "\(e)"
            }
        }
        progress(SyncProgress(done: work.count, total: work.count, document: nil))
        // Entries of documents skipped this round are dropped: their bases are read next time.
        for doc in report.skipped.keys { index[doc] = nil }
        if indexChanged || !report.skipped.isEmpty { try? store.saveIndex(index) }
        // Garbage, once a day at most, only in a round that had work (a round where nothing
        // changed stays one request). Its failure leaves the blobs; the round stands.
        if let g = options.garbage, report.skipped.isEmpty, garbageDue(g) {
            do { report.garbage = try await collectGarbage(g) } catch { report.problems.append("garbage collection: \(error)") }
        }
        return finish(report, stats0)
    }

    func finish(_ r: SyncReport, _ s0: (Int, Int, Int)) -> SyncReport {
        var r = r
        r.requests = remote.statistics.requests - s0.0
        r.bytesSent = remote.statistics.bytesSent - s0.1
        r.bytesReceived = remote.statistics.bytesReceived - s0.2
        return r
    }

    static func attempt<T>(_ body: () async throws(RemoteError) -> T) async -> Result<T, RemoteError> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}

extension Library {
    /// Syncs this library with a remote: see `LibrarySync`.
    public func sync(with remote: any Remote, options: SyncOptions = SyncOptions(),
                     progress: @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
        try await LibrarySync(library: self, remote: remote).sync(options: options, progress: progress)
    }
}
