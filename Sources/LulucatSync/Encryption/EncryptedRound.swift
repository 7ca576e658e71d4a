// An encrypted library's round (docs/encryption.md §8.3): every object the round will use is read and
// checked before the plain round runs over an `EncryptedRemote`, so a refused object stops sync with
// nothing changed here.

import Foundation
import LulucatCrypto
import LulucatStore

/// An encrypted library's round (`LibrarySync` of a library that holds a key): the plain round over
/// an `EncryptedRemote`, after every object the round will read has been fetched, opened and checked.
struct EncryptedRound: Sendable {
    let library: Library
    let inner: any Remote
    let key: LibraryKey

    func status(offline: Bool) async throws(SyncError) -> SyncStatus {
        let local = try LocalEncryption.load(library)
        let round = EncryptionRound(highest: local.highest, written: local.written)
        let plain = try LibrarySync(library: library, remote: EncryptedRemote(inner: inner, key: key, round: round), key: nil)
        return try await plain.status(offline: offline)
    }

    /// One round. Throws an `EncryptionError` (nothing changed here) when any object the round
    /// would use fails its checks or the key settings changed. A head older than one read before
    /// (the remote rolled back) is left out of the round and reported in its problems; the rest
    /// of the library syncs.
    func sync(options: SyncOptions, progress: @escaping @Sendable (SyncProgress) -> Void) async throws(SyncError) -> SyncReport {
        var local = try LocalEncryption.load(library)
        guard local.keyCheck == key.keyCheck else { throw .encryption(.notSetUp(".sync/encryption.json names another key")) }
        let round = EncryptionRound(highest: local.highest, written: local.written)
        let writtenBefore = local.written
        let remote = EncryptedRemote(inner: inner, key: key, round: round)
        let sync = try LibrarySync(library: library, remote: remote, key: nil)
        let store = sync.store
        let stats0 = RemoteCounts(inner.statistics)

        // 1. The one listing; the key settings, read again only when their ETag changed.
        let entries: [RemoteEntry]
        switch await inner.listResult(LibrarySync.headsFolder) {
        case .success(let e): entries = e
        case .failure(.notFound): throw .encryption(.settingsMissing)
        case .failure(let e): throw .remote(e)
        }
        guard let settingsEntry = entries.first(where: { $0.name == EncryptedRemote.settingsName && !$0.isFolder }) else {
            throw .encryption(.settingsMissing)
        }
        let settingsETag = RemotePath.normalizedETag(settingsEntry.etag)
        var settingsChanged = false
        if settingsETag == nil || settingsETag != local.settingsETag {
            let bytes = try await inner.settingsBytes()
            if bytes != local.settings { try SettingsFile.confirm(bytes, key: key) }
            local.settings = bytes
            local.settingsETag = settingsETag
            settingsChanged = true
        }

        // 2. Every changed head of another device, opened and its counter checked; every blob it
        //    names that the round will read, opened and checked against its name.
        let plain = try EncryptedRemote.openListing(entries, key: key)
        let seen = store.seen()
        var fetched: [String: UInt64] = [:]
        // Heads older than one read before (a rolled-back or replaying server): left out of this
        // round as if unchanged, reported, and read again next round (docs/encryption.md §8.2).
        var replayed: [String: String] = [:]
        for e in plain {
            guard let (doc, dev) = Head.parseFileName(e.name), dev != sync.device else { continue }
            let etag = RemotePath.normalizedETag(e.etag)
            guard etag == nil || seen[e.name] != etag else { continue }
            let h: (bytes: [UInt8], etag: String?, counter: UInt64)
            do { h = try await remote.fetchHead(plain: e.name, document: doc, device: dev) } catch {
                guard case .encryption(.replayedHead(_, let counter, let highest)) = error, seen[e.name] != nil else { throw error }
                replayed[e.name] = "document \(doc): the server sent an older copy of device \(dev)'s changes than it sent before "
                    + "(counter \(counter), after \(highest)): the remote was rolled back or is replaying old files. This device keeps "
                    + "what it had and syncs the rest; that device's next sync publishes its changes again"
                continue
            }
            round.keepHead(e.name, h)
            fetched[e.name] = h.counter
            // A head the round reports (damaged, or naming more than a document may hold): none of its blobs is fetched.
            guard let head = try? Head.decode(h.bytes), head.document == doc, head.device == dev,
                  (try? DocumentLimits.check(head, name: e.name)) != nil else { continue }
            let base = store.base(doc)
            // A blob missing on the server is not a refusal: the round reports it, leaves the
            // head out and asks the devices that hold it (docs/sync.md §8.1), so it stops here.
            do {
                for (pid, p) in head.pages.sorted(by: { $0.key.precedesInBytes($1.key) }) {
                    // What the round reads (DocumentRound.state(of:)): a blob the base does not hold.
                    if DocumentRound.knownState(of: pid, in: head, base: base) != nil { continue }
                    _ = try await remote.fetchBlob(document: doc, blob: p.blob)
                }
                let package = library.package(doc)
                for (aid, ref) in head.assets where DocumentRound.lacksAsset(aid, ext: ref.ext, of: package, in: library) {
                    _ = try await remote.fetchBlob(document: doc, blob: ref.blob)
                }
            } catch {
                guard case .remote(.notFound) = error else { throw error }
            }
        }
        // Lost-blob requests, under sealed names: those this device can serve are handed to the
        // round as plain requests; every one listed is not written again.
        let requests = Set(entries.filter { !$0.isFolder && EncryptedRemote.isSealedRequestName($0.name) }.map(\.name))
        round.listedRequests = requests
        var plainRequests: [RemoteEntry] = []
        if !requests.isEmpty {
            for (doc, entry) in store.index().sorted(by: { $0.key.precedesInBytes($1.key) }) where entry.published {
                guard let head = store.baseHead(doc) else { continue }
                for blob in head.pages.values.map(\.blob) + head.assets.values.map(\.blob) {
                    guard let sealed = try? EncryptedRemote.sealedRequestName(key: key, document: doc, blob: blob), requests.contains(sealed) else { continue }
                    plainRequests.append(RemoteEntry(name: LostBlobRequest.name(document: doc, blob: blob), etag: nil, size: 0, isFolder: false))
                }
            }
        }
        round.listing = plain.map { e in
            guard replayed[e.name] != nil else { return e }
            return RemoteEntry(name: e.name, etag: seen[e.name], size: e.size, isFolder: e.isFolder)
        } + plainRequests

        // 3. The round, on exactly what was checked. Garbage collection lists blobs/, which an
        // encrypted remote does not offer (sealed names say nothing of what is referenced): it
        // does not run here (docs/encryption.md, not done).
        var plainOptions = options
        plainOptions.garbage = nil
        var report = try await sync.plainRound(options: plainOptions, progress: progress)
        report.problems += replayed.keys.sorted().map { replayed[$0]! }
        // The requests of the checks too.
        report = sync.finish(report, stats0)
        for (name, counter) in fetched { round.raiseHighest(name, counter) }
        local.highest = round.highest
        local.written = round.written
        if settingsChanged || !fetched.isEmpty || local.written != writtenBefore { try local.save(library) }
        if let first = round.refusals.first { throw .encryption(.refused(object: "an object read during the round", reason: first)) }
        return report
    }
}

extension Remote {
    /// `list` as a Result (a typed `catch .notFound` pattern crashes the Swift 6.3 compiler here).
    func listResult(_ folder: String) async -> Result<[RemoteEntry], RemoteError> {
        do { return .success(try await list(folder)) } catch { return .failure(error) }
    }

    func getResult(_ path: String, maxBytes: Int) async -> Result<[UInt8], RemoteError> {
        do { return .success(try await get(path, maxBytes: maxBytes).bytes) } catch { return .failure(error) }
    }

    /// The key settings file's bytes; `settingsMissing` when it is not there.
    func settingsBytes() async throws(SyncError) -> [UInt8] {
        switch await getResult(SettingsFile.path, maxBytes: 4096) {
        case .success(let b): return b
        case .failure(.notFound): throw .encryption(.settingsMissing)
        case .failure(let e): throw .remote(e)
        }
    }
}
