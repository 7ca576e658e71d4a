// A document's base (docs/sync.md §6): the merged state last applied here (its head and its pages'
// states), the print tables that spare fingerprints, and the few bases kept in memory.

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
