// The local sync state, outside the packages (docs/sync.md §6): the device id, the heads seen,
// and per document the merged state last applied (its head and its pages' states).

import Foundation
import LulucatStore

/// The merged state last applied to one document, and what the store looked like after.
struct Base {
    /// Our head as last computed (published or not).
    var head: Head
    var states: [UUID: PageState]
    /// The document's `modified` (ms) after the last apply; a different one means a local change.
    var docModified: Int64
    /// Each page's `modified` (ms) after the last apply.
    var pageModified: [UUID: Int64]
    /// Whether `head` and every blob it names were acknowledged by the remote.
    var published: Bool
    /// Read from a base of format 1, whose page states are files beside it (§6): the next save in
    /// format 2 removes them once the new base is durable.
    var statesInFiles = false
    /// Page states as last saved and their bytes (base64): a save copies the bytes of a state
    /// equal to one of these instead of coding it again.
    var savedStates: [UUID: (state: PageState, base64: String)] = [:]
    /// Base format 3: per page, its strokes' fingerprints by the digest of their coded bytes
    /// (`EncodedStrokes.digest`), so a round reading a changed page fingerprints only the strokes
    /// whose bytes it has not seen. A cache: an entry is used only when its digest matches, so
    /// it is right whatever the states say, and a lost or damaged table costs time only.
    var prints: [UUID: PrintTable] = [:]
    /// `head.encode()`, when the round made it already (a save and the head's PUT share it).
    var headBytes: [UInt8] = []

    var documentState: DocumentState {
        var pages: [UUID: PageRecord] = [:]
        for (id, p) in head.pages {
            pages[id] = PageRecord(fields: p.fields, removed: p.removed, state: states[id] ?? PageState())
        }
        return DocumentState(id: head.document, title: head.title, origin: head.origin, deleted: head.deleted,
                             assets: head.assets, pages: pages)
    }
}

/// One element's fingerprint and the digest of the coded bytes it was computed from.
struct StrokePrint: Equatable {
    var digest: UInt64
    var fingerprint: UInt64
}

/// A page's table of `StrokePrint`s (base format 3, docs/sync.md §6), and its bytes as last read
/// or saved (base64), which a save copies when the table did not change.
struct PrintTable {
    var entries: [UUID: StrokePrint]
    var base64: String?

    static let magic: [UInt8] = [0x4C, 0x53, 0x46, 0x50]  // "LSFP"
    static let version: UInt16 = 1

    /// magic, version (u16 LE), reserved (u16), count (varint), then per entry: id (16), digest
    /// (u64 LE), fingerprint (u64 LE). Entries in any order, ids distinct.
    func encode() -> [UInt8] {
        var w = SyncWriter()
        w.raw(Self.magic)
        w.uint16(Self.version)
        w.uint16(0)
        w.varint(entries.count)
        for (id, p) in entries {
            w.uuid(id)
            w.uint64(p.digest)
            w.uint64(p.fingerprint)
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(SyncFormatError) -> [UUID: StrokePrint] {
        var r = SyncReader(bytes)
        guard Array(try r.raw(4)) == magic else { throw .badMagic }
        let v = try r.uint16()
        guard v <= version else { throw .newerVersion(Int(v)) }
        _ = try r.uint16()
        let n = try r.count(limit: PageBlob.maxTable, minBytes: 32)
        var out: [UUID: StrokePrint] = [:]
        out.reserveCapacity(n)
        for _ in 0..<n {
            let id = try r.uuid()
            let p = StrokePrint(digest: try r.uint64(), fingerprint: try r.uint64())
            guard out.updateValue(p, forKey: id) == nil else { throw .invalid(r.offset, "print table repeats an id") }
        }
        guard r.remaining == 0 else { throw .invalid(r.offset, "bytes after the print table") }
        return out
    }
}

/// A few bases in memory, each with the identity of the file it was read from or saved to.
final class BaseCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: (identity: String, base: Base, use: Int)] = [:]
    private var uses = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func base(_ path: String, identity: String) -> Base? {
        lock.withLock {
            guard let e = entries[path], e.identity == identity else { return nil }
            uses += 1
            entries[path]!.use = uses
            return e.base
        }
    }

    func keep(_ base: Base, at path: String, identity: String) {
        lock.withLock {
            uses += 1
            entries[path] = (identity, base, uses)
            if entries.count > limit, let oldest = entries.min(by: { $0.value.use < $1.value.use })?.key { entries[oldest] = nil }
        }
    }

    func forget(_ path: String) { _ = lock.withLock { entries.removeValue(forKey: path) } }
}

/// Reads and writes `.sync/` at the library root with the store's atomic durable writes.
struct SyncStateStore {
    let folder: String
    let fs: any FileSystem

    init(library: Library) {
        folder = library.root + "/.sync"
        fs = library.fileSystem
    }

    var docsFolder: String { folder + "/docs" }

    func prepare() throws {
        try fs.ensureDirectory(folder)
        try fs.ensureDirectory(docsFolder)
    }

    /// This library's device id, made on first use.
    func deviceID() throws -> UUID {
        let path = folder + "/device.json"
        if let bytes = try? fs.readFile(path, limit: 1 << 16),
           let o = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
           let s = o["device"] as? String, let id = UUID(strictString: s) {
            return id
        }
        try prepare()
        let id = UUID()
        try writeJSON(["device": id.uuidString], to: path)
        return id
    }

    /// `durable`: synced before and after the rename (the atomic durable write). Without it the
    /// file is still replaced whole (a temporary file renamed over it), but a power cut may bring
    /// back the previous version: only for files whose rollback the next round repairs by itself
    /// (seen.json, the index, a base marked published, §6).
    func writeJSON(_ object: Any, to path: String, durable: Bool = true, pretty: Bool = true) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys])
        if durable { try fs.writeAtomically(Array(data) + [10], to: path) } else { try writeQuickly(Array(data) + [10], to: path) }
    }

    /// Replaces a file whole, without syncing (see `writeJSON`).
    func writeQuickly(_ bytes: [UInt8], to path: String) throws {
        let (dir, name) = (String(path[..<path.lastIndex(of: "/")!]), String(path[path.index(after: path.lastIndex(of: "/")!)...]))
        let temp = dir + "/" + temporaryFilePrefix + UUID().uuidString + "-" + name
        let fd = try fs.open(temp, .createExclusive)
        do {
            try fs.write(fd, bytes)
            try fs.close(fd)
            try fs.rename(temp, to: path)
        } catch {
            try? fs.unlink(temp)
            throw error
        }
    }

    func readJSON(_ path: String) -> [String: Any]? {
        guard let bytes = try? fs.readFile(path, limit: 64 << 20) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    // MARK: Heads seen

    func seen() -> [String: String] {
        (readJSON(folder + "/seen.json") as? [String: String]) ?? [:]
    }

    func saveSeen(_ seen: [String: String]) throws {
        // A rollback re-reads heads already joined: the join is idempotent.
        try writeJSON(seen, to: folder + "/seen.json", durable: false)
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
    /// identity is `lstat`'s).
    static let recentBases = BaseCache(limit: 16)
    var cacheable: Bool { fs is PosixFileSystem }

    func readBase(_ id: UUID) -> Base? {
        guard let o = readJSON(basePath(id)), let hs = o["head"] as? String, let hb = Data(base64Encoded: hs),
              let head = try? Head.decode(Array(hb)), head.document == id,
              let docModified = (o["docModified"] as? NSNumber)?.int64Value,
              let published = o["published"] as? Bool,
              let pm = o["pageModified"] as? [String: NSNumber] else { return nil }
        let version = (o["version"] as? NSNumber)?.intValue ?? 1
        guard version <= 3 else { return nil }
        var pageModified: [UUID: Int64] = [:]
        for (k, v) in pm { if let p = UUID(strictString: k) { pageModified[p] = v.int64Value } }
        var states: [UUID: PageState] = [:]
        if version >= 2 {
            guard let inline = o["states"] as? [String: String] else { return nil }
            var saved: [UUID: (state: PageState, base64: String)] = [:]
            for page in head.pages.keys {
                guard let b64 = inline[page.uuidString], let bytes = Data(base64Encoded: b64),
                      let st = try? PageBlob.decodeState(Array(bytes)) else { return nil }
                states[page] = st
                saved[page] = (st, b64)
            }
            var b = Base(head: head, states: states, docModified: docModified, pageModified: pageModified, published: published)
            b.savedStates = saved
            if version >= 3, let tables = o["prints"] as? [String: String] {
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
        let digests = o["stateDigests"] as? [String: String]
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
    func save(_ base: Base, previous: Base?, durable: Bool) throws -> [UUID: (state: PageState, base64: String)] {
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
        let bytes = Self.baseJSON(head: Data(headBytes).base64EncodedString(), docModified: base.docModified,
                                  pageModified: pm, published: base.published, states: inline, prints: tables)
        Self.recentBases.forget(basePath(id))
        if durable { try fs.writeAtomically(bytes, to: basePath(id)) } else { try writeQuickly(bytes, to: basePath(id)) }
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

    /// The JSON of a format-3 base (format 2 when `prints` is nil), written directly
    /// (JSONSerialization's sorted-keys writer cost more than the rest of a one-page round): keys
    /// sorted, no spaces, a newline at the end. Every string in it is base64 or a UUID, so
    /// nothing needs escaping.
    static func baseJSON(head: String, docModified: Int64, pageModified: [String: Int64], published: Bool,
                         states: [String: String], prints: [String: String]? = nil) -> [UInt8] {
        var out = "{\"docModified\":\(docModified),\"head\":\"\(head)\",\"pageModified\":{"
        out.reserveCapacity(head.utf8.count + states.values.reduce(0) { $0 + $1.utf8.count }
                            + (prints?.values.reduce(0) { $0 + $1.utf8.count } ?? 0) + 150 * states.count + 200)
        for (i, k) in pageModified.keys.sorted().enumerated() {
            if i > 0 { out += "," }
            out += "\"\(k)\":\(pageModified[k]!)"
        }
        out += "},"
        if let prints {
            out += "\"prints\":{"
            for (i, k) in prints.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                out += "\"\(k)\":\"\(prints[k]!)\""
            }
            out += "},"
        }
        out += "\"published\":\(published ? "true" : "false"),\"states\":{"
        for (i, k) in states.keys.sorted().enumerated() {
            if i > 0 { out += "," }
            out += "\"\(k)\":\"\(states[k]!)\""
        }
        out += "},\"version\":\(prints == nil ? 2 : 3)}\n"
        return Array(out.utf8)
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
    }

    var indexPath: String { folder + "/index.json" }

    func index() -> [UUID: IndexEntry] {
        guard let o = readJSON(indexPath) as? [String: [String: Any]] else { return [:] }
        var out: [UUID: IndexEntry] = [:]
        for (k, v) in o {
            guard let id = UUID(strictString: k), let m = (v["docModified"] as? NSNumber)?.int64Value,
                  let p = v["published"] as? Bool, let l = v["live"] as? Bool, let f = v["file"] as? String else { continue }
            out[id] = IndexEntry(docModified: m, published: p, live: l, file: f)
        }
        return out
    }

    func saveIndex(_ entries: [UUID: IndexEntry]) throws {
        var o: [String: Any] = [:]
        for (id, e) in entries {
            o[id.uuidString] = ["docModified": e.docModified, "published": e.published, "live": e.live, "file": e.file]
        }
        try writeJSON(o, to: indexPath, durable: false)
    }

    /// The identity of a base file now (inode, size, modification time in ns), or nil.
    func baseFileIdentity(_ id: UUID) -> String? {
        var st = stat()
        guard lstat(basePath(id), &st) == 0 else { return nil }
        #if canImport(Darwin)
        let ns = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
        #else
        let ns = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        #endif
        return "\(st.st_ino)-\(st.st_size)-\(ns)"
    }

    func indexEntry(for base: Base) -> IndexEntry? {
        baseFileIdentity(base.head.document).map {
            IndexEntry(docModified: base.docModified, published: base.published, live: base.documentState.isLive, file: $0)
        }
    }
}

extension Date {
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
