// A document round's local read (docs/sync.md §6 step 2): the document as it is here, reading only
// the pages that changed since the base, their elements' fingerprints (from the base's print tables
// where a stroke's coded bytes were seen before), through a session or under the lock alone.

import Foundation
import LulucatInk
import LulucatStore

/// What a document round read of the document here.
struct LocalRead {
    /// The elements of each page read, their coded strokes, and their fingerprints by id.
    var content: [UUID: PageContent] = [:]
    var encoded: [UUID: EncodedStrokes] = [:]
    var prints: [UUID: [UUID: UInt64]] = [:]
    /// Of each page read, its strokes' fingerprints by their coded bytes' digests (saved in the
    /// base, read next round instead of fingerprinting again).
    var printTables: [UUID: PrintTable] = [:]
    /// Of each page read, the strokes read hollow (id and ink, no samples: only good for copying
    /// their coded bytes into a blob, `PageFile.decodeKeepingStrokes(_:hollowing:)`).
    var hollow: [UUID: Set<UUID>] = [:]
    /// Each page's and the document's `modified` (ms) when they were read.
    var pageModified: [UUID: Int64] = [:]
    var documentModified: Int64 = 0
    /// How many element fingerprints were computed (the others came from print tables).
    var fingerprinted = 0
}

extension DocumentRound {
    /// The document as it is here, reading only the pages that changed since the base.
    mutating func readLocal(_ s: some SyncReadable) async throws(SyncError) -> LocalDocument {
        let doc = await s.syncDocument
        read.documentModified = doc.modified.milliseconds
        var pages: [LocalPage] = []
        var salvaged: Set<UUID>?
        for e in doc.pages {
            read.pageModified[e.id] = e.modified.milliseconds
            let canvas = e.canvasSize
            if let b = base, b.pageModified[e.id] == e.modified.milliseconds, let rec = b.head.pages[e.id],
               rec.fields.value.width == canvas.width, rec.fields.value.height == canvas.height, b.states[e.id] != nil {
                pages.append(LocalPage(id: e.id, canvas: canvas, elements: nil))
                continue
            }
            let known = base?.prints[e.id]?.entries ?? [:]
            let (content, encoded, hollow): (PageContent, EncodedStrokes?, Set<UUID>)
            if s.readsHollow, !known.isEmpty {
                // Strokes whose coded bytes we fingerprinted before are not decoded: the blob
                // copies their bytes (the same codec), and their fingerprints are in the table.
                (content, encoded, hollow) = try await SyncError.store { () async throws(StoreError) in
                    try await s.syncContent(of: e.id) { id, digest, codec in
                        codec == .compact && known[id]?.digest == digest
                    }
                }
            } else {
                (content, encoded) = try await SyncError.store { () async throws(StoreError) in try await s.syncContent(of: e.id) }
                hollow = []
            }
            // Set or cleared: a page read again (through a session, after a head changed
            // elsewhere) has no hollow stroke left from the earlier read.
            read.hollow[e.id] = hollow.isEmpty ? nil : hollow
            read.content[e.id] = content
            if let encoded { read.encoded[e.id] = encoded }
            let prints: [(id: UUID, fingerprint: UInt64)]
            if encoded == nil {
                prints = Self.fingerprints(content.elements)
                read.fingerprinted += prints.count
            } else {
                let (p, table, computed) = Self.fingerprints(content.elements, encoded: encoded!, known: known, hollow: hollow)
                // A hollow stroke has no samples to fingerprint: its entry must be there.
                guard hollow.allSatisfy({ table[$0] != nil }) else { throw .damaged(object: "the print table of page \(e.id)", reason: "a stroke read hollow has no fingerprint") }
                prints = p
                read.fingerprinted += computed
                read.printTables[e.id] = PrintTable(entries: table, base64: nil)
            }
            read.prints[e.id] = Dictionary(prints, uniquingKeysWith: { a, _ in a })
            if salvaged == nil { salvaged = salvagedSinceBase(s.package) }
            pages.append(LocalPage(id: e.id, canvas: content.canvasSize, elements: prints, salvaged: salvaged!.contains(e.id)))
        }
        var assets: [UUID: AssetRef] = [:]
        for name in (try? library.fileSystem.contentsOfDirectory(s.package.assetsPath)) ?? [] {
            guard let (aid, ext) = DocumentPackage.parseName(name, extensions: DocumentPackage.assetExtensions),
                  base?.head.assets[aid] == nil else { continue }
            let path = s.package.assetPath(aid, ext: ext)
            let bytes: [UInt8]
            do { bytes = try library.fileSystem.readFile(path) } catch { throw .store(.file(error)) }
            assets[aid] = AssetRef(blob: BlobName(of: bytes), ext: ext)
        }
        let origin = DocumentOrigin(created: doc.created.milliseconds, engine: doc.engine.rawValue, codec: doc.codec.description)
        return LocalDocument(id: id, title: doc.title, origin: origin, pages: pages, assets: assets)
    }

    /// The pages of the base salvaged from damage since the base was saved: a damaged copy kept
    /// in `recovered/` (`<page>.content`, `<page>.content.N`, by `lnote repair` or a session
    /// that met the damage) newer than the base file. Their missing elements are not erasures.
    func salvagedSinceBase(_ package: DocumentPackage) -> Set<UUID> {
        let fs = library.fileSystem
        guard let base, let names = try? fs.contentsOfDirectory(package.recoveredPath), !names.isEmpty,
              let saved = try? fs.stamp(sync.store.basePath(id)) else { return [] }
        var out = Set<UUID>()
        for name in names {
            let u = Array(name.utf8)
            guard u.count >= 44, String(decoding: u[36..<44], as: UTF8.self) == ".content",
                  let page = UUID(strictString: String(decoding: u[0..<36], as: UTF8.self)), base.states[page] != nil,
                  let kept = try? fs.stamp(package.recoveredPath + "/" + name), kept.modifiedNanoseconds >= saved.modifiedNanoseconds else { continue }
            out.insert(page)
        }
        return out
    }

    /// Each element's fingerprint, in order, taken from `known` for a stroke whose coded bytes
    /// have the digest recorded there (the fingerprint definition is unchanged: it was computed
    /// from those bytes' stroke); the others are computed. Also returns the page's new print
    /// table and how many fingerprints were computed.
    static func fingerprints(_ elements: [Element], encoded: EncodedStrokes, known: [UUID: StrokePrint], hollow: Set<UUID> = [])
        -> ([(id: UUID, fingerprint: UInt64)], [UUID: StrokePrint], Int) {
        var out: [(id: UUID, fingerprint: UInt64)] = []
        out.reserveCapacity(elements.count)
        var table: [UUID: StrokePrint] = [:]
        table.reserveCapacity(elements.count)
        var missing: [Int] = []
        var digests: [Int: UInt64] = [:]
        for (i, e) in elements.enumerated() {
            if !hollow.isEmpty, case .stroke(let st) = e, st.samples.isEmpty, hollow.contains(st.id), let k = known[st.id] {
                // Read hollow because its digest is the table's (checked by the read itself).
                out.append((st.id, k.fingerprint))
                table[st.id] = k
                continue
            }
            if case .stroke(let st) = e, let d = encoded.digest(of: st) {
                if let k = known[st.id], k.digest == d {
                    out.append((st.id, k.fingerprint))
                    table[st.id] = k
                    continue
                }
                digests[i] = d
            }
            missing.append(i)
            out.append((e.id, 0))
        }
        if !missing.isEmpty {
            let computed = fingerprints(missing.map { elements[$0] })
            for (k, i) in missing.enumerated() {
                out[i].fingerprint = computed[k].fingerprint
                if let d = digests[i] { table[out[i].id] = StrokePrint(digest: d, fingerprint: computed[k].fingerprint) }
            }
        }
        return (out, table, missing.count)
    }

    /// Each element's fingerprint, in order; a large page's are computed on every core (the same
    /// values, in a fraction of the time).
    static func fingerprints(_ elements: [Element]) -> [(id: UUID, fingerprint: UInt64)] {
        let n = elements.count
        guard n >= 256 else { return elements.map { ($0.id, PageBlob.fingerprint($0)) } }
        var prints = [UInt64](repeating: 0, count: n)
        let chunks = min(ProcessInfo.processInfo.activeProcessorCount * 2, 16)
        prints.withUnsafeMutableBufferPointer { out in
            nonisolated(unsafe) let out = out
            DispatchQueue.concurrentPerform(iterations: chunks) { c in
                for i in stride(from: c * n / chunks, to: (c + 1) * n / chunks, by: 1) { out[i] = PageBlob.fingerprint(elements[i]) }
            }
        }
        return zip(elements, prints).map { ($0.id, $1) }
    }
}

/// What a round reads of a document: through its session, or under its lock alone.
protocol SyncReadable: Sendable {
    var syncDocument: DocumentMetadata { get async }
    var package: DocumentPackage { get }
    func syncContent(of page: UUID) async throws(StoreError) -> (PageContent, EncodedStrokes?)
    /// Whether `syncContent(of:hollowing:)` may read strokes hollow: only a reader whose content
    /// nothing applies or saves (the lock-only read, whose join writes nothing).
    var readsHollow: Bool { get }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>)
}

extension DocumentSession: SyncReadable {
    var syncDocument: DocumentMetadata { get async { document } }
    func syncContent(of page: UUID) async throws(StoreError) -> (PageContent, EncodedStrokes?) { try contentForSync(of: page) }
    nonisolated var readsHollow: Bool { false }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        let (c, e) = try contentForSync(of: page)
        return (c, e, [])
    }
}

extension LockedDocumentReader: SyncReadable {
    var syncDocument: DocumentMetadata { get async { document } }
    func syncContent(of page: UUID) async throws(StoreError) -> (PageContent, EncodedStrokes?) { try contentForSync(of: page) }
    var readsHollow: Bool { true }
    func syncContent(of page: UUID, hollowing: @escaping @Sendable (UUID, UInt64, SampleCodecID) -> Bool) async throws(StoreError)
        -> (PageContent, EncodedStrokes?, Set<UUID>) {
        try contentForSync(of: page, hollowing: hollowing)
    }
}
