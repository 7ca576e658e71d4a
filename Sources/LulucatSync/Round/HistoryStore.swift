// What a device keeps of history (docs/sync.md §12.5): `.sync/history/<document>.json`, the entries
// of every device it has read, merged, and per device its name and the history blob merged.

import Foundation
import LulucatStore

/// `.sync/history/<document>.json`.
struct LocalHistory: Codable, Equatable {
    struct Device: Codable, Equatable {
        var name: String
        var blob: String?
    }

    struct Entry: Codable, Hashable {
        var page: String
        var device: String
        var time: Int64
        var blob: String
        var strokes: Int
    }

    var version = 1
    var devices: [String: Device] = [:]
    var entries: [Entry] = []

    /// `device`'s entries as history entries (those that parse).
    func entries(of device: UUID) -> [HistoryEntry] {
        let d = device.uuidString
        return entries.compactMap { e in
            guard e.device == d, let p = UUID(strictString: e.page), let b = BlobName(hex: e.blob) else { return nil }
            return HistoryEntry(page: p, time: e.time, blob: b, strokes: e.strokes)
        }.sorted(by: HistoryEntry.precedes)
    }

    /// Adds `device`'s entries (one per page and blob, the earliest time kept) and its name.
    /// Returns whether anything changed.
    @discardableResult
    mutating func merge(device: UUID, name: String?, entries new: [HistoryEntry]) -> Bool {
        let d = device.uuidString
        var changed = false
        if let name, !name.isEmpty, devices[d]?.name != name {
            devices[d, default: Device(name: name)].name = name
            changed = true
        } else if devices[d] == nil {
            devices[d] = Device(name: "")
            changed = true
        }
        guard !new.isEmpty else { return changed }
        var at: [String: Int] = [:]
        for (i, e) in entries.enumerated() where e.device == d { at[e.page + e.blob] = i }
        for e in new {
            let k = e.page.uuidString + e.blob.hex
            if let i = at[k] {
                if e.time < entries[i].time { entries[i].time = e.time; changed = true }
            } else {
                at[k] = entries.count
                entries.append(Entry(page: e.page.uuidString, device: d, time: e.time, blob: e.blob.hex, strokes: e.strokes))
                changed = true
            }
        }
        return changed
    }

    /// Drops what `retention` lets go at `now`, per page and device.
    mutating func prune(_ retention: HistoryRetention, now: Int64) {
        var byDevice: [String: [Entry]] = [:]
        for e in entries { byDevice[e.device, default: []].append(e) }
        var kept: [Entry] = []
        for (_, list) in byDevice.sorted(by: { $0.key < $1.key }) {
            let sorted = list.sorted { ($0.time, $0.page, $0.blob) < ($1.time, $1.page, $1.blob) }
            kept += retention.kept(sorted, now: now, page: \.page, time: \.time)
        }
        entries = kept
    }
}

extension SyncStateStore {
    var historyFolder: String { folder + "/history" }
    func historyPath(_ document: UUID) -> String { historyFolder + "/" + document.uuidString + ".json" }

    /// The document's history as this device knows it (empty when none, or unreadable: the
    /// rounds and `refresh` bring it back from the remote).
    func history(_ document: UUID) -> LocalHistory {
        guard let h = read(LocalHistory.self, historyPath(document)), h.version == 1 else { return LocalHistory() }
        return h
    }

    /// Writes it, pruned by `retention`, without a sync (§12.5: a cache of the remote).
    func saveHistory(_ document: UUID, _ history: LocalHistory, retention: HistoryRetention, now: Int64) throws(SyncError) {
        var h = history
        h.prune(retention, now: now)
        try SyncError.state { () throws(FileError) in try fs.ensureDirectory(historyFolder) }
        try write(h, to: historyPath(document), durable: false)
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
    /// published, merged into `.sync/history/` (docs/sync.md §12.5). A history blob that cannot
    /// be read is reported and read again next round; nothing here fails the round.
    mutating func recordHistory(_ report: inout SyncReport) async {
        let options = options.history
        let joined = Set(joinedHeads.map(\.name))
        let read = heads.filter { joined.contains($0.name) && !$0.head.history.isEmpty }
        let own = savedBase?.head.history
        let ownChanged = own != nil && own != base?.head.history
        guard !read.isEmpty || ownChanged || ownHistoryBlob != nil else { return }
        let store = sync.store
        var h = store.history(id)
        let before = h
        for c in read {
            let dev = c.head.device
            h.merge(device: dev, name: c.head.history.deviceName, entries: c.head.history.entries)
            guard let blob = c.head.history.blob, h.devices[dev.uuidString]?.blob != blob.hex else { continue }
            do {
                let hb = try await fetchHistoryBlob(blob, device: dev)
                h.merge(device: dev, name: nil, entries: hb.entries)
                h.devices[dev.uuidString]?.blob = blob.hex
            } catch {
                report.problems.append("document \(id): the history of device \(dev) could not be read (read again next round): \(error)")
            }
        }
        if let own {
            h.merge(device: sync.device, name: own.deviceName, entries: own.entries)
            if let (name, blob) = ownHistoryBlob, own.blob == name {
                h.merge(device: sync.device, name: nil, entries: blob.entries)
                h.devices[sync.device.uuidString]?.blob = name.hex
            }
        }
        guard h != before else { return }
        do { try store.saveHistory(id, h, retention: options.retention, now: options.nowMilliseconds) } catch {
            report.problems.append("document \(id): its history could not be written here: \(error)")
        }
    }
}
