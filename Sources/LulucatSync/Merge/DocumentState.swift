// One document's sync state: what a head holds, joined over every device's heads (docs/sync.md §4-5).

import Foundation
import LulucatCrypto
import LulucatStore

/// A page's fields under one last-writer-wins stamp: its place in the page order and its canvas.
package struct PageFields: Hashable, Comparable, Sendable {
    package var key: PositionKey
    package var width: Int32
    package var height: Int32

    package init(key: PositionKey, width: Int32, height: Int32) {
        self.key = key
        self.width = width
        self.height = height
    }

    package static func < (a: PageFields, b: PageFields) -> Bool {
        if a.key != b.key { return a.key < b.key }
        return (a.width, a.height) < (b.width, b.height)
    }
}

/// One page of a document's state, removed ones too.
package struct PageRecord: Hashable, Sendable {
    package var fields: Register<PageFields>
    /// nil while never removed; else what the removing devices had seen.
    package var removed: VersionVector?
    package var state: PageState

    package init(fields: Register<PageFields>, removed: VersionVector? = nil, state: PageState = PageState()) {
        self.fields = fields
        self.removed = removed
        self.state = state
    }

    package func joined(_ other: PageRecord) -> PageRecord {
        PageRecord(fields: fields.joined(other.fields), removed: VersionVector.join(removed, other.removed),
                   state: state.joined(other.state))
    }

    /// Edit wins over delete: live unless removed by a device that had seen every stamp in it.
    package var isLive: Bool {
        guard let removed else { return true }
        return !removed.covers(fields.stamp) || state.anyStamp(notCoveredBy: removed)
    }

    package func include(into vv: inout VersionVector) {
        vv.include(fields.stamp)
        state.include(into: &vv)
    }
}

/// When and how a document was first made: the earliest wins, so every device creates it alike.
package struct DocumentOrigin: Hashable, Comparable, Sendable {
    /// Milliseconds since 1970 (shown only, never used to decide between devices' edits).
    package var created: Int64
    package var engine: String
    package var codec: String

    package init(created: Int64, engine: String, codec: String) {
        self.created = created
        self.engine = engine
        self.codec = codec
    }

    package static func < (a: DocumentOrigin, b: DocumentOrigin) -> Bool {
        (a.created, a.engine, a.codec) < (b.created, b.engine, b.codec)
    }
}

/// An asset a page may show: its blob and its file extension.
package struct AssetRef: Hashable, Comparable, Sendable {
    package var blob: BlobName
    package var ext: String

    package init(blob: BlobName, ext: String) {
        self.blob = blob
        self.ext = ext
    }

    package static func < (a: AssetRef, b: AssetRef) -> Bool { (a.blob.hex, a.ext) < (b.blob.hex, b.ext) }
}

/// The whole merge state of one document.
package struct DocumentState: Hashable, Sendable {
    package var id: UUID
    package var title: Register<String>
    package var origin: DocumentOrigin
    package var deleted: VersionVector?
    package var assets: [UUID: AssetRef]
    package var pages: [UUID: PageRecord]

    package init(id: UUID, title: Register<String>, origin: DocumentOrigin, deleted: VersionVector? = nil,
                assets: [UUID: AssetRef] = [:], pages: [UUID: PageRecord] = [:]) {
        self.id = id
        self.title = title
        self.origin = origin
        self.deleted = deleted
        self.assets = assets
        self.pages = pages
    }

    /// The join: commutative, associative and idempotent (MergeLawTests).
    package func joined(_ other: DocumentState) -> DocumentState {
        precondition(id == other.id, "joining the states of two documents")
        var pages = self.pages
        for (id, p) in other.pages { pages[id] = pages[id].map { $0.joined(p) } ?? p }
        var assets = self.assets
        for (id, a) in other.assets { assets[id] = assets[id].map { Swift.min($0, a) } ?? a }
        return DocumentState(id: id, title: title.joined(other.title), origin: Swift.min(origin, other.origin),
                             deleted: VersionVector.join(deleted, other.deleted), assets: assets, pages: pages)
    }

    /// Edit wins over delete, for the document as for its pages.
    package var isLive: Bool {
        guard let deleted else { return true }
        if !deleted.covers(title.stamp) { return true }
        return pages.values.contains { !deleted.covers($0.fields.stamp) || $0.state.anyStamp(notCoveredBy: deleted) }
    }

    /// The live pages in reading order: by key, then by id.
    package var orderedLivePageIDs: [UUID] {
        pages.filter { $0.value.isLive }.sorted { a, b in
            if a.value.fields.value.key != b.value.fields.value.key { return a.value.fields.value.key < b.value.fields.value.key }
            return a.key.precedesInBytes(b.key)
        }.map(\.key)
    }

    /// Every stamp the state holds, as a version vector: what a deletion made now has seen.
    package var seen: VersionVector {
        var vv = VersionVector()
        vv.include(title.stamp)
        for p in pages.values { p.include(into: &vv) }
        return vv
    }

    /// The largest clock in the state.
    package var clock: UInt64 {
        var c = title.stamp.clock
        for p in pages.values {
            c = Swift.max(c, p.fields.stamp.clock)
            for e in p.state.elements.values { c = Swift.max(c, e.stamp.clock) }
            if let r = p.removed { c = Swift.max(c, r.clocks.values.max() ?? 0) }
        }
        if let d = deleted { c = Swift.max(c, d.clocks.values.max() ?? 0) }
        return c
    }
}

/// A blob's name: the SHA-256 of its bytes, as 64 lowercase hexadecimal characters.
package struct BlobName: Hashable, Sendable, CustomStringConvertible {
    package let hex: String

    /// Parses exactly 64 characters `[0-9a-f]`; nil for anything else (names come from servers).
    package init?(hex: String) {
        let u = Array(hex.utf8)
        guard u.count == 64, u.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        self.hex = hex
    }

    package init(of bytes: [UInt8]) {
        // The platform's SHA-256 (SHA instructions where the CPU has them); the store's own
        // implementation if the platform's fails. The same digest either way.
        self.init(bytes: (try? CryptoBackend.sha256(bytes)) ?? ContentDigest.sha256(bytes))
    }

    /// From the 32 raw digest bytes.
    package init(bytes digest: [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        hex = String(decoding: out, as: UTF8.self)
    }

    /// Whether a name in `blobs/` is an upload's temporary file beside a blob: the blob's 64
    /// hexadecimal characters, a dot, then 1...63 safe characters (`WebDAVRemote.create`'s
    /// `<hex>.<16 hex>.tmp`; nginx's `<hex>.<10 digits>`, left when its copy into place failed,
    /// a full disk). Never a blob; garbage collection removes it (docs/sync.md §8).
    package static func isUploadDebris(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard u.count > 65, u.count <= 128, u[64] == 46, BlobName(hex: String(decoding: u[..<64], as: UTF8.self)) != nil else { return false }
        return RemotePath.isSafeName(name)
    }

    /// The 32 raw digest bytes.
    package var bytes: [UInt8] {
        let u = Array(hex.utf8)
        func v(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 87 }
        return (0..<32).map { v(u[2 * $0]) << 4 | v(u[2 * $0 + 1]) }
    }

    package var description: String { hex }
}
