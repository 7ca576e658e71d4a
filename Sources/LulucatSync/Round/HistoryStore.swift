// What a device keeps of history (docs/sync.md §12.5): `.sync/history/<document>.json`, the entries
// of every device it has read, merged, and per device its name and the history blob merged.

import Foundation
import LulucatStore

/// `.sync/history/<document>.json`: per device, its history as its last head read here names it
/// (its inline entries, its history blob and that blob's entries). A mirror of the remote, so what
/// a device let go (retention, or a state it published in a round that failed and then replaced)
/// goes from the list here when its next head is read, as its blobs go from the server.
struct LocalHistory: Equatable {
    struct Entry: Codable, Hashable {
        var page: String
        var time: Int64
        var blob: String
        var strokes: Int

        init(_ e: HistoryEntry) {
            page = e.page.uuidString
            time = e.time
            blob = e.blob.hex
            strokes = e.strokes
        }

        var entry: HistoryEntry? {
            guard let p = UUID(strictString: page), let b = BlobName(hex: blob), strokes >= 0 else { return nil }
            return HistoryEntry(page: p, time: time, blob: b, strokes: strokes)
        }
    }

    struct Device: Codable, Equatable {
        var name: String = ""
        /// The history blob its head names, when its entries are in `older`.
        var blob: String?
        /// Kept apart, in `<device>.older` (the history blob's form): written only when `blob` changes.
        var older: [Entry] = []
        var inline: [Entry] = []

        enum CodingKeys: String, CodingKey { case name, blob, inline }
    }

    var devices: [String: Device] = [:]

    /// `device`'s mirrored history: its blob (when read) and all its entries.
    func own(_ device: UUID) -> (blob: BlobName?, older: [HistoryEntry], inline: [HistoryEntry]) {
        guard let d = devices[device.uuidString] else { return (nil, [], []) }
        return (d.blob.flatMap { BlobName(hex: $0) }, d.older.compactMap(\.entry), d.inline.compactMap(\.entry))
    }

    /// Every device's entries, with the device.
    var all: [(device: String, entry: Entry)] {
        devices.sorted { $0.key < $1.key }.flatMap { (k, d) in (d.older + d.inline).map { (k, $0) } }
    }

    /// Mirrors a head's history section: its name and inline entries. Returns whether its history
    /// blob still needs reading (`setBlob`).
    mutating func setHead(device: UUID, _ history: HeadHistory) -> Bool {
        var d = devices[device.uuidString] ?? Device()
        d.name = history.deviceName
        d.inline = history.entries.map(Entry.init)
        if history.blob == nil { d.blob = nil; d.older = [] }
        devices[device.uuidString] = d
        return history.blob != nil && d.blob != history.blob?.hex
    }

    /// Mirrors a history blob the device's head names.
    mutating func setBlob(device: UUID, _ name: BlobName, _ entries: [HistoryEntry]) {
        devices[device.uuidString, default: Device()].blob = name.hex
        devices[device.uuidString]!.older = entries.map(Entry.init)
    }
}

extension SyncStateStore {
    var historyFolder: String { folder + "/history" }
    func historyFolder(_ document: UUID) -> String { historyFolder + "/" + document.uuidString }

    /// The document's history as this device knows it, of every device or of `only` (a device
    /// whose files are missing or unreadable is left out: the rounds and `refreshHistory` bring
    /// it back from the remote).
    func history(_ document: UUID, only: Set<UUID>? = nil) -> LocalHistory {
        var out = LocalHistory()
        let dir = historyFolder(document)
        let devices: [UUID]
        if let only { devices = Array(only) } else {
            devices = ((try? fs.contentsOfDirectory(dir)) ?? []).compactMap { name in
                name.hasSuffix(".json") ? UUID(strictString: String(name.dropLast(5))) : nil
            }
        }
        for device in devices {
            let base = dir + "/" + device.uuidString
            guard var d = read(LocalHistory.Device.self, base + ".json", limit: 1 << 20) else { continue }
            if d.blob != nil {
                // Our own copy of the history blob's entries (written by `saveHistory`).
                if let bytes = try? fs.readFile(base + ".older", limit: HistoryBlob.maxBytes),
                   let blob = try? HistoryBlob.decode(bytes), blob.document == document, blob.device == device {
                    d.older = blob.entries.map(LocalHistory.Entry.init)
                } else {
                    d.blob = nil  // read again from the remote
                }
            }
            out.devices[device.uuidString] = d
        }
        return out
    }

    /// Writes the devices of `history` that differ from `before`, without a sync (§12.5: a
    /// mirror of the remote): `<device>.json` (name, blob, inline entries), and `<device>.older`
    /// only when the blob changed.
    func saveHistory(_ document: UUID, _ history: LocalHistory, before: LocalHistory) throws(SyncError) {
        let dir = historyFolder(document)
        try SyncError.state { () throws(FileError) in
            try fs.ensureDirectory(historyFolder)
            try fs.ensureDirectory(dir)
        }
        for (key, d) in history.devices.sorted(by: { $0.key < $1.key }) where d != before.devices[key] {
            guard let device = UUID(strictString: key) else { continue }
            let base = dir + "/" + device.uuidString
            if d.blob != before.devices[key]?.blob || d.older != before.devices[key]?.older, d.blob != nil {
                let older = HistoryBlob(document: document, device: device, entries: d.older.compactMap(\.entry))
                try writeQuickly(older.encode(), to: base + ".older")
            }
            try write(d, to: base + ".json", durable: false)
        }
    }
}

extension DocumentRound {
    /// A history blob of `device` for this document, read from the remote, checked against its
    /// name and decoded (docs/sync.md §12.3). On an encrypted remote it is opened and checked
    /// without counting as a refusal of the round: history never stops sync.
    func fetchHistoryBlob(_ name: BlobName, device: UUID) async throws(SyncError) -> HistoryBlob {
        let bytes: [UInt8]
        if let sealed = remote as? EncryptedRemote {
            bytes = try await sealed.fetchBlob(document: id, blob: name)
        } else {
            bytes = try await fetchBlob(name)
        }
        return try Self.decodeHistoryBlob(bytes, name: name, document: id, device: device)
    }

    static func decodeHistoryBlob(_ bytes: [UInt8], name: BlobName, document: UUID, device: UUID) throws(SyncError) -> HistoryBlob {
        let blob: HistoryBlob
        do { blob = try HistoryBlob.decode(bytes) } catch {
            throw .damaged(object: "history blob \(name.hex)", reason: "\(error)")
        }
        guard blob.document == document, blob.device == device else {
            throw .damaged(object: "history blob \(name.hex)", reason: "it is the history of another document or device")
        }
        return blob
    }

    /// After the document's round: the histories of the heads it joined and of the head it
    /// published, mirrored in `.sync/history/` (docs/sync.md §12.5). A history blob that cannot
    /// be read is reported and read again next round; nothing here fails the round.
    mutating func recordHistory(_ report: inout SyncReport) async {
        let joined = Set(joinedHeads.map(\.name))
        let read = heads.filter { joined.contains($0.name) }
        let own = savedBase.flatMap { $0.published ? $0.head.history : nil }
        let store = sync.store
        var involved = Set(read.map(\.head.device))
        if own != nil { involved.insert(sync.device) }
        var h = store.history(id, only: involved)
        let before = h
        for c in read where c.head.device != sync.device {
            let dev = c.head.device
            guard h.setHead(device: dev, c.head.history), let blob = c.head.history.blob else { continue }
            do {
                h.setBlob(device: dev, blob, try await fetchHistoryBlob(blob, device: dev).entries)
            } catch {
                report.problems.append("document \(id): the history of device \(dev) could not be read (read again next round): \(error)")
            }
        }
        if let own, h.setHead(device: sync.device, own), let blob = own.blob {
            if let made = ownHistoryBlob, made.name == blob {
                h.setBlob(device: sync.device, blob, made.blob.entries)
            } else if let fetched = try? await fetchHistoryBlob(blob, device: sync.device) {
                h.setBlob(device: sync.device, blob, fetched.entries)
            }
        }
        guard h != before else { return }
        do { try store.saveHistory(id, h, before: before) } catch {
            report.problems.append("document \(id): its history could not be written here: \(error)")
        }
    }
}
