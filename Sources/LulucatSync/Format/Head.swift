// A head (docs/sync.md §4): one document's state as one device knows it, naming its pages' blobs.
// A small binary file (docs/sync.md §4), read as untrusted input.

import Foundation
import LulucatStore

/// One page of a head: its fields, its removal and the blob holding its elements.
package struct HeadPage: Hashable, Sendable {
    package var fields: Register<PageFields>
    package var removed: VersionVector?
    package var blob: BlobName

    package init(fields: Register<PageFields>, removed: VersionVector?, blob: BlobName) {
        self.fields = fields
        self.removed = removed
        self.blob = blob
    }
}

package struct Head: Hashable, Sendable {
    package static let format = "lulucat.sync.head"
    /// The newest version read; a head is written as 1 unless it has a history section (§12.2).
    package static let formatVersion = 2
    package static let maxBytes = 16 << 20

    package var document: UUID
    package var device: UUID
    package var clock: UInt64
    package var title: Register<String>
    package var origin: DocumentOrigin
    package var deleted: VersionVector?
    package var assets: [UUID: AssetRef]
    package var pages: [UUID: HeadPage]
    /// This device's history (docs/sync.md §12.2): empty in a version 1 head.
    package var history = HeadHistory()

    /// A head of the document's fields alone, no asset and no page yet (set `assets` and `pages`).
    package init(document: UUID, device: UUID, clock: UInt64, title: Register<String>, origin: DocumentOrigin,
                deleted: VersionVector?) {
        self.document = document
        self.device = device
        self.clock = clock
        self.title = title
        self.origin = origin
        self.deleted = deleted
        assets = [:]
        pages = [:]
    }

    /// `device`'s head for a merged state: its document fields and assets, and `pages` (each page's
    /// fields with the blob that holds it).
    package init(device: UUID, of state: DocumentState, pages: [UUID: HeadPage]) {
        self.init(document: state.id, device: device, clock: state.clock, title: state.title, origin: state.origin,
                  deleted: state.deleted)
        assets = state.assets
        self.pages = pages
    }

    /// The remote file name: `<document>.<device>.head`.
    package static func fileName(document: UUID, device: UUID) -> String {
        document.uuidString + "." + device.uuidString + ".head"
    }

    /// Parses a head file name exactly; nil for anything else.
    package static func parseFileName(_ name: String) -> (document: UUID, device: UUID)? {
        let u = Array(name.utf8)
        guard u.count == 36 + 1 + 36 + 5, name.hasSuffix(".head"), u[36] == 46 else { return nil }
        guard let d = UUID(strictString: String(decoding: u[0..<36], as: UTF8.self)),
              let v = UUID(strictString: String(decoding: u[37..<73], as: UTF8.self)) else { return nil }
        return (d, v)
    }

    // MARK: Binary form (docs/sync.md §4)

    package static let magic: [UInt8] = [0x4C, 0x53, 0x48, 0x44]  // "LSHD"

    package func encode() -> [UInt8] {
        var devs = Set<UUID>([title.stamp.device])
        for p in pages.values {
            devs.insert(p.fields.stamp.device)
            if let r = p.removed { devs.formUnion(r.clocks.keys) }
        }
        if let d = deleted { devs.formUnion(d.clocks.keys) }
        let devices = devs.sorted { $0.precedesInBytes($1) }
        var index: [UUID: Int] = [:]
        for (i, d) in devices.enumerated() { index[d] = i }
        var w = SyncWriter()
        w.raw(Head.magic)
        w.uint16(history.isEmpty ? 1 : 2)
        w.uint16(0)
        w.uuid(document)
        w.uuid(device)
        w.varint(clock)
        w.varint(devices.count)
        for d in devices { w.uuid(d) }
        func stamp(_ s: Stamp) { w.varint(s.clock); w.varint(index[s.device]!) }
        func string(_ s: String) { w.varint(s.utf8.count); w.raw(Array(s.utf8)) }
        func vv(_ v: VersionVector?) {
            guard let v else { w.varint(0); return }
            w.varint(1)
            let entries = v.clocks.map { (index[$0.key]!, $0.value) }.sorted { $0.0 < $1.0 }
            w.varint(entries.count)
            for (i, c) in entries { w.varint(i); w.varint(c) }
        }
        stamp(title.stamp)
        string(title.value)
        w.varint(UInt64(max(0, origin.created)))
        string(origin.engine)
        string(origin.codec)
        vv(deleted)
        let assetList = assets.sorted { $0.key.precedesInBytes($1.key) }
        w.varint(assetList.count)
        for (id, a) in assetList { w.uuid(id); w.raw(a.blob.bytes); string(a.ext) }
        let pageList = pages.sorted { $0.key.precedesInBytes($1.key) }
        w.varint(pageList.count)
        for (id, p) in pageList {
            w.uuid(id)
            w.raw(p.blob.bytes)
            w.varint(p.fields.value.key.digits.count)
            for d in p.fields.value.key.digits { w.varint(UInt64(d)) }
            w.varint(UInt64(UInt32(bitPattern: p.fields.value.width)))
            w.varint(UInt64(UInt32(bitPattern: p.fields.value.height)))
            stamp(p.fields.stamp)
            vv(p.removed)
        }
        if !history.isEmpty { history.write(&w) }
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(SyncFormatError) -> Head {
        guard bytes.count <= maxBytes else { throw .invalid(0, "head larger than \(maxBytes) bytes") }
        var r = SyncReader(bytes)
        guard Array(try r.raw(4)) == magic else { throw .badMagic }
        let v = try r.uint16()
        guard Int(v) <= formatVersion else { throw .newerVersion(Int(v)) }
        _ = try r.uint16()
        let document = try r.uuid()
        let device = try r.uuid()
        let clock = try r.clock()
        let nd = try r.count(limit: 1 << 20, minBytes: 16)
        var devices: [UUID] = []
        for _ in 0..<nd { devices.append(try r.uuid()) }
        func stamp() throws(SyncFormatError) -> Stamp {
            let c = try r.clock()
            let i = try r.varint()
            guard i < UInt64(devices.count) else { throw .invalid(r.offset, "device index outside the table") }
            return Stamp(clock: c, device: devices[Int(i)])
        }
        func string(max: Int) throws(SyncFormatError) -> String {
            let n = try r.count(limit: max)
            guard let s = String(validating: Array(try r.raw(n)), as: UTF8.self) else { throw .invalid(r.offset, "not UTF-8") }
            return s
        }
        func vv() throws(SyncFormatError) -> VersionVector? {
            let flag = try r.varint()
            guard flag != 0 else { return nil }
            guard flag == 1 else { throw .invalid(r.offset, "bad removal flag") }
            let n = try r.count(limit: devices.count, minBytes: 2)
            var out = VersionVector()
            for _ in 0..<n {
                let i = try r.varint()
                guard i < UInt64(devices.count) else { throw .invalid(r.offset, "device index outside the table") }
                out.clocks[devices[Int(i)]] = try r.clock()
            }
            return out
        }
        let titleStamp = try stamp()
        let title = Register(try string(max: 4096), stamp: titleStamp)
        let created = try r.varint()
        guard created <= UInt64(Int64.max) else { throw .invalid(r.offset, "created") }
        let engine = try string(max: 32)
        let codec = try string(max: 32)
        let deleted = try vv()
        var assets: [UUID: AssetRef] = [:]
        for _ in 0..<(try r.count(limit: 1 << 20, minBytes: 49)) {
            let id = try r.uuid()
            let blob = BlobName(bytes: Array(try r.raw(32)))
            let ext = try string(max: 8)
            guard ["jpg", "jpeg", "png", "heic"].contains(ext), assets[id] == nil else { throw .invalid(r.offset, "asset \(id)") }
            assets[id] = AssetRef(blob: blob, ext: ext)
        }
        var pages: [UUID: HeadPage] = [:]
        for _ in 0..<(try r.count(limit: 1 << 20, minBytes: 54)) {
            let id = try r.uuid()
            let blob = BlobName(bytes: Array(try r.raw(32)))
            let kl = try r.varint()
            guard kl >= 1, kl <= UInt64(PositionKey.maxDigits) else { throw .invalid(r.offset, "key length") }
            var digits: [UInt32] = []
            for _ in 0..<kl {
                let d = try r.varint()
                guard d <= UInt64(UInt32.max) else { throw .invalid(r.offset, "key digit") }
                digits.append(UInt32(d))
            }
            let wv = try r.varint(), hv = try r.varint()
            guard wv <= UInt64(Int32.max), hv <= UInt64(Int32.max) else { throw .invalid(r.offset, "canvas size") }
            let fields = Register(PageFields(key: PositionKey(digits), width: Int32(wv), height: Int32(hv)), stamp: try stamp())
            guard pages[id] == nil else { throw .invalid(r.offset, "page \(id) listed twice") }
            pages[id] = HeadPage(fields: fields, removed: try vv(), blob: blob)
        }
        let history = v >= 2 ? try HeadHistory.read(&r) : HeadHistory()
        guard r.remaining == 0 else { throw .invalid(r.offset, v >= 2 ? "bytes after the history" : "bytes after the pages") }
        var head = Head(document: document, device: device, clock: clock, title: title,
                        origin: DocumentOrigin(created: Int64(created), engine: engine, codec: codec), deleted: deleted)
        head.assets = assets
        head.pages = pages
        head.history = history
        return head
    }
}
