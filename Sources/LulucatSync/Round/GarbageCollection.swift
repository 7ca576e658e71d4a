// Garbage collection of blobs no head names (docs/sync.md §8): a blob is deleted only after this
// device has seen it unreferenced, with one unchanged ETag, for the whole grace period.

import Foundation
import LulucatStore

/// When and how blobs are collected. The clock is this device's only (never compared with another's).
public struct GarbageOptions: Sendable {
    /// How long a blob must stay unreferenced, with one ETag, before it is deleted, in seconds
    /// (a week by default). Keep it longer than any round takes: a blob becomes referenced again
    /// only through a round that read it referenced, or a new upload of it (docs/sync.md §8).
    public var grace: TimeInterval
    /// A round that did work collects when the last collection is older than this, in seconds
    /// (a day by default).
    public var interval: TimeInterval
    /// This device's clock (tests pass a fake one).
    public var now: @Sendable () -> Date

    /// Collect at most every `interval` seconds, deleting a blob seen unreferenced for `grace` seconds; `now` is the clock (tests pass their own).
    public init(grace: TimeInterval = 7 * 86_400, interval: TimeInterval = 86_400, now: @escaping @Sendable () -> Date = { Date() }) {
        self.grace = grace
        self.interval = interval
        self.now = now
    }
}

/// What a collection did.
public struct GarbageReport: Sendable, CustomStringConvertible {
    /// Blobs the listing of `blobs/` held.
    public var blobsListed = 0
    /// Of those, blobs a head or a base names.
    public var referenced = 0
    /// Unreferenced, still inside the grace period (or just seen again with a new ETag).
    public var waiting = 0
    /// The blobs deleted (their names).
    public var deleted: [String] = []
    /// Why nothing was deleted, when something kept the collection from knowing every reference.
    public var stopped: String?
    /// Documents whose published head names a blob the listing lacks (lost on the server): their
    /// base is marked unpublished, so the next round uploads those blobs again from this device.
    public var republished: [UUID] = []

    /// The collection in a sentence.
    public var description: String {
        if let s = stopped { return "garbage collection stopped, nothing deleted: \(s)" }
        return "\(blobsListed) blobs: \(referenced) referenced, \(waiting) unreferenced within the grace period, \(deleted.count) deleted"
    }
}

extension LibrarySync {
    static let garbageFile = "garbage.json"

    /// The blobs a head's history names itself: its chunks and its inline entries' blobs.
    static func insertHistory(_ history: HeadHistory, into referenced: inout Set<String>) {
        for c in history.chunks { referenced.insert(c.hex) }
        for e in history.entries { referenced.insert(e.blob.hex) }
    }

    /// Reads every head (all of them: a blob is garbage only when none names it) and the blob
    /// listing, and deletes the blobs this device has seen unreferenced, with the same ETag, for
    /// `grace`. Any head that cannot be read or parsed stops the collection before any delete.
    /// Takes the library's round lock, as a round does.
    public func collectGarbage(_ options: GarbageOptions = GarbageOptions()) async throws(SyncError) -> GarbageReport {
        let lock = try await store.lockRounds(waiting: SyncOptions().waitForOtherRound)
        defer { store.unlockRounds(lock) }
        return try await collectGarbageInRound(options)
    }

    /// The collection, the round lock held by the caller.
    func collectGarbageInRound(_ options: GarbageOptions) async throws(SyncError) -> GarbageReport {
        var report = GarbageReport()
        // Sealed names say nothing of what is referenced: an encrypted remote is never collected
        // (docs/encryption.md, not done). Its listing would make every blob look unreferenced.
        if key != nil {
            report.stopped = "garbage collection does not run on an encrypted remote"
            return report
        }
        let now = options.now()
        var referenced = Set<String>()
        // Our own bases, published or not: an unpublished head may name blobs already uploaded.
        var ownHeads: [UUID: Head] = [:]
        // The history held here per document (the chunks' entries, so a collection reads none again).
        var held: [UUID: LocalHistory] = [:]
        for id in store.baseIDs() {
            guard let b = store.baseHead(id) else {
                report.stopped = "the local state of document \(id) cannot be read"
                return report
            }
            ownHeads[id] = b
            for p in b.pages.values { referenced.insert(p.blob.hex) }
            for a in b.assets.values { referenced.insert(a.blob.hex) }
            // Our history (§12.7): the head's, and the entries of our chunks held here.
            Self.insertHistory(b.history, into: &referenced)
            let local = store.history(id)
            held[id] = local
            let mirror = local.own(device)
            for c in mirror.chunks { referenced.insert(c.hex) }
            for e in mirror.held.values.joined() + mirror.inline { referenced.insert(e.blob.hex) }
        }
        var chunksRead = Set<String>()
        let heads: [RemoteEntry]
        do { heads = try await remote.list(Self.headsFolder) } catch { throw SyncError.remote(error) }
        for e in heads where !e.isFolder {
            guard Head.parseFileName(e.name) != nil else { continue }
            let bytes: [UInt8]
            do { bytes = try await remote.get(Self.headsFolder + "/" + e.name, maxBytes: Head.maxBytes).bytes } catch {
                if case .notFound = error { continue }  // replaced or removed since the listing
                report.stopped = "head \(e.name): \(error)"
                return report
            }
            guard let head = try? Head.decode(bytes) else {
                report.stopped = "head \(e.name) cannot be read (damaged or newer); it may name blobs"
                return report
            }
            for p in head.pages.values { referenced.insert(p.blob.hex) }
            for a in head.assets.values { referenced.insert(a.blob.hex) }
            Self.insertHistory(head.history, into: &referenced)
            // The versions its chunks name (§12.7), once per chunk: from the copy held here when
            // this device holds it (checked when it was read), else read.
            for chunk in head.history.chunks where chunksRead.insert(chunk.hex).inserted {
                if let entries = held[head.document]?.chunks[chunk.hex] {
                    for entry in entries { referenced.insert(entry.blob.hex) }
                    continue
                }
                switch await remote.getResult(Self.blobsFolder + "/" + chunk.hex, maxBytes: HistoryBlob.maxBytes) {
                case .success(let bytes):
                    guard BlobName(of: bytes) == chunk, let blob = try? HistoryBlob.decode(bytes) else {
                        report.stopped = "history chunk \(chunk.hex) of head \(e.name) cannot be read (damaged or newer); it may name blobs"
                        return report
                    }
                    for entry in blob.entries { referenced.insert(entry.blob.hex) }
                case .failure(.notFound):
                    continue  // gone: nothing it names can be listed any more
                case .failure(let error):
                    report.stopped = "history chunk \(chunk.hex) of head \(e.name): \(error)"
                    return report
                }
            }
        }
        let blobs: [RemoteEntry]
        do { blobs = try await remote.list(Self.blobsFolder) } catch {
            if case .notFound = error { return report }
            throw SyncError.remote(error)
        }
        try healLostBlobs(ownHeads, listed: Set(blobs.filter { !$0.isFolder }.map(\.name)),
                          headsListed: Set(heads.filter { !$0.isFolder }.map(\.name)), &report)
        var pending = store.garbage()
        var still: [String: GarbageEntry] = [:]
        for e in blobs where !e.isFolder {
            // A blob, or an upload's temporary file left beside one (debris: never referenced,
            // removed after the same wait, so an upload still under way is not touched).
            if BlobName(hex: e.name) != nil {
                report.blobsListed += 1
                if referenced.contains(e.name) { report.referenced += 1; continue }
            } else if !BlobName.isUploadDebris(e.name) {
                continue
            }
            let etag = RemotePath.normalizedETag(e.etag)
            if let p = pending[e.name], p.etag == etag, etag != nil, now.timeIntervalSince(p.since) >= options.grace {
                do { try await remote.delete(Self.blobsFolder + "/" + e.name) } catch {
                    // Maybe deleted: listed again next time, or gone.
                    still[e.name] = p
                    continue
                }
                report.deleted.append(e.name)
                continue
            }
            // First seen unreferenced, or written again since (a new ETag): the grace starts now.
            if let p = pending[e.name], p.etag == etag, etag != nil { still[e.name] = p } else { still[e.name] = GarbageEntry(since: now, etag: etag) }
            report.waiting += 1
        }
        pending = still
        try store.saveGarbage(pending, lastRun: now)
        return report
    }

    /// A published base whose head names a blob that `listed` lacks was published to a remote
    /// that has since lost the blob (a restore, a cleanup, a disk): marked unpublished (durably),
    /// so the next round codes and uploads it again from this device, then its head.
    /// Only the bases whose head (`heads`, already read) names a missing blob are read whole.
    /// A base whose head itself is not in the listing (`headsListed`) is left to the round's
    /// check (`LibraryRound.headsNotKept`), which fails the round saying the server did not keep it.
    func healLostBlobs(_ heads: [UUID: Head], listed: Set<String>, headsListed: Set<String>, _ report: inout GarbageReport) throws(SyncError) {
        for (id, head) in heads.sorted(by: { $0.key.precedesInBytes($1.key) }) {
            guard headsListed.contains(Head.fileName(document: id, device: device)) else { continue }
            let named = head.pages.values.map(\.blob.hex) + head.assets.values.map(\.blob.hex)
            guard named.contains(where: { !listed.contains($0) }), var b = store.base(id), b.published, b.head == head else { continue }
            let previous = b
            b.published = false
            try store.save(b, previous: previous, durable: true)
            report.republished.append(id)
        }
    }

    /// Whether a collection is due (the last one is older than `interval`, or there was none).
    func garbageDue(_ options: GarbageOptions) -> Bool {
        guard let last = store.garbageLastRun() else { return true }
        return options.now().timeIntervalSince(last) >= options.interval
    }
}

/// A blob seen unreferenced: since when (this device's clock) and with which ETag.
struct GarbageEntry: Equatable {
    var since: Date
    var etag: String?
}

extension SyncStateStore {
    var garbagePath: String { folder + "/" + LibrarySync.garbageFile }

    func garbage() -> [String: GarbageEntry] {
        guard let blobs = read(GarbageFileRead.self, garbagePath)?.blobs else { return [:] }
        var out: [String: GarbageEntry] = [:]
        for (name, v) in blobs {
            guard BlobName(hex: name) != nil || BlobName.isUploadDebris(name), let b = v.value else { continue }
            out[name] = GarbageEntry(since: Date(timeIntervalSince1970: Double(b.since) / 1000), etag: b.etag)
        }
        return out
    }

    func garbageLastRun() -> Date? {
        guard let ms = read(GarbageFileRead.self, garbagePath)?.lastRun else { return nil }
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    func saveGarbage(_ entries: [String: GarbageEntry], lastRun: Date) throws(SyncError) {
        let blobs = entries.mapValues { GarbageFile.Blob(since: $0.since.milliseconds, etag: $0.etag) }
        try write(GarbageFile(lastRun: lastRun.milliseconds, blobs: blobs), to: garbagePath)
    }

    /// A base's head alone (its page states are not needed to know which blobs it names).
    func baseHead(_ id: UUID) -> Head? {
        guard let o = read(BaseFile.self, basePath(id)), let hb = Data(base64Encoded: o.head),
              let head = try? Head.decode(Array(hb)), head.document == id else { return nil }
        return head
    }
}
