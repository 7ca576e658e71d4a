// End-to-end encryption as a layer under the round (docs/encryption.md §8): a Remote that seals
// every head and blob the round writes and opens every one it reads, so the round itself never
// sees a sealed byte or a sealed name.

import Foundation
import LulucatCrypto
import LulucatStore

/// A remote that one document's part of a round uses: blob paths name no document, so the layer
/// is told which document a round is working on (`DocumentRound.remote`).
protocol DocumentScopedRemote: Remote {
    func scoped(to document: UUID) -> any Remote
}

/// What one encrypted round has read and checked, shared by the remote's copies (one per document
/// scope). Lock-protected: the round is sequential, the lock only makes it `Sendable`.
final class EncryptionRound: @unchecked Sendable {
    private let lock = NSLock()
    /// The heads listing as checked before the round (plain names), served instead of a new one.
    private var _listing: [RemoteEntry]?
    /// Opened heads by plain name: the plain head bytes, the GET's ETag, the counter.
    private var _heads: [String: (bytes: [UInt8], etag: String?, counter: UInt64)] = [:]
    /// Opened and checked blobs by "document/sha256-hex".
    private var _blobs: [String: [UInt8]] = [:]
    private var _blobBytes = 0
    /// The highest head counter seen per plain head name (kept in `.sync/encryption.json`).
    private var _highest: [String: UInt64]
    /// The last counter this device wrote per plain head name.
    private var _written: [String: UInt64]
    /// Objects refused during the round itself (after the checks before it).
    private var _refusals: [String] = []
    /// The lost-blob requests the round's listing shows, by their names on the remote
    /// (`<sealed blob name>.lost`): one already there is not written again.
    private var _listedRequests: Set<String> = []

    /// Plaintext kept in memory for one round at most; beyond it a blob is checked before the
    /// round and read (and checked) again when the round needs it.
    static let cacheLimit = 512 << 20

    init(highest: [String: UInt64], written: [String: UInt64]) {
        _highest = highest
        _written = written
    }

    var listing: [RemoteEntry]? {
        get { lock.withLock { _listing } }
        set { lock.withLock { _listing = newValue } }
    }
    var listedRequests: Set<String> {
        get { lock.withLock { _listedRequests } }
        set { lock.withLock { _listedRequests = newValue } }
    }
    func head(_ name: String) -> (bytes: [UInt8], etag: String?, counter: UInt64)? { lock.withLock { _heads[name] } }
    func keepHead(_ name: String, _ value: (bytes: [UInt8], etag: String?, counter: UInt64)) { lock.withLock { _heads[name] = value } }
    func blob(_ key: String) -> [UInt8]? { lock.withLock { _blobs[key] } }
    func keepBlob(_ key: String, _ bytes: [UInt8]) {
        lock.withLock {
            guard _blobs[key] == nil, _blobBytes + bytes.count <= EncryptionRound.cacheLimit else { return }
            _blobs[key] = bytes
            _blobBytes += bytes.count
        }
    }
    var highest: [String: UInt64] { lock.withLock { _highest } }
    var written: [String: UInt64] { lock.withLock { _written } }
    func highest(_ name: String) -> UInt64? { lock.withLock { _highest[name] } }
    /// Records a head's counter as the highest read, but never more than a day past this
    /// device's clock: a writer whose clock ran ahead (and which then lost its own record) would
    /// otherwise have its heads left out until its clock caught up, maybe for years. A day bounds
    /// that (docs/encryption.md §8.2); counters at or before the clock are kept exactly.
    func raiseHighest(_ name: String, _ counter: UInt64) {
        let bound = UInt64(max(0, (Date().timeIntervalSince1970 + Self.counterAllowance) * 1_000_000))
        lock.withLock { _highest[name] = max(_highest[name] ?? 0, min(counter, bound)) }
    }

    /// How far past this device's clock a recorded counter may be: one day, in seconds.
    static let counterAllowance: TimeInterval = 86_400
    var refusals: [String] { lock.withLock { _refusals } }
    func refuse(_ message: String) { lock.withLock { _refusals.append(message) } }

    /// The counter of our next write of a head: above the last one and at least the time in µs,
    /// so it still grows if the local state was lost (docs/encryption.md §8.2).
    func nextCounter(_ name: String) -> UInt64 {
        lock.withLock {
            let now = UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000))
            let next = max((_written[name] ?? 0) + 1, now)
            _written[name] = next
            return next
        }
    }
}

/// Any remote, with every object sealed (docs/encryption.md §8). The round writes and reads the
/// plain layout (`heads/<document>.<device>.head`, `blobs/<sha256>`); this maps it to
/// `heads/<sealed name>` and `blobs/<keyed MAC>` and seals and opens the bytes.
package struct EncryptedRemote: Remote, DocumentScopedRemote {
    let inner: any Remote
    /// What it seals into, marked as sealed.
    package var identity: String { inner.identity.isEmpty ? "" : "sealed:" + inner.identity }
    package var concurrentTransfers: Int { inner.concurrentTransfers }
    let key: LibraryKey
    let round: EncryptionRound
    /// The document a round is working on: blob paths need it (names and associated data).
    let document: UUID?

    /// The remote's shared key settings file, in `heads/` so the round's one listing shows its
    /// ETag (docs/encryption.md §8.1).
    static let settingsName = "keys"
    /// Bytes before the plain head in a head object's plaintext: the counter (UInt64 LE).
    static let counterByteCount = 8

    init(inner: any Remote, key: LibraryKey, round: EncryptionRound, document: UUID? = nil) {
        self.inner = inner
        self.key = key
        self.round = round
        self.document = document
    }

    package var statistics: RemoteStatistics { inner.statistics }

    func scoped(to document: UUID) -> any Remote {
        EncryptedRemote(inner: inner, key: key, round: round, document: document)
    }

    // MARK: Names

    enum Place {
        case head(plain: String, document: UUID, device: UUID)
        case blob(BlobName)
        /// A lost-blob request (`LostBlobRequest`), kept on the remote under its sealed name.
        case lostRequest(document: UUID, blob: BlobName)
        case folder(String)
    }

    /// A lost-blob request's name on an encrypted remote: the sealed name of the blob it asks
    /// for, `.lost` (docs/encryption.md §4.3): it names the blob as `blobs/` did, nothing more.
    static func sealedRequestName(key: LibraryKey, document: UUID, blob: BlobName) throws(RemoteError) -> String {
        try sealedBlobName(key: key, document: document, blob: blob) + LostBlobRequest.suffix
    }

    /// Whether a `heads/` name has a sealed request's shape: 64 lowercase hex digits, `.lost`.
    static func isSealedRequestName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard u.count == 64 + LostBlobRequest.suffix.utf8.count, name.hasSuffix(LostBlobRequest.suffix) else { return false }
        return u[0..<64].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    func place(_ path: String) throws(RemoteError) -> Place {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1, parts[0] == LibrarySync.headsFolder || parts[0] == LibrarySync.blobsFolder || parts[0].isEmpty { return .folder(parts[0]) }
        guard parts.count == 2 else { throw .failed(path, "not a path of the sync layout") }
        if parts[0] == LibrarySync.headsFolder, let (d, v) = Head.parseFileName(parts[1]) { return .head(plain: parts[1], document: d, device: v) }
        if parts[0] == LibrarySync.headsFolder, let (d, b) = LostBlobRequest.parse(parts[1]) { return .lostRequest(document: d, blob: b) }
        if parts[0] == LibrarySync.blobsFolder, let b = BlobName(hex: parts[1]) { return .blob(b) }
        throw .failed(path, "not a path of the sync layout")
    }

    func sealedHeadName(document: UUID, device: UUID) throws(RemoteError) -> String {
        do { return try key.sealedHeadName(document: document, device: device) } catch { throw .failed("heads", "\(error)") }
    }

    /// `blobs/` name of a blob: HMAC(names subkey, document ‖ SHA-256 of the plaintext).
    static func sealedBlobName(key: LibraryKey, document: UUID, blob: BlobName) throws(RemoteError) -> String {
        do { return try key.blobName(document: document, content: rawDigest(blob)) } catch { throw .failed("blobs", "\(error)") }
    }

    static func rawDigest(_ blob: BlobName) -> [UInt8] {
        let u = Array(blob.hex.utf8)
        func d(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 87 }
        return stride(from: 0, to: 64, by: 2).map { d(u[$0]) << 4 | d(u[$0 + 1]) }
    }

    /// The plain entries of a `heads/` listing: sealed names opened, the settings file and
    /// foreign names left out. A name of a head's shape that does not open is refused.
    static func openListing(_ entries: [RemoteEntry], key: LibraryKey) throws(SyncError) -> [RemoteEntry] {
        var out: [RemoteEntry] = []
        for e in entries where !e.isFolder && e.name != settingsName {
            let pair: (document: UUID, device: UUID)?
            do { pair = try key.openSealedHeadName(e.name) } catch {
                throw .encryption(.refused(object: "the head name \(e.name.prefix(16))…", reason: "\(error)"))
            }
            guard let (d, v) = pair else { continue }
            out.append(RemoteEntry(name: Head.fileName(document: d, device: v), etag: e.etag,
                                   size: e.size.map { max(0, $0 - EncryptedObject.overhead - counterByteCount) }, isFolder: false))
        }
        return out
    }

    // MARK: Opening (also used by the checks before a round)

    /// A head from the remote, opened, its counter checked against the highest seen.
    func fetchHead(plain: String, document: UUID, device: UUID) async throws(SyncError) -> (bytes: [UInt8], etag: String?, counter: UInt64) {
        let remote = self
        let (sealedName, sealed, etag) = try await SyncError.remote { () async throws(RemoteError) in
            let name = try remote.sealedHeadName(document: document, device: device)
            let inner = remote.inner
            let (sealed, etag) = try await inner.get(LibrarySync.headsFolder + "/" + name,
                                                     maxBytes: Head.maxBytes + EncryptedObject.overhead + Self.counterByteCount)
            return (name, sealed, etag)
        }
        let what = "the head of document \(document) from device \(device)"
        let plainBytes: [UInt8]
        do { plainBytes = try key.open(kind: .head, document: document, name: sealedName, sealed: sealed) } catch {
            throw .encryption(.refused(object: what, reason: "\(error)"))
        }
        guard plainBytes.count >= Self.counterByteCount else { throw .encryption(.refused(object: what, reason: "no counter")) }
        var counter: UInt64 = 0
        for i in (0..<8).reversed() { counter = counter << 8 | UInt64(plainBytes[i]) }
        if let h = round.highest(plain), counter < h {
            throw .encryption(.replayedHead(object: what, counter: counter, highest: h))
        }
        return (Array(plainBytes[Self.counterByteCount...]), etag, counter)
    }

    /// A blob from the remote, opened and checked against its SHA-256 name.
    func fetchBlob(document: UUID, blob: BlobName) async throws(SyncError) -> [UInt8] {
        let cacheKey = document.uuidString + "/" + blob.hex
        if let b = round.blob(cacheKey) { return b }
        let sealedName: String
        do { sealedName = try Self.sealedBlobName(key: key, document: document, blob: blob) } catch { throw .remote(error) }
        let what = "blob \(blob.hex.prefix(12))… of document \(document)"
        let sealed: [UInt8]
        switch await inner.getResult(LibrarySync.blobsFolder + "/" + sealedName, maxBytes: PageBlob.maxBytes + EncryptedObject.overhead) {
        case .success(let b): sealed = b
        // Missing: not a refusal (nothing was tampered with); the round asks for it (§8.1).
        case .failure(.notFound): throw .remote(.notFound(LibrarySync.blobsFolder + "/" + blob.hex))
        case .failure(let e): throw .remote(e)
        }
        let plain: [UInt8]
        do { plain = try key.open(kind: .blob, document: document, name: sealedName, sealed: sealed) } catch {
            throw .encryption(.refused(object: what, reason: "\(error)"))
        }
        guard BlobName(of: plain) == blob else { throw .encryption(.refused(object: what, reason: "its content is not its name")) }
        round.keepBlob(cacheKey, plain)
        return plain
    }

    // MARK: Remote

    package func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        guard folder == LibrarySync.headsFolder else { throw .failed(folder, "an encrypted remote lists heads only") }
        if let l = round.listing { return l }
        let entries = try await inner.list(folder)
        do { return try Self.openListing(entries, key: key) } catch { throw .invalidResponse(folder, "\(error)") }
    }

    package func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let place = try place(path)
        do { return try await open(place, path) } catch {
            if case .remote(let e) = error { throw e }
            round.refuse("\(error)")
            throw .invalidResponse(path, "\(error)")
        }
    }

    /// What `get` reads at `place`, opened and checked.
    func open(_ place: Place, _ path: String) async throws(SyncError) -> (bytes: [UInt8], etag: String?) {
        switch place {
        case let .head(plain, d, v):
            if let h = round.head(plain) { return (h.bytes, h.etag) }
            let h = try await fetchHead(plain: plain, document: d, device: v)
            round.keepHead(plain, h)
            return (h.bytes, h.etag)
        case .blob(let b):
            guard let document else { throw .remote(.failed(path, "a blob read outside a document's round")) }
            return (try await fetchBlob(document: document, blob: b), nil)
        case .folder, .lostRequest:
            throw .remote(.failed(path, "not an object the round reads"))
        }
    }

    package func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        if case let .lostRequest(d, b) = try place(path) {
            // An empty marker; one the listing shows already is not written again.
            let name = try Self.sealedRequestName(key: key, document: d, blob: b)
            guard !round.listedRequests.contains(name) else { return }
            return try await inner.put(LibrarySync.headsFolder + "/" + name, [])
        }
        let (remotePath, sealed) = try seal(path, bytes)
        try await inner.put(remotePath, sealed)
    }

    package func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let (remotePath, sealed) = try seal(path, bytes)
        try await inner.create(remotePath, sealed)
    }

    func seal(_ path: String, _ bytes: [UInt8]) throws(RemoteError) -> (String, [UInt8]) {
        do {
            switch try place(path) {
            case let .head(plain, d, v):
                let name = try sealedHeadName(document: d, device: v)
                var plainBytes = [UInt8]()
                plainBytes.reserveCapacity(bytes.count + Self.counterByteCount)
                withUnsafeBytes(of: round.nextCounter(plain).littleEndian) { plainBytes.append(contentsOf: $0) }
                plainBytes.append(contentsOf: bytes)
                return (LibrarySync.headsFolder + "/" + name, try key.seal(kind: .head, document: d, name: name, plaintext: plainBytes))
            case .blob(let b):
                guard let document else { throw RemoteError.failed(path, "a blob written outside a document's round") }
                // The round named the blob by these bytes' SHA-256 (hashing them again would double
                // the cost of an upload); a reader checks it after opening.
                let name = try Self.sealedBlobName(key: key, document: document, blob: b)
                return (LibrarySync.blobsFolder + "/" + name, try key.seal(kind: .blob, document: document, name: name, plaintext: bytes))
            case .folder, .lostRequest:
                throw RemoteError.failed(path, "not an object that is sealed")
            }
        } catch let e as RemoteError {
            throw e
        } catch {
            throw .failed(path, "sealing failed: \(error)")
        }
    }

    package func delete(_ path: String) async throws(RemoteError) {
        switch try place(path) {
        case let .head(_, d, v): try await inner.delete(LibrarySync.headsFolder + "/" + sealedHeadName(document: d, device: v))
        case .blob(let b):
            guard let document else { throw .failed(path, "a blob removed outside a document's round") }
            let name: String
            do { name = try Self.sealedBlobName(key: key, document: document, blob: b) } catch { throw .failed(path, "\(error)") }
            try await inner.delete(LibrarySync.blobsFolder + "/" + name)
        case let .lostRequest(d, b): try await inner.delete(LibrarySync.headsFolder + "/" + Self.sealedRequestName(key: key, document: d, blob: b))
        case .folder: throw .failed(path, "a folder")
        }
    }

    package func makeFolder(_ path: String) async throws(RemoteError) {
        try await inner.makeFolder(path)
    }
}
