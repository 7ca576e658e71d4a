// History (docs/sync.md §12): the page states each device published, as entries in its head (the
// newest, §12.2) and in history chunks the head names (the older ones, §12.3), and the retention
// rule that keeps some of them (§12.4).

import Foundation
import LulucatStore

/// One published state of one page by one device (docs/sync.md §12.1).
package struct HistoryEntry: Hashable, Sendable {
    package var page: UUID
    /// Milliseconds since 1970 on the publishing device's clock.
    package var time: Int64
    package var blob: BlobName
    /// Stroke elements on the page in that state.
    package var strokes: Int

    package init(page: UUID, time: Int64, blob: BlobName, strokes: Int) {
        self.page = page
        self.time = time
        self.blob = blob
        self.strokes = strokes
    }

    /// The order of §12.2: (time, page bytes, blob bytes).
    static func precedes(_ a: HistoryEntry, _ b: HistoryEntry) -> Bool {
        if a.time != b.time { return a.time < b.time }
        if a.page != b.page { return a.page.precedesInBytes(b.page) }
        return a.blob.hex < b.blob.hex
    }

    /// `time` is written as the difference from the previous entry's (`after`; 0 for the first),
    /// entries being in time order: 1 to 3 bytes instead of 6.
    func write(_ w: inout SyncWriter, after previous: Int64) {
        w.uuid(page)
        w.varint(UInt64(max(0, time - previous)))
        w.raw(blob.bytes)
        w.varint(strokes)
    }

    static func read(_ r: inout SyncReader, after previous: Int64) throws(SyncFormatError) -> HistoryEntry {
        let page = try r.uuid()
        let d = try r.varint()
        guard d <= UInt64(Int64.max - previous) else { throw .invalid(r.offset, "entry time") }
        let blob = BlobName(bytes: Array(try r.raw(32)))
        let s = try r.varint()
        guard s <= UInt64(Int32.max) else { throw .invalid(r.offset, "stroke count") }
        return HistoryEntry(page: page, time: previous + Int64(d), blob: blob, strokes: Int(s))
    }

    /// Entries in time order, each time after the previous one's.
    static func writeAll(_ sorted: [HistoryEntry], _ w: inout SyncWriter) {
        var previous: Int64 = 0
        for e in sorted {
            e.write(&w, after: previous)
            previous = max(previous, e.time)
        }
    }

    /// Entries in the order of §12.2, or the error a reader gives when they are not.
    static func readSorted(_ r: inout SyncReader, count: Int) throws(SyncFormatError) -> [HistoryEntry] {
        var out: [HistoryEntry] = []
        out.reserveCapacity(count)
        var previous: Int64 = 0
        for _ in 0..<count {
            let e = try read(&r, after: previous)
            previous = e.time
            if let last = out.last, !precedes(last, e) { throw .invalid(r.offset, "history entries out of order or repeated") }
            out.append(e)
        }
        return out
    }
}

/// A head's history section (docs/sync.md §12.2): the device's name, its history chunks (oldest
/// first), its newest entries.
package struct HeadHistory: Hashable, Sendable {
    package var deviceName: String = ""
    package var chunks: [BlobName] = []
    package var entries: [HistoryEntry] = []

    package init(deviceName: String = "", chunks: [BlobName] = [], entries: [HistoryEntry] = []) {
        self.deviceName = deviceName
        self.chunks = chunks
        self.entries = entries
    }

    /// Entries a head carries at most; one more rolls them into a new chunk.
    package static let inlineLimit = 32
    package static let maxNameBytes = 64
    /// Chunks a head names at most (32,768 × 32 entries a device, far beyond a year's retention).
    package static let maxChunks = 32_768

    /// Nothing to write: the head is written as version 1.
    var isEmpty: Bool { deviceName.isEmpty && chunks.isEmpty && entries.isEmpty }

    func write(_ w: inout SyncWriter) {
        let name = Array(HeadHistory.clippedName(deviceName).utf8)
        w.varint(name.count)
        w.raw(name)
        w.varint(chunks.count)
        for c in chunks { w.raw(c.bytes) }
        let sorted = entries.sorted(by: HistoryEntry.precedes)
        w.varint(sorted.count)
        HistoryEntry.writeAll(sorted, &w)
    }

    static func read(_ r: inout SyncReader) throws(SyncFormatError) -> HeadHistory {
        let n = try r.count(limit: maxNameBytes)
        guard let name = String(validating: Array(try r.raw(n)), as: UTF8.self) else { throw .invalid(r.offset, "device name not UTF-8") }
        var out = HeadHistory(deviceName: name)
        let chunkCount = try r.count(limit: maxChunks, minBytes: 32)
        var seen = Set<String>()
        for _ in 0..<chunkCount {
            let c = BlobName(bytes: Array(try r.raw(32)))
            guard seen.insert(c.hex).inserted else { throw .invalid(r.offset, "a history chunk named twice") }
            out.chunks.append(c)
        }
        let count = try r.count(limit: inlineLimit, minBytes: 50)
        out.entries = try HistoryEntry.readSorted(&r, count: count)
        return out
    }

    /// A name cut to at most 64 bytes of UTF-8, on a character boundary.
    static func clippedName(_ name: String) -> String {
        var out = ""
        var bytes = 0
        for c in name {
            let n = String(c).utf8.count
            guard bytes + n <= maxNameBytes else { break }
            out.append(c)
            bytes += n
        }
        return out
    }
}

/// A chunk of a device's older history entries (docs/sync.md §12.3), a blob its head names.
package struct HistoryBlob: Hashable, Sendable {
    package var document: UUID
    package var device: UUID
    package var entries: [HistoryEntry]

    package static let magic: [UInt8] = [0x4C, 0x53, 0x48, 0x49]  // "LSHI"
    package static let version: UInt16 = 1
    package static let maxBytes = 64 << 20
    package static let maxEntries = 1 << 20

    package init(document: UUID, device: UUID, entries: [HistoryEntry]) {
        self.document = document
        self.device = device
        self.entries = entries
    }

    package func encode() -> [UInt8] {
        var w = SyncWriter()
        w.raw(Self.magic)
        w.uint16(Self.version)
        w.uint16(0)
        w.uuid(document)
        w.uuid(device)
        var sorted = entries.sorted(by: HistoryEntry.precedes)
        // No two equal (§12.3).
        var i = 1
        while i < sorted.count { if sorted[i] == sorted[i - 1] { sorted.remove(at: i) } else { i += 1 } }
        w.varint(sorted.count)
        HistoryEntry.writeAll(sorted, &w)
        return w.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(SyncFormatError) -> HistoryBlob {
        guard bytes.count <= maxBytes else { throw .invalid(0, "history chunk larger than \(maxBytes) bytes") }
        var r = SyncReader(bytes)
        guard Array(try r.raw(4)) == magic else { throw .badMagic }
        let v = try r.uint16()
        guard v <= version else { throw .newerVersion(Int(v)) }
        _ = try r.uint16()
        let document = try r.uuid()
        let device = try r.uuid()
        let n = try r.count(limit: maxEntries, minBytes: 50)
        let entries = try HistoryEntry.readSorted(&r, count: n)
        guard r.remaining == 0 else { throw .invalid(r.offset, "bytes after the history entries") }
        return HistoryBlob(document: document, device: device, entries: entries)
    }
}

/// Which versions are kept (docs/sync.md §12.4): every one for `everyVersion`, then the newest of
/// each page per UTC day until `daily`, then per week until `weekly`; older, none.
///
/// Ages are in seconds, counted back from this device's clock (`HistoryOptions.now`); thinning
/// keeps the newest version of each page in each UTC day or week. Each device thins what it
/// publishes itself; garbage collection then lets go of the page blobs no kept version names.
public struct HistoryRetention: Sendable, Hashable {
    /// How long every version is kept, in seconds (a week by default).
    public var everyVersion: TimeInterval
    /// Until what age one version per page per UTC day is kept, in seconds (30 days by default;
    /// never less than `everyVersion`).
    public var daily: TimeInterval
    /// Until what age one version per page per week is kept, in seconds (365 days by default;
    /// never less than `daily`). Older versions are let go.
    public var weekly: TimeInterval

    /// Every version for `everyVersion` seconds, then one a day (per page) until `daily`, then one a week until `weekly`.
    public init(everyVersion: TimeInterval = 7 * 86_400, daily: TimeInterval = 30 * 86_400, weekly: TimeInterval = 365 * 86_400) {
        self.everyVersion = everyVersion
        self.daily = max(daily, everyVersion)
        self.weekly = max(weekly, self.daily)
    }

    /// The default: every version for a week, one a day for a month, one a week for a year.
    public static let standard = HistoryRetention()
    /// No history: no entry is written, none is listed.
    public static let keepNothing = HistoryRetention(everyVersion: 0, daily: 0, weekly: 0)

    /// Whether this retention keeps no version at all (`weekly` is zero or less): no history
    /// entry is written or listed.
    public var keepsNothing: Bool { weekly <= 0 }

    /// The entries kept at `now` (ms), in their order. `page` names the page an entry is a version of.
    func kept<T>(_ items: [T], now: Int64, page: (T) -> String, time: (T) -> Int64) -> [T] {
        guard !keepsNothing else { return [] }
        let every = Int64(everyVersion * 1000), day = Int64(daily * 1000), week = Int64(weekly * 1000)
        // Newest per (page, bucket) for the thinned ages.
        var newest: [String: Int64] = [:]
        func bucket(_ t: Int64) -> String? {
            let age = now - t
            if age <= every { return nil }
            if age <= day { return "d\(t / 86_400_000)" }
            if age <= week { return "w\(t / 604_800_000)" }
            return "x"
        }
        for it in items {
            let t = time(it)
            guard let b = bucket(t), b != "x" else { continue }
            let k = page(it) + b
            newest[k] = max(newest[k] ?? .min, t)
        }
        // Of versions of one bucket published in the same millisecond, the last in the list.
        var taken = Set<String>()
        var keep = [Bool](repeating: false, count: items.count)
        for (i, it) in items.enumerated().reversed() {
            let t = time(it)
            guard let b = bucket(t) else { keep[i] = true; continue }
            guard b != "x" else { continue }
            let k = page(it) + b
            guard newest[k] == t, taken.insert(k).inserted else { continue }
            keep[i] = true
        }
        return items.indices.filter { keep[$0] }.map { items[$0] }
    }

    func kept(_ entries: [HistoryEntry], now: Int64) -> [HistoryEntry] {
        kept(entries, now: now, page: { $0.page.uuidString }, time: \.time)
    }
}

/// What a device writes and keeps of history (docs/sync.md §12).
public struct HistoryOptions: Sendable {
    /// Which versions are kept; `.keepNothing` writes none.
    public var retention: HistoryRetention
    /// This device's name in history lists (at most 64 bytes are kept); by default the host's name.
    public var deviceName: String
    /// This device's clock (tests pass their own).
    public var now: @Sendable () -> Date

    /// History kept as `retention` says, under `deviceName`, by the clock `now`.
    public init(retention: HistoryRetention = .standard, deviceName: String = HistoryOptions.hostName,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.retention = retention
        self.deviceName = deviceName
        self.now = now
    }

    /// The host's name (`gethostname`; an app on a phone passes the name its person gave the device).
    public static var hostName: String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let ok = buffer.withUnsafeMutableBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { gethostname($0, p.count - 1) == 0 }
        }
        guard ok else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    var nowMilliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }
}
