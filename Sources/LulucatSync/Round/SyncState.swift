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

    var documentState: DocumentState {
        var pages: [UUID: PageRecord] = [:]
        for (id, p) in head.pages {
            pages[id] = PageRecord(fields: p.fields, removed: p.removed, state: states[id] ?? PageState())
        }
        return DocumentState(id: head.document, title: head.title, origin: head.origin, deleted: head.deleted,
                             assets: head.assets, pages: pages)
    }
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

    func writeJSON(_ object: Any, to path: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        try fs.writeAtomically(Array(data) + [10], to: path)
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
        try writeJSON(seen, to: folder + "/seen.json")
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
    func base(_ id: UUID) -> Base? {
        guard let o = readJSON(basePath(id)), let hs = o["head"] as? String, let hb = Data(base64Encoded: hs),
              let head = try? Head.decode(Array(hb)), head.document == id,
              let docModified = (o["docModified"] as? NSNumber)?.int64Value,
              let published = o["published"] as? Bool,
              let pm = o["pageModified"] as? [String: NSNumber] else { return nil }
        var pageModified: [UUID: Int64] = [:]
        for (k, v) in pm { if let p = UUID(strictString: k) { pageModified[p] = v.int64Value } }
        var states: [UUID: PageState] = [:]
        for page in head.pages.keys {
            guard let bytes = try? fs.readFile(statePath(id, page: page), limit: PageBlob.maxBytes),
                  let st = try? PageBlob.decodeState(bytes) else { return nil }
            states[page] = st
        }
        return Base(head: head, states: states, docModified: docModified, pageModified: pageModified, published: published)
    }

    /// Saves a base; page states are written only where they differ from `previous`.
    func save(_ base: Base, previous: Base?) throws {
        let id = base.head.document
        try fs.ensureDirectory(statesFolder(id))
        for (page, st) in base.states where previous?.states[page] != st {
            try fs.writeAtomically(PageBlob.encodeState(st), to: statePath(id, page: page))
        }
        var pm: [String: Int64] = [:]
        for (k, v) in base.pageModified { pm[k.uuidString] = v }
        try writeJSON(["head": Data(base.head.encode()).base64EncodedString(), "docModified": base.docModified,
                       "pageModified": pm, "published": base.published], to: basePath(id))
    }
}

extension Date {
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
