// What a device keeps of history (docs/sync.md §12.5): `.sync/history/<document>/`, per device its
// history as its last head read here names it (name, chunk names, inline entries), and the chunks'
// entries, each chunk in a file of its own (immutable, as on the remote).

import Foundation
import LulucatStore

/// `.sync/history/<document>/`: per device, its history as its last head read here names it. A
/// mirror of the remote, so what a device let go (retention, or a state it published in a round
/// that failed and then replaced) goes from the list here when its next head is read, as its
/// blobs go from the server.
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
        /// The chunks its head names, oldest first.
        var chunks: [String] = []
        var inline: [Entry] = []

        init(name: String, chunks: [String], inline: [Entry]) {
            self.name = name
            self.chunks = chunks
            self.inline = inline
        }

        /// A missing key reads as empty (a device with no name, no chunk or no inline entry).
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
            chunks = try c.decodeIfPresent([String].self, forKey: .chunks) ?? []
            inline = try c.decodeIfPresent([Entry].self, forKey: .inline) ?? []
        }
    }

    var devices: [String: Device] = [:]
    /// The entries of the chunks held here (`chunks/<hex>`), by name.
    var chunks: [String: [HistoryEntry]] = [:]

    /// `device`'s mirrored history: its chunks (each with its entries when held here) and inline entries.
    func own(_ device: UUID) -> (chunks: [BlobName], held: [BlobName: [HistoryEntry]], inline: [HistoryEntry]) {
        guard let d = devices[device.uuidString] else { return ([], [:], []) }
        let names = d.chunks.compactMap { BlobName(hex: $0) }
        var held: [BlobName: [HistoryEntry]] = [:]
        for n in names { if let e = chunks[n.hex] { held[n] = e } }
        return (names, held, d.inline.compactMap(\.entry))
    }

    /// Every device's entries, with the device.
    var all: [(device: String, entry: Entry)] {
        devices.sorted { $0.key < $1.key }.flatMap { (k, d) in
            (d.chunks.flatMap { (chunks[$0] ?? []).map(Entry.init) } + d.inline).map { (k, $0) }
        }
    }

    /// Mirrors a head's history section. Returns the chunks it names that are not held here
    /// (`setChunk` once read).
    mutating func setHead(device: UUID, _ history: HeadHistory) -> [BlobName] {
        devices[device.uuidString] = Device(name: history.deviceName, chunks: history.chunks.map(\.hex),
                                            inline: history.entries.map(Entry.init))
        return history.chunks.filter { chunks[$0.hex] == nil }
    }

    /// Holds a chunk's entries.
    mutating func setChunk(_ name: BlobName, _ entries: [HistoryEntry]) { chunks[name.hex] = entries }
}

extension SyncStateStore {
    var historyFolder: String { folder + "/history" }
    func historyFolder(_ document: UUID) -> String { historyFolder + "/" + document.uuidString }

    /// The document's history as this device knows it, of every device or of `only` (a device
    /// whose file is missing or unreadable is left out, and a chunk whose file is: the rounds and
    /// `refreshHistory` bring them back from the remote). Without `chunkEntries`, a chunk held
    /// here is only seen to be there (empty entries): what a round's mirroring needs, without
    /// reading the history it keeps.
    func history(_ document: UUID, only: Set<UUID>? = nil, chunkEntries: Bool = true) -> LocalHistory {
        var out = LocalHistory()
        let dir = historyFolder(document)
        let devices: [UUID]
        if let only { devices = Array(only) } else {
            devices = ((try? fs.contentsOfDirectory(dir)) ?? []).compactMap { name in
                name.hasSuffix(".json") ? UUID(strictString: String(name.dropLast(5))) : nil
            }
        }
        for device in devices {
            guard let d = read(LocalHistory.Device.self, dir + "/" + device.uuidString + ".json", limit: 4 << 20) else { continue }
            out.devices[device.uuidString] = d
            for hex in d.chunks where out.chunks[hex] == nil {
                guard BlobName(hex: hex) != nil else { continue }
                if !chunkEntries {
                    if (try? fs.info(dir + "/chunks/" + hex)) != nil { out.chunks[hex] = [] }
                    continue
                }
                // Our own copy of a chunk (written by `saveHistory`, checked when it was read).
                guard let bytes = try? fs.readFile(dir + "/chunks/" + hex, limit: HistoryBlob.maxBytes),
                      let blob = try? HistoryBlob.decode(bytes), blob.document == document, blob.device == device else { continue }
                out.chunks[hex] = blob.entries
            }
        }
        return out
    }

    /// Writes what differs from `before`, without a sync (§12.5: a mirror of the remote): each
    /// changed device's `<device>.json`, and each chunk newly held (`chunks/<hex>`, immutable).
    /// When a device's chunks changed, the chunks no device here names any more are removed.
    func saveHistory(_ document: UUID, _ history: LocalHistory, before: LocalHistory) throws(SyncError) {
        let dir = historyFolder(document)
        try SyncError.state { () throws(FileError) in
            try fs.ensureDirectory(historyFolder)
            try fs.ensureDirectory(dir)
            try fs.ensureDirectory(dir + "/chunks")
        }
        for (key, d) in history.devices.sorted(by: { $0.key < $1.key }) {
            guard let device = UUID(strictString: key) else { continue }
            for hex in d.chunks where before.chunks[hex] == nil {
                guard let entries = history.chunks[hex], BlobName(hex: hex) != nil else { continue }
                try writeQuickly(HistoryBlob(document: document, device: device, entries: entries).encode(), to: dir + "/chunks/" + hex)
            }
            if d != before.devices[key] { try write(d, to: dir + "/" + device.uuidString + ".json", durable: false) }
        }
        // Chunks let go: named by no device's head any more (looked for only when a list of
        // chunks changed: a chunk is written once every 32 versions of a device).
        guard history.devices.contains(where: { $0.value.chunks != before.devices[$0.key]?.chunks }) else { return }
        var named = Set<String>()
        for name in (try? fs.contentsOfDirectory(dir)) ?? [] where name.hasSuffix(".json") {
            if let d = read(LocalHistory.Device.self, dir + "/" + name, limit: 4 << 20) { named.formUnion(d.chunks) }
        }
        for name in (try? fs.contentsOfDirectory(dir + "/chunks")) ?? [] where !named.contains(name) {
            try? fs.removeIfPresent(dir + "/chunks/" + name)
        }
    }
}

extension DocumentRound {
    /// A history chunk of `device` for this document, read from the remote, checked against its
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
            throw .damaged(object: "history chunk \(name.hex)", reason: "\(error)")
        }
        guard blob.document == document, blob.device == device else {
            throw .damaged(object: "history chunk \(name.hex)", reason: "it is the history of another document or device")
        }
        return blob
    }

    /// After the document's round: the histories of the heads it joined and of the head it
    /// published, mirrored in `.sync/history/` (docs/sync.md §12.5). A chunk that cannot be read
    /// is reported and read again next round; nothing here fails the round.
    mutating func recordHistory(_ report: inout SyncReport) async {
        let joined = Set(joinedHeads.map(\.name))
        let read = heads.filter { joined.contains($0.name) && $0.head.device != sync.device }
        let own = savedBase.flatMap { $0.published ? $0.head.history : nil }
        guard !read.isEmpty || own != nil else { return }
        let store = sync.store
        var involved = Set(read.map(\.head.device))
        if own != nil { involved.insert(sync.device) }
        var h = store.history(id, only: involved, chunkEntries: false)
        let before = h
        for c in read {
            let dev = c.head.device
            for chunk in h.setHead(device: dev, c.head.history) {
                do { h.setChunk(chunk, try await fetchHistoryBlob(chunk, device: dev).entries) } catch {
                    report.problems.append("document \(id): a history chunk of device \(dev) could not be read (read again next round): \(error)")
                }
            }
        }
        if let own {
            for (name, blob) in ownHistoryChunks { h.setChunk(name, blob.entries) }
            for chunk in h.setHead(device: sync.device, own) {
                if let fetched = try? await fetchHistoryBlob(chunk, device: sync.device) { h.setChunk(chunk, fetched.entries) }
            }
        }
        guard h != before else { return }
        do { try store.saveHistory(id, h, before: before) } catch {
            report.problems.append("document \(id): its history could not be written here: \(error)")
        }
    }
}
