// The local sync state, outside the packages (docs/sync.md §6): the device id, the heads seen, the
// index of bases and per document its base, all in `.sync/` at the library root, through the
// store's file system seam.

import Foundation
import LulucatStore

/// Reads and writes `.sync/` at the library root with the store's atomic durable writes.
struct SyncStateStore {
    let folder: String
    let fs: any FileSystem

    init(library: Library) {
        folder = library.root + "/.sync"
        fs = library.fileSystem
    }

    var docsFolder: String { folder + "/docs" }

    func prepare() throws(SyncError) {
        try SyncError.state { () throws(FileError) in
            try fs.ensureDirectory(folder)
            try fs.ensureDirectory(docsFolder)
        }
    }

    /// This library's device id, made on first use.
    func deviceID() throws(SyncError) -> UUID {
        let path = folder + "/device.json"
        if let file = read(DeviceFile.self, path, limit: 1 << 16), let id = UUID(strictString: file.device) { return id }
        try prepare()
        let id = UUID()
        try write(DeviceFile(device: id.uuidString), to: path)
        return id
    }

    /// Replaces a file whole without syncing (`FileSystem.replaceQuickly`): only for files whose
    /// rollback the next round repairs by itself (seen.json, the index, a base marked published, §6).
    func writeQuickly(_ bytes: [UInt8], to path: String) throws(SyncError) {
        try SyncError.state { () throws(FileError) in try fs.replaceQuickly(bytes, at: path) }
    }

    // MARK: One round at a time

    var roundLockPath: String { folder + "/round.lock" }

    /// Takes the library's round lock (`.sync/round.lock`, an advisory lock that also keeps out a
    /// second round of this process), waiting up to `wait` for a round that holds it.
    func lockRounds(waiting wait: Duration) async throws(SyncError) -> FileDescriptor {
        let deadline = ContinuousClock.now + wait
        var pause = Duration.milliseconds(5)
        while true {
            do { return try fs.lock(roundLockPath) } catch {
                guard error.errno == EWOULDBLOCK || error.errno == EAGAIN else { throw .localState(error) }
            }
            if Task.isCancelled { throw .cancelled }
            guard ContinuousClock.now < deadline else { throw .anotherRoundRunning }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(200))
        }
    }

    func unlockRounds(_ fd: FileDescriptor) { fs.unlock(fd) }

    // MARK: The remote known to be plain

    var plainRemotePath: String { folder + "/plain-remote" }

    /// Whether `identity` is the remote the last rounds saw holding no encryption settings.
    func isKnownPlain(_ identity: String) -> Bool {
        guard !identity.isEmpty, let bytes = try? fs.readFile(plainRemotePath, limit: 1 << 16) else { return false }
        return String(decoding: bytes, as: UTF8.self) == identity
    }

    /// Records that the remote `identity` holds no encryption settings (a listing showed none).
    /// Not synced: a rollback only makes the next round wait for its listing before its blobs.
    func recordPlain(_ identity: String) {
        guard !identity.isEmpty else { return }
        try? writeQuickly(Array(identity.utf8), to: plainRemotePath)
    }

    /// Forgets which remote is plain (another remote was set up), and the server's name.
    func forgetPlainRemote() {
        try? fs.removeIfPresent(plainRemotePath)
        try? fs.removeIfPresent(serverNamePath)
    }

    // MARK: The server's name

    var serverNamePath: String { folder + "/server" }

    /// The longest server name kept (a `Server` header is the server's, untrusted: cut here).
    static let serverNameLimit = 200

    /// What a `Server` header becomes in `.sync/server`: printable ASCII only, at most
    /// `serverNameLimit` bytes; nil when nothing is left.
    static func keptServerName(_ name: String) -> String? {
        let kept = String(decoding: name.utf8.filter { $0 >= 0x20 && $0 < 0x7F }.prefix(serverNameLimit), as: UTF8.self)
        return kept.isEmpty ? nil : kept
    }

    /// The server name recorded for the remote `identity` (`.sync/server`: the identity, a line
    /// feed, the name), nil when none is or it was recorded for another remote.
    func serverName(_ identity: String) -> String? {
        guard !identity.isEmpty, let bytes = try? fs.readFile(serverNamePath, limit: 1 << 16) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let nl = text.firstIndex(of: "\n"), String(text[..<nl]) == identity else { return nil }
        return Self.keptServerName(String(text[text.index(after: nl)...]))
    }

    /// Records the server's name for the remote `identity`. Not synced: a rollback only makes the
    /// next process's early blob uploads take the two-request `create` until a reply comes.
    func recordServerName(_ identity: String, _ name: String) {
        guard !identity.isEmpty, !identity.contains("\n"), let kept = Self.keptServerName(name) else { return }
        try? writeQuickly(Array((identity + "\n" + kept).utf8), to: serverNamePath)
    }

    // MARK: Heads seen

    func seen() -> [String: String] {
        read([String: String].self, folder + "/seen.json") ?? [:]
    }

    func saveSeen(_ seen: [String: String]) throws(SyncError) {
        // A rollback re-reads heads already joined: the join is idempotent.
        try write(seen, to: folder + "/seen.json", durable: false)
    }

    // MARK: Bases

    func baseIDs() -> [UUID] {
        ((try? fs.contentsOfDirectory(docsFolder)) ?? []).compactMap { name in
            name.hasSuffix(".base") ? UUID(strictString: String(name.dropLast(5))) : nil
        }
    }

    func basePath(_ id: UUID) -> String { docsFolder + "/" + id.uuidString + ".base" }
    func statesFolder(_ id: UUID) -> String { docsFolder + "/" + id.uuidString }
    func statePath(_ id: UUID, page: UUID) -> String { statesFolder(id) + "/" + page.uuidString + ".state" }

    /// The base of a document, or nil when there is none or it cannot be read (then the document
    /// is merged as new: recorded again, it joins to the same state).
    ///
    /// Format 2 (`"version": 2`) holds its page states itself (`"states"`, base64 per page), so a
    /// base and its states are one file written in one synced write. Format 1 (no `"version"`)
    /// keeps each state in `docs/<document>/<page>.state`, checked against `"stateDigests"`.
    func base(_ id: UUID) -> Base? {
        let identity = cacheable ? baseFileIdentity(id) : nil
        if let identity, let b = Self.recentBases.base(basePath(id), identity: identity) { return b }
        let b = readBase(id)
        if let identity, let b { Self.recentBases.keep(b, at: basePath(id), identity: identity) }
        return b
    }

    /// Bases this process saved or read last, by path, with the identity of the file each is in
    /// (inode, size, mtime in ns: a base is replaced by renaming a new file over it, so another
    /// write, from here or elsewhere, changes it). A base found here is the file's, read without
    /// decoding its JSON, its states and its print tables again. Only on the real file system (the
    /// identity is the file system's `stamp`).
    static let recentBases = BaseCache(limit: 16)
    var cacheable: Bool { fs is PosixFileSystem }

    func readBase(_ id: UUID) -> Base? {
        guard let o = read(BaseFile.self, basePath(id)), let hb = Data(base64Encoded: o.head),
              let head = try? Head.decode(Array(hb)), head.document == id else { return nil }
        let (docModified, published) = (o.docModified, o.published)
        let version = o.version ?? 1
        guard version >= 1, version <= 3 else { return nil }
        var pageModified: [UUID: Int64] = [:]
        for (k, v) in o.pageModified { if let p = UUID(strictString: k) { pageModified[p] = v } }
        var states: [UUID: PageState] = [:]
        if version >= 2 {
            guard let inline = o.states else { return nil }
            var saved: [UUID: (state: PageState, base64: String)] = [:]
            for page in head.pages.keys {
                guard let b64 = inline[page.uuidString], let bytes = Data(base64Encoded: b64),
                      let st = try? PageBlob.decodeState(Array(bytes)) else { return nil }
                states[page] = st
                saved[page] = (st, b64)
            }
            var b = Base(head: head, states: states, docModified: docModified, pageModified: pageModified, published: published)
            b.savedStates = saved
            if version >= 3, let tables = o.prints {
                // A table that does not decode is dropped (its page's strokes are fingerprinted).
                for page in head.pages.keys {
                    guard let b64 = tables[page.uuidString], let bytes = Data(base64Encoded: b64),
                          let entries = try? PrintTable.decode(Array(bytes)) else { continue }
                    b.prints[page] = PrintTable(entries: entries, base64: b64)
                }
            }
            return b
        }
        // Each page state must be the one this base was saved with: a crash between writing the
        // states and the base file leaves newer states beside an older head, which would name
        // blobs that lack them (the base is then unusable, and the document is merged as new).
        let digests = o.stateDigests
        for page in head.pages.keys {
            guard let bytes = try? fs.readFile(statePath(id, page: page), limit: PageBlob.maxBytes),
                  let st = try? PageBlob.decodeState(bytes) else { return nil }
            if let digests, digests[page.uuidString] != Self.stateDigest(bytes) { return nil }
            states[page] = st
        }
        return Base(head: head, states: states, docModified: docModified, pageModified: pageModified, published: published,
                    statesInFiles: true)
    }

    /// Saves a base in format 3: one file holding the head, every page state and the pages'
    /// print tables, replaced whole (a temporary file renamed over it), synced when `durable`
    /// (see the round for when a rollback is harmless). Formats 1 and 2 are read, never written.
    /// - Returns: the states as saved (`Base.savedStates` of the base now on disk).
    @discardableResult
    func save(_ base: Base, previous: Base?, durable: Bool) throws(SyncError) -> [UUID: (state: PageState, base64: String)] {
        let id = base.head.document
        var pm: [String: Int64] = [:]
        for (k, v) in base.pageModified { pm[k.uuidString] = v }
        var inline: [String: String] = [:]
        var saved: [UUID: (state: PageState, base64: String)] = [:]
        for (page, st) in base.states {
            let b64: String
            if let known = base.savedStates[page], known.state == st { b64 = known.base64 }
            else if let known = previous?.savedStates[page], known.state == st { b64 = known.base64 }
            else { b64 = Data(PageBlob.encodeState(st)).base64EncodedString() }
            inline[page.uuidString] = b64
            saved[page] = (st, b64)
        }
        var tables: [String: String] = [:]
        for (page, t) in base.prints where base.states[page] != nil && !t.entries.isEmpty {
            tables[page.uuidString] = t.base64 ?? Data(t.encode()).base64EncodedString()
        }
        let headBytes = base.headBytes.isEmpty ? base.head.encode() : base.headBytes
        let bytes = BaseFile(docModified: base.docModified, head: Data(headBytes).base64EncodedString(), pageModified: pm,
                             prints: tables, published: base.published, states: inline, version: 3).encoded()
        Self.recentBases.forget(basePath(id))
        if durable { try SyncError.state { () throws(FileError) in try fs.writeAtomically(bytes, to: basePath(id)) } }
        else { try writeQuickly(bytes, to: basePath(id)) }
        if previous?.statesInFiles == true || previous == nil {
            // Format 1's state files, if any: unused from now on (this base holds its states).
            // Removed only after the new base is written, so they never sit beside a base that lacks them.
            if (try? fs.info(statesFolder(id))) != nil { try? fs.removeTree(statesFolder(id)) }
        }
        if cacheable, let identity = baseFileIdentity(id) {
            // What a read of the file just written gives.
            var kept = base
            kept.savedStates = saved
            kept.statesInFiles = false
            kept.headBytes = headBytes
            for (page, t) in kept.prints {
                if kept.states[page] == nil || t.entries.isEmpty { kept.prints[page] = nil }
                else if t.base64 == nil { kept.prints[page]!.base64 = tables[page.uuidString] }
            }
            Self.recentBases.keep(kept, at: basePath(id), identity: identity)
        }
        return saved
    }

    /// FNV-1a 64 of a page state file, in hex: which state a base was saved with.
    static func stateDigest(_ bytes: [UInt8]) -> String { String(fnv1a64(bytes), radix: 16) }

    // MARK: The index of bases

    /// What a round needs of a base to tell whether its document needs work, kept for every base
    /// in one file (`.sync/index.json`) so a round where few documents changed reads only those
    /// bases. An entry counts only while its base file is the one it describes (same inode, size
    /// and modification time); otherwise the base itself is read. A stale or lost index costs
    /// reads, never a skipped document.
    struct IndexEntry: Equatable {
        var docModified: Int64
        var published: Bool
        var live: Bool
        var file: String
        /// The size in bytes of our head as published (nil when the base is unpublished or the
        /// entry is older): the next listing must show it at that size (`LibraryRound.headsNotKept`).
        var headBytes: Int? = nil
    }

    var indexPath: String { folder + "/index.json" }

    func index() -> [UUID: IndexEntry] {
        guard let o = read([String: Lossy<IndexFileEntry>].self, indexPath) else { return [:] }
        var out: [UUID: IndexEntry] = [:]
        for (k, v) in o {
            guard let id = UUID(strictString: k), let e = v.value else { continue }
            out[id] = IndexEntry(docModified: e.docModified, published: e.published, live: e.live, file: e.file, headBytes: e.head)
        }
        return out
    }

    func saveIndex(_ entries: [UUID: IndexEntry]) throws(SyncError) {
        var o: [String: IndexFileEntry] = [:]
        for (id, e) in entries {
            o[id.uuidString] = IndexFileEntry(docModified: e.docModified, published: e.published, live: e.live, file: e.file,
                                              head: e.published ? e.headBytes : nil)
        }
        try write(o, to: indexPath, durable: false)
    }

    /// The identity of a base file now (inode, size, modification time in ns: the file
    /// system's `stamp`), or nil.
    func baseFileIdentity(_ id: UUID) -> String? {
        guard let st = try? fs.stamp(basePath(id)), st.kind == .file else { return nil }
        return "\(st.inode)-\(st.size)-\(st.modifiedNanoseconds)"
    }

    func indexEntry(for base: Base) -> IndexEntry? {
        baseFileIdentity(base.head.document).map {
            IndexEntry(docModified: base.docModified, published: base.published, live: base.documentState.isLive, file: $0,
                       headBytes: base.published ? (base.headBytes.isEmpty ? base.head.encode().count : base.headBytes.count) : nil)
        }
    }
}

extension Date {
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
