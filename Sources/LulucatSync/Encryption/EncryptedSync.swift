// An encrypted library's sync (docs/encryption.md §8): the key kept on this device, the remote's
// shared key settings, and a round that reads and checks every object it will use before the
// plain round runs, so a refused object stops sync with nothing changed here.

import Foundation
import LulucatCrypto
import LulucatStore

/// Why an encrypted sync stopped. Every case means nothing was changed in the library.
public enum EncryptionError: Error, Equatable, CustomStringConvertible {
    /// This library holds no key (not set up with `--encrypt`, or `.sync/library.key` is gone).
    case notSetUp(String)
    case wrongPassphrase
    /// The remote has no key settings file (reset, emptied, or never encrypted).
    case settingsMissing
    /// The remote's key settings are not the ones this library's key confirms.
    case settingsReplaced(String)
    /// The remote holds a library synced without encryption.
    case remoteNotEncrypted
    /// The remote holds an encrypted library, and this library holds no key for it.
    case remoteEncrypted
    /// An object that failed its checks (authentication, place, size, content).
    case refused(object: String, reason: String)
    /// A head older than one already read from the same device for the same document.
    case replayedHead(object: String, counter: UInt64, highest: UInt64)

    static let nothingChanged = "; sync stopped for this library and nothing was changed here"

    public var description: String {
        switch self {
        case .notSetUp(let why): return "this library is not set up for encrypted sync (\(why)): run 'lnote remote add URL --encrypt'"
        case .wrongPassphrase: return "wrong passphrase: it does not open the remote's key settings" + Self.nothingChanged
        case .settingsMissing: return "the remote has no key settings (heads/keys): it was emptied or replaced" + Self.nothingChanged
        case .settingsReplaced(let why): return "the remote's key settings were replaced (\(why))" + Self.nothingChanged
        case .remoteNotEncrypted: return "the remote holds a library synced without encryption; an encrypted library needs an empty remote"
        case .remoteEncrypted:
            return "the remote holds an end-to-end encrypted library and this library has no key for it: join it with "
                + "'lnote remote add URL --encrypt' and its passphrase" + Self.nothingChanged
        case let .refused(object, reason): return "\(object) was refused: \(reason)" + Self.nothingChanged
        case let .replayedHead(object, counter, highest):
            return "\(object) is an older copy (counter \(counter), already read \(highest)): the server replayed it" + Self.nothingChanged
        }
    }
}

/// What this device keeps of an encrypted remote: the library key in `.sync/library.key` (32 bytes,
/// mode 0600), and in `.sync/encryption.json` the key check, the key settings last confirmed and
/// the head counters.
struct LocalEncryption {
    var keyCheck: [UInt8]
    var settings: [UInt8]
    var settingsETag: String?
    var highest: [String: UInt64]
    var written: [String: UInt64]

    static func keyPath(_ library: Library) -> String { library.root + "/.sync/library.key" }
    static func statePath(_ library: Library) -> String { library.root + "/.sync/encryption.json" }

    static func isSetUp(_ library: Library) -> Bool { (try? library.fileSystem.fileExists(keyPath(library))) == true }

    /// The key, read into protected memory straight from the file (never through an array).
    static func readKey(_ library: Library) throws -> LibraryKey {
        let path = keyPath(library)
        let fs = library.fileSystem
        let fd: FileDescriptor
        do { fd = try fs.open(path, .read) } catch { throw EncryptionError.notSetUp("no \(path)") }
        defer { try? fs.close(fd) }
        let material = try SecretBytes(count: LibraryKey.byteCount) { out in
            var done = 0
            while done < out.count {
                let n = try fs.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: out[done...]))
                guard n > 0 else { throw EncryptionError.notSetUp("\(path) is shorter than a key") }
                done += n
            }
            var extra: UInt8 = 0
            let more = try withUnsafeMutableBytes(of: &extra) { try fs.read(fd, into: $0) }
            guard more == 0 else { throw EncryptionError.notSetUp("\(path) is longer than a key") }
        }
        return try LibraryKey(material)
    }

    /// Writes the key with mode 0600 from its first byte (the seam's atomic durable write of a
    /// secret: a temporary file made 0600, synced, renamed, the folder synced), from the key's
    /// own memory, never through a Swift array.
    static func writeKey(_ key: LibraryKey, _ library: Library) throws {
        let path = keyPath(library)
        try key.withMaterial { raw in try library.fileSystem.writeSecretAtomically(raw, to: path) }
    }

    static func load(_ library: Library) throws -> LocalEncryption {
        let store = SyncStateStore(library: library)
        guard let o = store.read(EncryptionFile.self, statePath(library)),
              let kc = unhexBytes(o.keyCheck), let st = Data(base64Encoded: o.settings) else {
            throw EncryptionError.notSetUp("no readable \(statePath(library))")
        }
        return LocalEncryption(keyCheck: kc, settings: Array(st), settingsETag: o.settingsETag,
                               highest: o.highest ?? [:], written: o.written ?? [:])
    }

    func save(_ library: Library) throws {
        let store = SyncStateStore(library: library)
        let file = EncryptionFile(keyCheck: hexString(keyCheck), settings: Data(settings).base64EncodedString(),
                                  settingsETag: settingsETag, highest: highest, written: written)
        try store.write(file, to: LocalEncryption.statePath(library))
    }

    static func remove(_ library: Library) {
        try? library.fileSystem.removeIfPresent(keyPath(library))
        try? library.fileSystem.removeIfPresent(statePath(library))
    }
}

/// The remote's one shared settings file, `heads/keys` (docs/encryption.md §8.1): the key settings
/// (88 bytes, §1) and a settings object sealed under the library key holding their SHA-256, so a
/// device with the key tells a rewrap by another device from a replacement without the passphrase.
enum SettingsFile {
    static let path = LibrarySync.headsFolder + "/" + EncryptedRemote.settingsName
    static let byteCount = RemoteKeys.byteCount + EncryptedObject.overhead + 32
    static let nilDocument = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    static func make(_ settings: RemoteKeys, key: LibraryKey) throws -> [UInt8] {
        let keys = settings.encoded
        return keys + (try key.seal(kind: .settings, document: nilDocument, name: EncryptedRemote.settingsName,
                                    plaintext: ContentDigest.sha256(keys)))
    }

    static func keySettings(_ bytes: [UInt8]) throws -> RemoteKeys {
        guard bytes.count == byteCount else { throw EncryptionError.settingsReplaced("\(bytes.count) bytes, not \(byteCount)") }
        do { return try RemoteKeys(decoding: Array(bytes[0..<RemoteKeys.byteCount])) } catch {
            throw EncryptionError.settingsReplaced("\(error)")
        }
    }

    /// Whether `key` made these settings: the confirmation opens and holds their hash.
    static func confirm(_ bytes: [UInt8], key: LibraryKey) throws {
        _ = try keySettings(bytes)
        let plain: [UInt8]
        do {
            plain = try key.open(kind: .settings, document: nilDocument, name: EncryptedRemote.settingsName,
                                 sealed: Array(bytes[RemoteKeys.byteCount...]))
        } catch {
            throw EncryptionError.settingsReplaced("their confirmation does not open with this library's key: \(error)")
        }
        guard plain == ContentDigest.sha256(Array(bytes[0..<RemoteKeys.byteCount])) else {
            throw EncryptionError.settingsReplaced("their confirmation names other key settings")
        }
    }
}

/// The key derivation's cost: calibrated in the product; tests pass a small count.
package struct KeyDerivationCost: Sendable {
    /// nil: calibrated on this device (about 250 ms).
    package var iterations: Int?
    package var minimum: Int
    public static let standard = KeyDerivationCost(iterations: nil, minimum: RemoteKeys.iterationFloor)
    package init(iterations: Int?, minimum: Int) {
        self.iterations = iterations
        self.minimum = minimum
    }
}

/// Setting up and changing the passphrase of an encrypted remote.
public enum RemoteEncryption {
    /// Whether the library syncs encrypted (it holds a key).
    public static func isSetUp(_ library: Library) -> Bool { LocalEncryption.isSetUp(library) }

    /// Forgets this device's key and state (the library then syncs in clear, with another remote).
    public static func forget(_ library: Library) { LocalEncryption.remove(library) }

    /// Joins or creates the encrypted remote: the first device makes the library key and the key
    /// settings; every other unlocks them with the passphrase. The key is then kept in
    /// `.sync/library.key` (0600); the passphrase is kept nowhere.
    /// - Returns: whether this call created the key settings.
    /// - Throws: `EncryptionError.wrongPassphrase`, `.remoteNotEncrypted`, `.settingsReplaced`, `SyncError.remote`.
    @discardableResult
    public static func setUp(library: Library, remote: any Remote, passphrase: String) async throws -> Bool {
        try await setUp(library: library, remote: remote, passphrase: passphrase, cost: .standard)
    }

    @discardableResult
    package static func setUp(library: Library, remote: any Remote, passphrase: String, cost: KeyDerivationCost) async throws -> Bool {
        try library.prepare()
        let store = SyncStateStore(library: library)
        try store.prepare()
        _ = try store.deviceID()
        var entries: [RemoteEntry] = []
        switch await remote.listResult(LibrarySync.headsFolder) {
        case .success(let e): entries = e
        case .failure(.notFound):
            try await remote.makeFolder(LibrarySync.headsFolder)
            try await remote.makeFolder(LibrarySync.blobsFolder)
        case .failure(let e): throw SyncError.remote(e)
        }
        var created = false
        var bytes: [UInt8]
        let key: LibraryKey
        if entries.contains(where: { $0.name == EncryptedRemote.settingsName }) {
            bytes = try await remote.get(SettingsFile.path, maxBytes: 4096).bytes
            key = try unlock(bytes, passphrase: passphrase, cost: cost)
        } else {
            guard !entries.contains(where: { Head.parseFileName($0.name) != nil }) else { throw EncryptionError.remoteNotEncrypted }
            let made = cost.iterations.map { try? RemoteKeys.create(passphrase: passphrase, iterations: $0, random: CryptoBackend.randomBytes) }
                ?? (try? RemoteKeys.create(passphrase: passphrase))
            guard let (settings, k) = made else { throw SyncError.local("could not make the key settings") }
            bytes = try SettingsFile.make(settings, key: k)
            try await remote.put(SettingsFile.path, bytes)
            // Two first devices at once: whichever settings are there now win for both.
            let now = try await remote.get(SettingsFile.path, maxBytes: 4096).bytes
            if now == bytes { key = k; created = true } else {
                bytes = now
                key = try unlock(now, passphrase: passphrase, cost: cost)
            }
        }
        if LocalEncryption.isSetUp(library), let old = try? LocalEncryption.readKey(library), old.keyCheck != key.keyCheck {
            throw SyncError.local("this library already holds another library key; run 'lnote remote add' without --encrypt first to forget it")
        }
        try LocalEncryption.writeKey(key, library)
        try LocalEncryption(keyCheck: key.keyCheck, settings: bytes, settingsETag: nil, highest: [:], written: [:]).save(library)
        // A new remote: what the bases say was published was published elsewhere.
        try store.saveSeen([:])
        for id in store.baseIDs() {
            guard var b = store.base(id), b.published else { continue }
            let previous = b
            b.published = false
            try store.save(b, previous: previous, durable: true)
        }
        return created
    }

    static func unlock(_ bytes: [UInt8], passphrase: String, cost: KeyDerivationCost) throws -> LibraryKey {
        let settings = try SettingsFile.keySettings(bytes)
        let key: LibraryKey
        do { key = try settings.unlock(passphrase: passphrase, minimumIterations: cost.minimum) } catch {
            if let e = error as? CryptoError, e == .wrongPassphrase { throw EncryptionError.wrongPassphrase }
            throw error
        }
        try SettingsFile.confirm(bytes, key: key)
        return key
    }

    /// Changes the passphrase: the same library key wrapped anew (nothing else is re-encrypted).
    /// - Throws: `EncryptionError.wrongPassphrase` when `old` does not open the remote's settings,
    ///   `.settingsReplaced` when they hold another key than this library's.
    public static func changePassphrase(library: Library, remote: any Remote, old: String, new: String) async throws {
        try await changePassphrase(library: library, remote: remote, old: old, new: new, cost: .standard)
    }

    package static func changePassphrase(library: Library, remote: any Remote, old: String, new: String, cost: KeyDerivationCost) async throws {
        let mine = try LocalEncryption.readKey(library)
        var local = try LocalEncryption.load(library)
        let bytes = try await remote.settingsBytes()
        let settings = try SettingsFile.keySettings(bytes)
        let key = try unlock(bytes, passphrase: old, cost: cost)
        guard key.keyCheck == mine.keyCheck else { throw EncryptionError.settingsReplaced("they hold another library key") }
        let rewrapped: RemoteKeys
        do {
            if let n = cost.iterations {
                rewrapped = try settings.rewrap(oldPassphrase: old, newPassphrase: new, iterations: n, minimumIterations: cost.minimum,
                                                random: CryptoBackend.randomBytes)
            } else {
                rewrapped = try settings.rewrap(oldPassphrase: old, newPassphrase: new)
            }
        } catch {
            if let e = error as? CryptoError, e == .wrongPassphrase { throw EncryptionError.wrongPassphrase }
            throw error
        }
        let next = try SettingsFile.make(rewrapped, key: key)
        try await remote.put(SettingsFile.path, next)
        local.settings = next
        local.settingsETag = nil
        try local.save(library)
    }
}

/// An encrypted library's round (`LibrarySync` of a library that holds a key): the plain round over
/// an `EncryptedRemote`, after every object the round will read has been fetched, opened and checked.
struct EncryptedRound: Sendable {
    let library: Library
    let inner: any Remote
    let key: LibraryKey

    func status(offline: Bool) async throws -> SyncStatus {
        let local = try LocalEncryption.load(library)
        let round = EncryptionRound(highest: local.highest, written: local.written)
        let plain = try LibrarySync(library: library, remote: EncryptedRemote(inner: inner, key: key, round: round), key: nil)
        return try await plain.status(offline: offline)
    }

    /// One round. Throws an `EncryptionError` (nothing changed here) when any object the round
    /// would use fails its checks, the key settings changed, or a head is older than one read.
    func sync(options: SyncOptions, progress: @Sendable (SyncProgress) -> Void) async throws -> SyncReport {
        var local = try LocalEncryption.load(library)
        guard local.keyCheck == key.keyCheck else { throw EncryptionError.notSetUp(".sync/encryption.json names another key") }
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
        case .failure(.notFound): throw EncryptionError.settingsMissing
        case .failure(let e): throw SyncError.remote(e)
        }
        guard let settingsEntry = entries.first(where: { $0.name == EncryptedRemote.settingsName && !$0.isFolder }) else {
            throw EncryptionError.settingsMissing
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
        for e in plain {
            guard let (doc, dev) = Head.parseFileName(e.name), dev != sync.device else { continue }
            let etag = RemotePath.normalizedETag(e.etag)
            guard etag == nil || seen[e.name] != etag else { continue }
            let h = try await remote.fetchHead(plain: e.name, document: doc, device: dev)
            round.keepHead(e.name, h)
            fetched[e.name] = h.counter
            guard let head = try? Head.decode(h.bytes), head.document == doc, head.device == dev else { continue }  // the round reports it
            let base = store.base(doc)
            for (pid, p) in head.pages.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                // What the round reads (DocumentRound.state(of:)): a blob the base does not hold.
                if DocumentRound.knownState(of: pid, in: head, base: base) != nil { continue }
                _ = try await remote.fetchBlob(document: doc, blob: p.blob)
            }
            let package = library.package(doc)
            for (aid, ref) in head.assets where DocumentRound.lacksAsset(aid, ext: ref.ext, of: package, in: library) {
                _ = try await remote.fetchBlob(document: doc, blob: ref.blob)
            }
        }
        round.listing = plain

        // 3. The round, on exactly what was checked. Garbage collection lists blobs/, which an
        // encrypted remote does not offer (sealed names say nothing of what is referenced): it
        // does not run here (docs/encryption.md, not done).
        var plainOptions = options
        plainOptions.garbage = nil
        var report = try await sync.sync(options: plainOptions, progress: progress)
        // The requests of the checks too.
        report = sync.finish(report, stats0)
        for (name, counter) in fetched { round.raiseHighest(name, counter) }
        local.highest = round.highest
        local.written = round.written
        if settingsChanged || !fetched.isEmpty || local.written != writtenBefore { try local.save(library) }
        if let first = round.refusals.first { throw EncryptionError.refused(object: "an object read during the round", reason: first) }
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
    func settingsBytes() async throws -> [UInt8] {
        switch await getResult(SettingsFile.path, maxBytes: 4096) {
        case .success(let b): return b
        case .failure(.notFound): throw EncryptionError.settingsMissing
        case .failure(let e): throw SyncError.remote(e)
        }
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

func unhexBytes(_ text: String) -> [UInt8]? {
    let u = Array(text.utf8)
    guard u.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    var i = 0
    while i < u.count {
        guard let h = hexValue(u[i]), let l = hexValue(u[i + 1]) else { return nil }
        out.append(h << 4 | l)
        i += 2
    }
    return out
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: return c - 48
    case 97...102: return c - 87
    default: return nil
    }
}
