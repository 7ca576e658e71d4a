// A head (docs/sync.md §4): one document's state as one device knows it, naming its pages' blobs.
// UTF-8 JSON, keys sorted; read as untrusted input.

import Foundation
import LulucatStore

/// One page of a head: its fields, its removal and the blob holding its elements.
public struct HeadPage: Hashable, Sendable {
    public var fields: Register<PageFields>
    public var removed: VersionVector?
    public var blob: BlobName

    public init(fields: Register<PageFields>, removed: VersionVector?, blob: BlobName) {
        self.fields = fields
        self.removed = removed
        self.blob = blob
    }
}

public struct Head: Hashable, Sendable {
    public static let format = "lulucat.sync.head"
    public static let formatVersion = 1
    public static let maxBytes = 16 << 20

    public var document: UUID
    public var device: UUID
    public var clock: UInt64
    public var title: Register<String>
    public var origin: DocumentOrigin
    public var deleted: VersionVector?
    public var assets: [UUID: AssetRef]
    public var pages: [UUID: HeadPage]

    public init(document: UUID, device: UUID, clock: UInt64, title: Register<String>, origin: DocumentOrigin,
                deleted: VersionVector?, assets: [UUID: AssetRef], pages: [UUID: HeadPage]) {
        self.document = document
        self.device = device
        self.clock = clock
        self.title = title
        self.origin = origin
        self.deleted = deleted
        self.assets = assets
        self.pages = pages
    }

    /// The remote file name: `<document>.<device>.head`.
    public static func fileName(document: UUID, device: UUID) -> String {
        document.uuidString + "." + device.uuidString + ".head"
    }

    /// Parses a head file name exactly; nil for anything else.
    public static func parseFileName(_ name: String) -> (document: UUID, device: UUID)? {
        let u = Array(name.utf8)
        guard u.count == 36 + 1 + 36 + 5, name.hasSuffix(".head"), u[36] == 46 else { return nil }
        guard let d = UUID(strictString: String(decoding: u[0..<36], as: UTF8.self)),
              let v = UUID(strictString: String(decoding: u[37..<73], as: UTF8.self)) else { return nil }
        return (d, v)
    }

    // MARK: JSON

    public func encode() -> [UInt8] {
        var pagesJSON: [[String: Any]] = []
        for (id, p) in pages.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            pagesJSON.append([
                "id": id.uuidString, "blob": p.blob.hex, "key": p.fields.value.key.digits.map { Int($0) },
                "width": Int(p.fields.value.width), "height": Int(p.fields.value.height),
                "stamp": Head.stampJSON(p.fields.stamp), "removed": Head.vvJSON(p.removed),
            ])
        }
        var assetsJSON: [String: Any] = [:]
        for (id, a) in assets { assetsJSON[id.uuidString] = ["blob": a.blob.hex, "ext": a.ext] }
        let object: [String: Any] = [
            "format": Head.format, "formatVersion": Head.formatVersion,
            "document": document.uuidString, "device": device.uuidString, "clock": clock,
            "title": ["value": title.value, "stamp": Head.stampJSON(title.stamp)],
            "created": origin.created, "engine": origin.engine, "codec": origin.codec,
            "deleted": Head.vvJSON(deleted), "assets": assetsJSON, "pages": pagesJSON,
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Array(data) + [10]
    }

    public static func decode(_ bytes: [UInt8]) throws(SyncFormatError) -> Head {
        guard bytes.count <= maxBytes else { throw .invalid(0, "head larger than \(maxBytes) bytes") }
        guard let o = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw .invalid(0, "not a JSON object")
        }
        guard o["format"] as? String == format else { throw .badMagic }
        guard let v = o["formatVersion"] as? Int else { throw .invalid(0, "formatVersion missing") }
        guard v <= formatVersion else { throw .newerVersion(v) }
        let document = try uuid(o["document"], "document")
        let device = try uuid(o["device"], "device")
        guard let clock = (o["clock"] as? NSNumber)?.uint64Value else { throw .invalid(0, "clock") }
        guard let t = o["title"] as? [String: Any], let tv = t["value"] as? String, tv.utf8.count <= 4096 else {
            throw .invalid(0, "title")
        }
        let title = Register(tv, stamp: try stamp(t["stamp"]))
        guard let created = (o["created"] as? NSNumber)?.int64Value, let engine = o["engine"] as? String,
              let codec = o["codec"] as? String, engine.utf8.count <= 32, codec.utf8.count <= 32 else {
            throw .invalid(0, "created, engine or codec")
        }
        let deleted = try vv(o["deleted"])
        var assets: [UUID: AssetRef] = [:]
        guard let aj = o["assets"] as? [String: Any] else { throw .invalid(0, "assets") }
        for (k, value) in aj {
            guard let id = UUID(strictString: k), let a = value as? [String: Any],
                  let b = (a["blob"] as? String).flatMap(BlobName.init(hex:)), let ext = a["ext"] as? String,
                  ["jpg", "jpeg", "png", "heic"].contains(ext) else { throw .invalid(0, "asset \(k)") }
            assets[id] = AssetRef(blob: b, ext: ext)
        }
        var pages: [UUID: HeadPage] = [:]
        guard let pj = o["pages"] as? [[String: Any]] else { throw .invalid(0, "pages") }
        for p in pj {
            let id = try uuid(p["id"], "page id")
            guard pages[id] == nil else { throw .invalid(0, "page \(id) listed twice") }
            guard let b = (p["blob"] as? String).flatMap(BlobName.init(hex:)) else { throw .invalid(0, "page blob") }
            guard let k = p["key"] as? [NSNumber], !k.isEmpty, k.count <= PositionKey.maxDigits,
                  let w = (p["width"] as? NSNumber)?.int32Value, let h = (p["height"] as? NSNumber)?.int32Value,
                  w >= 0, h >= 0 else { throw .invalid(0, "page \(id) fields") }
            var digits: [UInt32] = []
            for d in k {
                guard d.int64Value >= 0 && d.int64Value <= Int64(UInt32.max) else { throw .invalid(0, "key digit") }
                digits.append(UInt32(d.int64Value))
            }
            let fields = Register(PageFields(key: PositionKey(digits), width: w, height: h), stamp: try stamp(p["stamp"]))
            pages[id] = HeadPage(fields: fields, removed: try vv(p["removed"]), blob: b)
        }
        return Head(document: document, device: device, clock: clock, title: title,
                    origin: DocumentOrigin(created: created, engine: engine, codec: codec),
                    deleted: deleted, assets: assets, pages: pages)
    }

    static func stampJSON(_ s: Stamp) -> [Any] { [s.clock, s.device.uuidString] }

    static func vvJSON(_ v: VersionVector?) -> Any {
        guard let v else { return NSNull() }
        var o: [String: Any] = [:]
        for (d, c) in v.clocks { o[d.uuidString] = c }
        return o
    }

    private static func uuid(_ v: Any?, _ what: String) throws(SyncFormatError) -> UUID {
        guard let s = v as? String, let id = UUID(strictString: s) else { throw .invalid(0, what) }
        return id
    }

    private static func stamp(_ v: Any?) throws(SyncFormatError) -> Stamp {
        guard let a = v as? [Any], a.count == 2, let c = (a[0] as? NSNumber)?.uint64Value,
              let s = a[1] as? String, let d = UUID(strictString: s) else { throw .invalid(0, "stamp") }
        return Stamp(clock: c, device: d)
    }

    private static func vv(_ v: Any?) throws(SyncFormatError) -> VersionVector? {
        if v == nil || v is NSNull { return nil }
        guard let o = v as? [String: Any] else { throw .invalid(0, "version vector") }
        var out = VersionVector()
        for (k, c) in o {
            guard let d = UUID(strictString: k), let n = (c as? NSNumber)?.uint64Value else { throw .invalid(0, "version vector") }
            out.clocks[d] = n
        }
        return out
    }
}
