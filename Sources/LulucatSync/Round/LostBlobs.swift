// A blob lost on the server comes back from a device that holds it (docs/sync.md §8.1): a device
// that needs the blob and gets "not found" leaves a request in heads/ (the folder every round
// lists already), and a device whose published head names that blob uploads it again in its
// next round, then removes the request. A round where nothing changed stays one request.

import Foundation
import LulucatStore

/// A request for a lost blob: an empty file `heads/<document-UUID>.<64 hex>.lost`.
enum LostBlobRequest {
    static let suffix = ".lost"
    /// Requests a round serves, and writes, at most (hostile requests cost a bounded amount).
    static let perRound = 16

    static func name(document: UUID, blob: BlobName) -> String { document.uuidString + "." + blob.hex + suffix }

    /// Parses a request name exactly; nil for anything else.
    static func parse(_ name: String) -> (document: UUID, blob: BlobName)? {
        // Every listed name comes here (heads, mostly): the length first, without a copy.
        guard name.utf8.count == 36 + 1 + 64 + suffix.utf8.count else { return nil }
        let u = Array(name.utf8)
        guard u.count == 36 + 1 + 64 + suffix.utf8.count, name.hasSuffix(suffix), u[36] == 46,
              let d = UUID(strictString: String(decoding: u[0..<36], as: UTF8.self)),
              let b = BlobName(hex: String(decoding: u[37..<101], as: UTF8.self)) else { return nil }
        return (d, b)
    }
}

extension Head {
    /// Whether this head names `blob` (a page's or an asset's).
    func names(_ blob: BlobName) -> Bool {
        pages.values.contains { $0.blob == blob } || assets.values.contains { $0.blob == blob }
    }
}

extension LibraryRound {
    /// The requests in the listing that this device can serve: a document here whose published
    /// head names the blob. Each such document joins this round's work with the blob left out of
    /// what the remote is known to hold, so its round codes and uploads it again (and writes the
    /// same head again). Returns the requests taken, by document. On an encrypted remote the
    /// requests are under sealed names; the encrypted round hands those this device can serve
    /// to the round as plain ones (`EncryptedRound`).
    mutating func lostBlobRequests(_ listed: [RemoteEntry]) async -> [UUID: [(name: String, blob: BlobName)]] {
        var taken: [UUID: [(name: String, blob: BlobName)]] = [:]
        var count = 0
        var requests: [(name: String, document: UUID, blob: BlobName)] = []
        for e in listed where !e.isFolder {
            guard let (doc, blob) = LostBlobRequest.parse(e.name) else { continue }
            context.requested.note(e.name)
            requests.append((e.name, doc, blob))
        }
        for (name, doc, blob) in requests where count < LostBlobRequest.perRound {
            guard local[doc] != nil, baseIDs.contains(doc),
                  index[doc]?.published != false, let base = bases[doc] ?? store.base(doc), base.published, base.head.names(blob) else { continue }
            count += 1
            bases[doc] = base
            context.lost[doc, default: []].insert(blob)
            taken[doc, default: []].append((name, blob))
            localWork.insert(doc)
            if var round = prepared.removeValue(forKey: doc) { await round.discard() }
        }
        guard !taken.isEmpty else { return taken }
        // The server lost one blob of these documents: which others of theirs did it lose? One
        // listing of blobs/, only in a round that serves a request, so each comes back now
        // rather than one request (and one round) at a time.
        let remote = sync.remote
        if case .success(let blobs) = await LibrarySync.attempt({ () async throws(RemoteError) in try await remote.list(LibrarySync.blobsFolder) }) {
            let present = Set(blobs.filter { !$0.isFolder }.map(\.name))
            for doc in taken.keys {
                guard let head = bases[doc]?.head else { continue }
                for b in head.pages.values.map(\.blob) + head.assets.values.map(\.blob) where !present.contains(b.hex) { context.lost[doc, default: []].insert(b) }
            }
        }
        return taken
    }

    /// Removes the requests this round served: its document's published head (as saved now)
    /// still names the blob, so it was uploaded again. One a device cannot serve (its page changed
    /// since) stays for the others that hold the blob.
    mutating func removeServedRequests(_ taken: [UUID: [(name: String, blob: BlobName)]]) async {
        let remote = sync.remote
        for (doc, list) in taken.sorted(by: { $0.key.precedesInBytes($1.key) }) where report.skipped[doc] == nil {
            guard let head = store.baseHead(doc) else { continue }
            for (name, blob) in list where head.names(blob) {
                _ = await LibrarySync.attempt { () async throws(RemoteError) in try await remote.delete(LibrarySync.headsFolder + "/" + name) }
                report.blobsRestored.append(blob.hex)
            }
        }
    }
}

extension DocumentRound {
    /// Called when a blob a head names is not on the server: asks the devices that hold it to
    /// upload it again (a request in heads/, unless the listing shows one already), at most
    /// `LostBlobRequest.perRound` a round. Returns what to report.
    func requestLostBlob(_ blob: BlobName, of owner: String) async -> String {
        let name = LostBlobRequest.name(document: id, blob: blob)
        let what = "blob \(blob.hex) of \(owner) is missing on the server"
        if !context.requested.contains(name), context.requested.reserve(name, limit: LostBlobRequest.perRound) {
            let remote = sync.remote
            let r = await LibrarySync.attempt { () async throws(RemoteError) in try await remote.put(LibrarySync.headsFolder + "/" + name, []) }
            if case .failure(let e) = r { return what + " (asking the devices that hold it failed: \(e))" }
        }
        return what + "; the devices that hold it are asked to upload it again"
    }
}

/// The lost-blob requests of one round: those listed, and those this round wrote.
final class LostBlobRequests: @unchecked Sendable {
    private let lock = NSLock()
    private var names: Set<String>
    private var written = 0

    init() { names = [] }

    func contains(_ name: String) -> Bool { lock.withLock { names.contains(name) } }

    /// A request the listing shows (not written again).
    func note(_ name: String) { _ = lock.withLock { names.insert(name) } }

    /// Records `name` as written; false when the round wrote `limit` already.
    func reserve(_ name: String, limit: Int) -> Bool {
        lock.withLock {
            guard written < limit else { return false }
            written += 1
            names.insert(name)
            return true
        }
    }
}
