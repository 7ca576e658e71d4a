// Writes zip archives (stored or raw deflate, no zip64), byte for byte the same for the same input.

import Foundation
import LulucatInk

/// Builds a zip archive entry by entry.
///
/// Output is deterministic: entries appear in the order added, every timestamp is the one in
/// `Options` (1980-01-01 by default), attributes are fixed (regular file 0644, folder 0755) and
/// no extra fields are written. Each entry is compressed on its own before its header is written,
/// so memory holds one entry's input and output at a time; with a `sink` the archive itself is
/// never held in memory.
///
/// ```swift
/// let zip = ZipWriter()
/// try zip.add(path: "document.json", data: json)
/// try zip.add(path: "assets/\(id).jpg", data: jpeg, method: .stored)
/// let bytes = try zip.finish()
/// ```
package final class ZipWriter {
    package enum Method: Sendable {
        case stored
        case deflated
    }

    package struct Options: Sendable {
        /// The timestamp written into every header.
        package var timestamp: ZipTimestamp = .fixed
        /// The zlib level for deflated entries (0...9). Fixed, so output is reproducible.
        package var compressionLevel: Int32 = 6
        package init(timestamp: ZipTimestamp = .fixed, compressionLevel: Int32 = 6) {
            self.timestamp = timestamp
            self.compressionLevel = compressionLevel
        }
    }

    private struct CentralRecord {
        var name: [UInt8]
        var method: UInt16
        var crc: UInt32
        var compressedSize: UInt32
        var uncompressedSize: UInt32
        var offset: UInt32
        var attributes: UInt32
    }

    private let options: Options
    private let sink: ((UnsafeRawBufferPointer) throws -> Void)?
    private var buffer = Data()
    private var written: UInt64 = 0
    private var records: [CentralRecord] = []
    private var names = NameCollisionGuard()
    private var finished = false

    /// An archive built in memory and returned by `finish()`.
    package init(options: Options = Options()) {
        self.options = options
        self.sink = nil
    }

    /// An archive streamed to `sink` as it is built (a file being written, a socket); `finish()`
    /// then returns empty data. An error thrown by the sink becomes `ArchiveError.Kind.io`.
    package init(options: Options = Options(), sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.options = options
        self.sink = sink
    }

    /// Adds a file entry.
    /// - Parameters:
    ///   - path: a relative path with `/` separators; the same rules as the reader enforces.
    ///   - method: `.deflated` by default; `.stored` for data that is already compressed (JPEG).
    /// - Throws: `ArchiveError` `.unsafeName`, `.duplicateName`, `.tooLarge` (4 GiB without
    ///   zip64), or `.io`.
    package func add(path: String, data: Data, method: Method = .deflated) throws(ArchiveError) {
        try data.withRawBytes { (raw: UnsafeRawBufferPointer) throws(ArchiveError) in
            try add(path: path, bytes: raw, method: method)
        }
    }

    /// Adds a file entry from raw bytes (see `add(path:data:method:)`).
    package func add(path: String, bytes: UnsafeRawBufferPointer, method: Method = .deflated) throws(ArchiveError) {
        try checkName(path, directory: false)
        guard UInt64(bytes.count) < ZipFormat.zip32Limit else {
            throw ArchiveError(.tooLarge, entry: path, "\(bytes.count) bytes is over the 4 GiB a zip archive without zip64 holds")
        }
        let crc = Deflate.crc32(bytes)
        switch method {
        case .stored:
            try appendEntry(path: path, method: ZipFormat.methodStored, crc: crc,
                            uncompressed: bytes.count, payload: bytes, attributes: ZipFormat.regularFileAttributes)
        case .deflated:
            let compressed = try Deflate.compress(bytes, level: options.compressionLevel)
            try compressed.withRawBytes { (payload: UnsafeRawBufferPointer) throws(ArchiveError) in
                try appendEntry(path: path, method: ZipFormat.methodDeflate, crc: crc,
                                uncompressed: bytes.count, payload: payload, attributes: ZipFormat.regularFileAttributes)
            }
        }
    }

    /// Adds an empty folder entry; `path` ends with `/`. Folders are implied by file paths, so
    /// this is only needed for empty folders.
    package func addFolder(path: String) throws(ArchiveError) {
        try checkName(path, directory: true)
        try appendEntry(path: path, method: ZipFormat.methodStored, crc: 0, uncompressed: 0,
                        payload: UnsafeRawBufferPointer(start: nil, count: 0), attributes: ZipFormat.directoryAttributes)
    }

    /// Writes the central directory and the end record.
    /// - Returns: the archive when built in memory, empty data when streamed to a sink.
    package func finish() throws(ArchiveError) -> Data {
        guard !finished else { throw ArchiveError(.malformed, "finish() called twice") }
        finished = true
        let directoryStart = written
        for r in records {
            var w = ByteWriter(capacity: ZipFormat.centralHeaderSize + r.name.count)
            w.writeUInt32(ZipFormat.centralHeaderSignature)
            w.writeUInt16(ZipFormat.versionMadeBy)
            w.writeUInt16(r.method == ZipFormat.methodDeflate ? ZipFormat.versionNeededDeflate : ZipFormat.versionNeededStored)
            w.writeUInt16(ZipFormat.flagUTF8)
            w.writeUInt16(r.method)
            w.writeUInt16(options.timestamp.time)
            w.writeUInt16(options.timestamp.date)
            w.writeUInt32(r.crc)
            w.writeUInt32(r.compressedSize)
            w.writeUInt32(r.uncompressedSize)
            w.writeUInt16(UInt16(r.name.count))
            w.writeUInt16(0) // extra field length
            w.writeUInt16(0) // comment length
            w.writeUInt16(0) // disk number
            w.writeUInt16(0) // internal attributes
            w.writeUInt32(r.attributes)
            w.writeUInt32(r.offset)
            w.writeBytes(r.name)
            try emit(w.bytes)
        }
        let directorySize = written - directoryStart
        guard written < ZipFormat.zip32Limit, directoryStart < ZipFormat.zip32Limit else {
            throw ArchiveError(.tooLarge, "the archive passes 4 GiB, which needs zip64")
        }
        var end = ByteWriter(capacity: ZipFormat.endRecordSize)
        end.writeUInt32(ZipFormat.endOfCentralDirectorySignature)
        end.writeUInt16(0) // this disk
        end.writeUInt16(0) // disk with the central directory
        end.writeUInt16(UInt16(records.count))
        end.writeUInt16(UInt16(records.count))
        end.writeUInt32(UInt32(directorySize))
        end.writeUInt32(UInt32(directoryStart))
        end.writeUInt16(0) // comment length
        try emit(end.bytes)
        let result = buffer
        buffer = Data()
        return result
    }

    // MARK: - Private

    private func checkName(_ path: String, directory: Bool) throws(ArchiveError) {
        guard !finished else { throw ArchiveError(.malformed, entry: path, "added after finish()") }
        if let problem = EntryName.problem(path) { throw ArchiveError(.unsafeName, entry: path, problem) }
        guard EntryName.isDirectory(path) == directory else {
            throw ArchiveError(.unsafeName, entry: path, directory ? "a folder name must end with \"/\"" : "a file name must not end with \"/\"")
        }
        guard records.count < ZipFormat.maxEntries else {
            throw ArchiveError(.tooLarge, entry: path, "more than 65,535 entries needs zip64")
        }
        try names.insert(path)
    }

    private func appendEntry(path: String, method: UInt16, crc: UInt32, uncompressed: Int,
                             payload: UnsafeRawBufferPointer, attributes: UInt32) throws(ArchiveError) {
        let name = Array(path.utf8)
        let offset = written
        guard offset + UInt64(ZipFormat.localHeaderSize + name.count + payload.count) < ZipFormat.zip32Limit else {
            throw ArchiveError(.tooLarge, entry: path, "the archive passes 4 GiB, which needs zip64")
        }
        var w = ByteWriter(capacity: ZipFormat.localHeaderSize + name.count)
        w.writeUInt32(ZipFormat.localHeaderSignature)
        w.writeUInt16(method == ZipFormat.methodDeflate ? ZipFormat.versionNeededDeflate : ZipFormat.versionNeededStored)
        w.writeUInt16(ZipFormat.flagUTF8)
        w.writeUInt16(method)
        w.writeUInt16(options.timestamp.time)
        w.writeUInt16(options.timestamp.date)
        w.writeUInt32(crc)
        w.writeUInt32(UInt32(payload.count))
        w.writeUInt32(UInt32(uncompressed))
        w.writeUInt16(UInt16(name.count))
        w.writeUInt16(0) // extra field length
        w.writeBytes(name)
        try emit(w.bytes)
        try emit(payload)
        records.append(CentralRecord(name: name, method: method, crc: crc, compressedSize: UInt32(payload.count),
                                     uncompressedSize: UInt32(uncompressed), offset: UInt32(offset), attributes: attributes))
    }

    private func emit(_ bytes: [UInt8]) throws(ArchiveError) {
        try bytes.withRawBytes { (raw: UnsafeRawBufferPointer) throws(ArchiveError) in try emit(raw) }
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) {
        written += UInt64(bytes.count)
        if let sink {
            do { try sink(bytes) } catch {
                throw ArchiveError(.io, "writing the archive failed: \(error)")
            }
        } else if !bytes.isEmpty {
            buffer.append(bytes.assumingMemoryBound(to: UInt8.self))
        }
    }
}
