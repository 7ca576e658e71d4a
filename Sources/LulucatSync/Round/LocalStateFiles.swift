// The JSON files of `.sync/` (docs/sync.md §6, docs/encryption.md §8.4) as typed models. They are
// read with a `JSONDecoder`, one value per file; a file that does not decode is treated as missing,
// which each reader turns into the safe default (a new device id, heads read again, a base read
// again, the document merged as new). A base is written by `BaseFile.encoded()` (see there).

import Foundation
import LulucatStore

/// `device.json`: this library's device id.
struct DeviceFile: Codable {
    var device: String
}

/// `remote.json`: which remote the library syncs with (never a secret).
struct RemoteFile: Codable {
    var remote: String
}

/// One entry of `index.json` (`SyncStateStore.IndexEntry`).
struct IndexFileEntry: Codable {
    var docModified: Int64
    var published: Bool
    var live: Bool
    var file: String
    /// The size of our head as published (absent: unknown, not checked; older indexes).
    var head: Int?
}

/// An entry of a file whose other entries must survive it not decoding (`index.json`,
/// `garbage.json`): nil when it does not.
struct Lossy<Value: Decodable>: Decodable {
    var value: Value?
    init(from decoder: any Decoder) { value = try? Value(from: decoder) }
}

/// `garbage.json`: blobs seen unreferenced, and when the last collection ran (ms since 1970).
struct GarbageFile: Codable {
    struct Blob: Codable {
        var since: Int64
        var etag: String?
    }
    var lastRun: Int64?
    var blobs: [String: Blob]?
}

/// `garbage.json` as read: entries that do not decode are dropped.
struct GarbageFileRead: Decodable {
    var lastRun: Int64?
    var blobs: [String: Lossy<GarbageFile.Blob>]?
}

/// `encryption.json`: the key check (hex), the key settings last confirmed (base64) and their
/// ETag, and the head counters read and written.
struct EncryptionFile: Codable {
    var keyCheck: String
    var settings: String
    var settingsETag: String?
    var highest: [String: UInt64]?
    var written: [String: UInt64]?
}

/// A document's base, `docs/<document>.base`: format 3 (the page states and print tables inline,
/// `"version": 3`), 2 (no print tables) or 1 (no version: each page state in its own file, checked
/// against `stateDigests`). Formats 1 and 2 are read, never written.
struct BaseFile: Codable, Equatable {
    var docModified: Int64
    /// The head, base64.
    var head: String
    var pageModified: [String: Int64]
    /// Per page, its print table (base64); format 3 only.
    var prints: [String: String]?
    var published: Bool
    /// Per page, its state (base64); formats 2 and 3.
    var states: [String: String]?
    /// Per page, the FNV-1a 64 of its state file (hex); format 1 only.
    var stateDigests: [String: String]?
    var version: Int?

    /// The file's bytes: keys sorted, no spaces, a newline at the end. Written directly rather
    /// than through `JSONEncoder` (JSONSerialization's sorted-keys writer alone cost more than the
    /// rest of a one-page round, docs/sync.md §10.1); every string in it is base64, hex or a UUID,
    /// so nothing needs escaping. `SyncStateFilesTests` checks that `JSONDecoder` reads back the
    /// same value.
    func encoded() -> [UInt8] {
        var out = "{\"docModified\":\(docModified),\"head\":\"\(head)\",\"pageModified\":"
        let tables = prints ?? [:]
        let inline = states ?? [:]
        out.reserveCapacity(head.utf8.count + inline.values.reduce(0) { $0 + $1.utf8.count }
                            + tables.values.reduce(0) { $0 + $1.utf8.count } + 150 * inline.count + 200)
        func object(_ d: [String: String]) {
            out += "{"
            for (i, k) in d.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                out += "\"\(k)\":\"\(d[k]!)\""
            }
            out += "}"
        }
        out += "{"
        for (i, k) in pageModified.keys.sorted().enumerated() {
            if i > 0 { out += "," }
            out += "\"\(k)\":\(pageModified[k]!)"
        }
        out += "}"
        if let prints { out += ",\"prints\":"; object(prints) }
        out += ",\"published\":\(published ? "true" : "false")"
        if let stateDigests { out += ",\"stateDigests\":"; object(stateDigests) }
        if let states { out += ",\"states\":"; object(states) }
        if let version { out += ",\"version\":\(version)" }
        out += "}\n"
        return Array(out.utf8)
    }
}

extension SyncStateStore {
    /// A file of `.sync/` decoded, or nil when it is missing, too large or does not decode.
    func read<T: Decodable>(_ type: T.Type, _ path: String, limit: Int = 64 << 20) -> T? {
        guard let bytes = try? fs.readFile(path, limit: limit) else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(bytes))
    }

    /// Writes a file of `.sync/` (keys sorted, indented). `durable`: see `writeQuickly`.
    func write<T: Encodable>(_ value: T, to path: String, durable: Bool = true) throws(SyncError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // These models hold strings and integers only: encoding cannot fail but for memory.
        guard let data = try? encoder.encode(value) else { throw .localState(FileError("encode", path: path, errno: ENOMEM)) }
        let bytes = Array(data) + [10]
        if durable { try SyncError.state { () throws(FileError) in try fs.writeAtomically(bytes, to: path) } }
        else { try writeQuickly(bytes, to: path) }
    }
}
