// Reads zip archives from untrusted sources: every offset, size, name and attribute is checked.

import Foundation

/// A zip archive opened for reading. Opening checks the whole structure and every name before
/// any data is inflated, so a refused archive costs nothing to refuse; `contents(of:)` then
/// inflates one entry, never past its declared size, and checks its CRC-32.
///
/// Refused: archives without an end record in their last 64 KiB + 22 bytes, zip64, multi-disk,
/// encrypted entries, methods other than stored and deflate, symbolic links and special files,
/// unsafe names (absolute, `..`, `.`, `//`, `\`, `:`, control characters, not UTF-8),
/// duplicates (also case- and normalization-insensitive, as on APFS), names the caller's
/// `allowedName` refuses, local headers that disagree with the central directory, entries that
/// overlap, and archives beyond `Limits`.
///
/// The reader borrows nothing: it keeps the `Data` it was given. For large archives pass data
/// mapped from the file (`Data(contentsOf:options: .alwaysMapped)`) and take entries one at a
/// time with `forEachEntry`, so only one entry's contents is in memory at once.
///
/// ```swift
/// let zip = try ZipReader(data, allowedName: { PackageLayout.allows($0) })
/// for entry in zip.entries where !entry.isDirectory {
///     let bytes = try zip.contents(of: entry)
/// }
/// ```
package struct ZipReader: Sendable {
    /// Bounds that keep a hostile archive (a zip bomb) from exhausting memory or time.
    package struct Limits: Sendable {
        /// At most this many entries (folders included).
        package var maxEntries: Int = 10_000
        /// The sum of the declared uncompressed sizes.
        package var maxTotalUncompressed: UInt64 = 2 << 30
        /// One entry's declared uncompressed size.
        package var maxEntryUncompressed: UInt64 = 1 << 30
        /// Uncompressed size / compressed size, checked for entries above `ratioFloor` bytes.
        package var maxRatio: UInt64 = 200
        /// Small entries may compress extremely well (a run of zeros) without being a threat.
        package var ratioFloor: UInt64 = 1 << 20

        package init() {}
    }

    /// One entry as the central directory describes it, after its checks.
    package struct Entry: Hashable, Sendable {
        package var path: String
        package var isDirectory: Bool
        /// 0 stored, 8 deflate.
        package var method: UInt16
        package var crc32: UInt32
        package var compressedSize: UInt64
        package var uncompressedSize: UInt64
        /// Where the local header starts.
        package var localHeaderOffset: Int
        /// Where the (compressed) data starts.
        package var dataOffset: Int
    }

    package let entries: [Entry]
    package let limits: Limits
    private let data: Data

    /// Opens and checks an archive.
    /// - Parameters:
    ///   - allowedName: the layout the caller accepts, given each (already safe) name; folder
    ///     entries end with `/`.
    /// - Throws: `ArchiveError` naming the first problem found.
    package init(_ data: Data, limits: Limits = Limits(),
                 allowedName: (String) -> Bool = { _ in true }) throws(ArchiveError) {
        self.data = data
        self.limits = limits
        self.entries = try data.withRawBytes { (buffer: UnsafeRawBufferPointer) throws(ArchiveError) -> [Entry] in
            try ZipReader.parse(buffer, limits: limits, allowedName: allowedName)
        }
    }

    /// The entry named `path`, if any.
    package func entry(_ path: String) -> Entry? { entries.first { $0.path == path } }

    /// The uncompressed contents of `entry`, checked against its declared size and CRC-32.
    /// - Throws: `.sizeMismatch` if the data inflates to more or less than declared (inflating
    ///   stops one byte past the declared size), `.malformed` for corrupt deflate data,
    ///   `.checksumMismatch`.
    package func contents(of entry: Entry) throws(ArchiveError) -> Data {
        // Entries are values a caller could alter: check again what opening checked.
        guard entry.dataOffset >= 0, entry.compressedSize <= UInt64(data.count),
              entry.dataOffset <= data.count - Int(entry.compressedSize),
              entry.uncompressedSize <= limits.maxEntryUncompressed,
              entry.method == ZipFormat.methodDeflate || entry.compressedSize == entry.uncompressedSize else {
            throw ArchiveError(.malformed, entry: entry.path, "is not an entry of this archive")
        }
        let size = Int(entry.uncompressedSize)
        var output = Data(count: size + 1)
        let produced = try data.withRawBytes { (archive: UnsafeRawBufferPointer) throws(ArchiveError) -> Int in
            let compressed = UnsafeRawBufferPointer(rebasing: archive[entry.dataOffset..<entry.dataOffset + Int(entry.compressedSize)])
            return try output.withMutableRawBytes { (out: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int in
                try ZipReader.extract(entry, compressed: compressed, into: out)
            }
        }
        output.removeSubrange(produced...)
        let crc = Deflate.crc32(output)
        guard crc == entry.crc32 else {
            throw ArchiveError(.checksumMismatch, entry: entry.path,
                               "CRC-32 is \(hex(crc)) but the archive declares \(hex(entry.crc32)): the data is corrupt")
        }
        return output
    }

    /// Streams `entry`'s uncompressed contents to `sink` in pieces of at most `chunkSize` bytes,
    /// checking its size and CRC-32 as `contents(of:)` does; memory stays at one piece, whatever
    /// the entry's size. The checks end with the stream: when this throws, what `sink` received
    /// must be discarded.
    /// - Throws: what `contents(of:)` throws, and whatever `sink` throws.
    package func stream(_ entry: Entry, chunkSize: Int = 1 << 20, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard entry.dataOffset >= 0, entry.compressedSize <= UInt64(data.count),
              entry.dataOffset <= data.count - Int(entry.compressedSize),
              entry.uncompressedSize <= limits.maxEntryUncompressed,
              entry.method == ZipFormat.methodDeflate || entry.compressedSize == entry.uncompressedSize else {
            throw ArchiveError(.malformed, entry: entry.path, "is not an entry of this archive")
        }
        let declared = Int(entry.uncompressedSize)
        var crc: UInt32 = 0
        try data.withRawBytes { (archive: UnsafeRawBufferPointer) throws -> Void in
            let compressed = UnsafeRawBufferPointer(rebasing: archive[entry.dataOffset..<entry.dataOffset + Int(entry.compressedSize)])
            defer { ZipReader.releasePages(compressed) }
            if entry.method == ZipFormat.methodStored {
                var offset = 0
                while offset < compressed.count {
                    let piece = UnsafeRawBufferPointer(rebasing: compressed[offset..<min(compressed.count, offset + chunkSize)])
                    crc = Deflate.crc32(piece, continuing: crc)
                    try sink(piece)
                    offset += piece.count
                }
                return
            }
            let outcome = try Deflate.inflate(compressed, limit: declared, chunk: chunkSize) { piece in
                crc = Deflate.crc32(piece, continuing: crc)
                try sink(piece)
            }
            switch outcome {
            case let .ended(produced, consumed):
                guard produced == declared else {
                    throw ArchiveError(.sizeMismatch, entry: entry.path, "inflates to \(produced) bytes but the archive declares \(declared)")
                }
                guard consumed == compressed.count else {
                    throw ArchiveError(.sizeMismatch, entry: entry.path,
                                       "its deflate stream ends after \(consumed) of the \(compressed.count) compressed bytes declared")
                }
            case .overflow:
                throw ArchiveError(.sizeMismatch, entry: entry.path, "inflates to more than the \(declared) bytes the archive declares")
            case .truncated(let produced):
                throw ArchiveError(.truncated, entry: entry.path, "its deflate stream is cut short after \(produced) of \(declared) bytes")
            case .corrupt(let message):
                throw ArchiveError(.malformed, entry: entry.path, "invalid deflate data (\(message))")
            }
        }
        guard crc == entry.crc32 else {
            throw ArchiveError(.checksumMismatch, entry: entry.path,
                               "CRC-32 is \(hex(crc)) but the archive declares \(hex(entry.crc32)): the data is corrupt")
        }
    }

    /// Tells the kernel the pages of a streamed entry's bytes are not needed again soon: for an
    /// archive mapped from its file they are dropped from this process's resident memory (they
    /// are read back from the file if touched), so streaming a large archive costs one entry's
    /// pages at a time, not the archive's. MADV_PAGEOUT never discards content (anonymous memory
    /// stays or goes to swap), so it is safe whatever memory `Data` holds; elsewhere, nothing.
    static func releasePages(_ bytes: UnsafeRawBufferPointer) {
        #if os(Linux)
        guard let base = bytes.baseAddress, bytes.count >= 1 << 16 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = Int(bitPattern: base) / page * page
        let end = (Int(bitPattern: base) + bytes.count) / page * page  // whole pages only
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, 21)  // MADV_PAGEOUT (Linux 5.4+; EINVAL before)
        #endif
    }

    /// Calls `body` with each file entry (folders skipped) and its checked contents, in archive
    /// order. Only one entry's contents is alive at a time.
    package func forEachFile(_ body: (Entry, Data) throws -> Void) throws {
        for entry in entries where !entry.isDirectory {
            try body(entry, try contents(of: entry))
        }
    }

    // MARK: - Extraction

    private static func extract(_ entry: Entry, compressed: UnsafeRawBufferPointer,
                                into out: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        let declared = Int(entry.uncompressedSize)
        if entry.method == ZipFormat.methodStored {
            // Sizes were checked equal when the archive was opened.
            if declared > 0 { out.copyMemory(from: compressed) }
            return declared
        }
        switch Deflate.inflate(compressed, into: out) {
        case let .ended(produced, consumed):
            guard produced == declared else {
                throw ArchiveError(.sizeMismatch, entry: entry.path,
                                   "inflates to \(produced) bytes but the archive declares \(declared)")
            }
            guard consumed == compressed.count else {
                throw ArchiveError(.sizeMismatch, entry: entry.path,
                                   "its deflate stream ends after \(consumed) of the \(compressed.count) compressed bytes declared")
            }
            return produced
        case .overflow:
            throw ArchiveError(.sizeMismatch, entry: entry.path,
                               "inflates to more than the \(declared) bytes the archive declares")
        case .truncated(let produced):
            throw ArchiveError(.truncated, entry: entry.path,
                               "its deflate stream is cut short after \(produced) of \(declared) bytes")
        case .corrupt(let message):
            throw ArchiveError(.malformed, entry: entry.path, "invalid deflate data (\(message))")
        }
    }

    // MARK: - Structure

    private static func parse(_ buffer: UnsafeRawBufferPointer, limits: Limits,
                              allowedName: (String) -> Bool) throws(ArchiveError) -> [Entry] {
        let end = try findEndRecord(buffer)
        let diskNumber = buffer.le16(end + 4), directoryDisk = buffer.le16(end + 6)
        let entriesOnDisk = Int(buffer.le16(end + 8)), entryCount = Int(buffer.le16(end + 10))
        let directorySize = UInt64(buffer.le32(end + 12)), directoryOffset = UInt64(buffer.le32(end + 16))

        if end >= 20 && buffer.le32(end - 20) == ZipFormat.zip64LocatorSignature
            || entryCount == 0xFFFF || directorySize == ZipFormat.zip32Limit || directoryOffset == ZipFormat.zip32Limit {
            throw ArchiveError(.unsupportedFeature, "zip64 archives are not supported")
        }
        guard diskNumber == 0, directoryDisk == 0, entriesOnDisk == entryCount else {
            throw ArchiveError(.unsupportedFeature, "multi-part (spanned) archives are not supported")
        }
        guard entryCount <= limits.maxEntries else {
            throw ArchiveError(.limitExceeded, "\(entryCount) entries is more than the limit of \(limits.maxEntries)")
        }
        guard directoryOffset + directorySize == UInt64(end) else {
            throw ArchiveError(.malformed, "the central directory (\(directorySize) bytes at \(directoryOffset)) does not end where the end record begins (\(end))")
        }
        guard directorySize >= UInt64(entryCount * ZipFormat.centralHeaderSize) else {
            throw ArchiveError(.malformed, "the central directory is \(directorySize) bytes, too small for \(entryCount) entries")
        }

        var entries: [Entry] = []
        entries.reserveCapacity(entryCount)
        var names = NameCollisionGuard()
        var total: UInt64 = 0
        var cursor = Int(directoryOffset)
        let directoryEnd = end
        for index in 0..<entryCount {
            let entry = try readCentralRecord(buffer, at: &cursor, limit: directoryEnd, index: index,
                                              directoryOffset: Int(directoryOffset), limits: limits,
                                              allowedName: allowedName)
            try names.insert(entry.path)
            total += entry.uncompressedSize
            guard total <= limits.maxTotalUncompressed else {
                throw ArchiveError(.limitExceeded, entry: entry.path,
                                   "the entries would inflate to more than the limit of \(limits.maxTotalUncompressed) bytes")
            }
            entries.append(entry)
        }
        guard cursor == directoryEnd else {
            throw ArchiveError(.malformed, "\(directoryEnd - cursor) unexplained bytes after the last central directory record")
        }

        // Entries must not share bytes: overlapping entries are how a small archive claims a huge
        // total ("overlapping zip bombs"), and no honest writer produces them.
        let byOffset = entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (a, b) in zip(byOffset, byOffset.dropFirst()) where a.dataOffset + Int(a.compressedSize) > b.localHeaderOffset {
            throw ArchiveError(.malformed, entry: b.path, "its bytes overlap those of \"\(a.path)\"")
        }
        return entries
    }

    /// The offset of the end-of-central-directory record: the last signature in the final
    /// 64 KiB + 22 bytes whose comment length reaches exactly to the end of the bytes.
    private static func findEndRecord(_ buffer: UnsafeRawBufferPointer) throws(ArchiveError) -> Int {
        guard buffer.count >= ZipFormat.endRecordSize else {
            throw ArchiveError(.notAnArchive, "\(buffer.count) bytes is too short to be a zip archive")
        }
        let last = buffer.count - ZipFormat.endRecordSize
        let first = max(0, last - ZipFormat.maxCommentSize)
        var position = last
        while position >= first {
            if buffer.le32(position) == ZipFormat.endOfCentralDirectorySignature,
               position + ZipFormat.endRecordSize + Int(buffer.le16(position + 20)) == buffer.count {
                return position
            }
            position -= 1
        }
        throw ArchiveError(.notAnArchive, "no end-of-central-directory record: not a zip archive, or its end is missing")
    }

    private static func readCentralRecord(_ buffer: UnsafeRawBufferPointer, at cursor: inout Int, limit: Int,
                                          index: Int, directoryOffset: Int, limits: Limits,
                                          allowedName: (String) -> Bool) throws(ArchiveError) -> Entry {
        let start = cursor
        guard limit - start >= ZipFormat.centralHeaderSize else {
            throw ArchiveError(.truncated, "central directory record \(index + 1) is cut short")
        }
        guard buffer.le32(start) == ZipFormat.centralHeaderSignature else {
            throw ArchiveError(.malformed, "central directory record \(index + 1) has a bad signature at byte \(start)")
        }
        let madeBy = buffer.le16(start + 4)
        let flags = buffer.le16(start + 8)
        let method = buffer.le16(start + 10)
        let crc = buffer.le32(start + 16)
        let compressed = UInt64(buffer.le32(start + 20))
        let uncompressed = UInt64(buffer.le32(start + 24))
        let nameLength = Int(buffer.le16(start + 28))
        let extraLength = Int(buffer.le16(start + 30))
        let commentLength = Int(buffer.le16(start + 32))
        let diskStart = buffer.le16(start + 34)
        let attributes = buffer.le32(start + 38)
        let localOffset = UInt64(buffer.le32(start + 42))
        let recordSize = ZipFormat.centralHeaderSize + nameLength + extraLength + commentLength
        guard limit - start >= recordSize else {
            throw ArchiveError(.truncated, "central directory record \(index + 1) runs past the directory's end")
        }
        cursor = start + recordSize

        let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[start + 46..<start + 46 + nameLength])
        guard let path = String(validating: nameBytes, as: UTF8.self) else {
            throw ArchiveError(.unsafeName, entry: String(decoding: nameBytes, as: UTF8.self), "the name is not valid UTF-8")
        }
        if let problem = EntryName.problem(path) { throw ArchiveError(.unsafeName, entry: path, problem) }

        if flags & (ZipFormat.flagEncrypted | ZipFormat.flagStrongEncryption | ZipFormat.flagMaskedHeaders) != 0 {
            throw ArchiveError(.encrypted, entry: path, "encrypted entries are not supported")
        }
        // The high 16 bits hold a Unix mode when the host is Unix (3) or macOS (19); other hosts
        // leave them zero. A link or a device is refused whatever the host claims.
        let host = madeBy >> 8
        let mode = attributes >> 16
        let type = mode & ZipFormat.unixTypeMask
        if type == ZipFormat.unixSymlink {
            throw ArchiveError(.symlink, entry: path, "symbolic links are not allowed")
        }
        if (host == 3 || host == 19 || type != 0) && type != 0
            && type != ZipFormat.unixRegular && type != ZipFormat.unixDirectory {
            throw ArchiveError(.specialFile, entry: path, "special files (device, fifo, socket) are not allowed")
        }
        let isDirectory = EntryName.isDirectory(path)
        if isDirectory && type == ZipFormat.unixRegular || !isDirectory && type == ZipFormat.unixDirectory {
            throw ArchiveError(.malformed, entry: path, "its attributes say \(type == ZipFormat.unixDirectory ? "folder" : "file") but its name says otherwise")
        }
        guard method == ZipFormat.methodStored || method == ZipFormat.methodDeflate else {
            throw ArchiveError(.unsupportedMethod, entry: path, "compression method \(method) is not supported (only stored and deflate)")
        }
        if compressed == ZipFormat.zip32Limit || uncompressed == ZipFormat.zip32Limit || localOffset == ZipFormat.zip32Limit
            || diskStart == 0xFFFF {
            throw ArchiveError(.unsupportedFeature, entry: path, "zip64 entries are not supported")
        }
        guard diskStart == 0 else {
            throw ArchiveError(.unsupportedFeature, entry: path, "multi-part (spanned) archives are not supported")
        }
        if method == ZipFormat.methodStored && compressed != uncompressed {
            throw ArchiveError(.sizeMismatch, entry: path, "stored entry declares \(compressed) bytes stored but \(uncompressed) bytes of contents")
        }
        if isDirectory && uncompressed != 0 {
            throw ArchiveError(.malformed, entry: path, "a folder entry holds \(uncompressed) bytes")
        }
        guard allowedName(path) else {
            throw ArchiveError(.outsideLayout, entry: path, "this name is not part of the expected layout")
        }
        guard uncompressed <= limits.maxEntryUncompressed else {
            throw ArchiveError(.limitExceeded, entry: path, "declares \(uncompressed) bytes, more than the limit of \(limits.maxEntryUncompressed)")
        }
        if uncompressed > limits.ratioFloor && uncompressed / max(compressed, 1) > limits.maxRatio {
            throw ArchiveError(.limitExceeded, entry: path,
                               "declares \(uncompressed) bytes from \(compressed) compressed, a ratio over the limit of \(limits.maxRatio):1 (a zip bomb?)")
        }

        let dataOffset = try checkLocalHeader(buffer, at: Int(localOffset), directoryOffset: directoryOffset, path: path,
                                              nameBytes: nameBytes, flags: flags, method: method, crc: crc,
                                              compressed: compressed, uncompressed: uncompressed)
        return Entry(path: path, isDirectory: isDirectory, method: method, crc32: crc,
                     compressedSize: compressed, uncompressedSize: uncompressed,
                     localHeaderOffset: Int(localOffset), dataOffset: dataOffset)
    }

    /// Cross-checks the local header against the central directory and returns the data offset.
    private static func checkLocalHeader(_ buffer: UnsafeRawBufferPointer, at offset: Int, directoryOffset: Int,
                                         path: String, nameBytes: UnsafeRawBufferPointer, flags: UInt16, method: UInt16,
                                         crc: UInt32, compressed: UInt64, uncompressed: UInt64) throws(ArchiveError) -> Int {
        guard offset <= directoryOffset - ZipFormat.localHeaderSize else {
            throw ArchiveError(.truncated, entry: path, "its local header at byte \(offset) lies outside the archive's data")
        }
        guard buffer.le32(offset) == ZipFormat.localHeaderSignature else {
            throw ArchiveError(.malformed, entry: path, "no local header at byte \(offset)")
        }
        let localFlags = buffer.le16(offset + 6)
        let localMethod = buffer.le16(offset + 8)
        let localCRC = buffer.le32(offset + 14)
        let localCompressed = UInt64(buffer.le32(offset + 18))
        let localUncompressed = UInt64(buffer.le32(offset + 22))
        let nameLength = Int(buffer.le16(offset + 26))
        let extraLength = Int(buffer.le16(offset + 28))
        let dataOffset = offset + ZipFormat.localHeaderSize + nameLength + extraLength
        guard dataOffset <= directoryOffset, UInt64(directoryOffset - dataOffset) >= compressed else {
            throw ArchiveError(.truncated, entry: path, "its data runs past the start of the central directory")
        }
        let localName = UnsafeRawBufferPointer(rebasing: buffer[offset + 30..<offset + 30 + nameLength])
        guard localName.elementsEqual(nameBytes) else {
            throw ArchiveError(.malformed, entry: path, "its local header names \"\(String(decoding: localName, as: UTF8.self))\"")
        }
        guard localFlags & ~ZipFormat.flagUTF8 == flags & ~ZipFormat.flagUTF8, localMethod == method else {
            throw ArchiveError(.malformed, entry: path, "its local header disagrees with the central directory on flags or method")
        }
        // With a data descriptor (flag bit 3) the local header may leave CRC and sizes zero.
        let deferred = flags & ZipFormat.flagDataDescriptor != 0
        func agrees<T: Equatable & BinaryInteger>(_ local: T, _ central: T) -> Bool { local == central || deferred && local == 0 }
        guard agrees(localCRC, crc), agrees(localCompressed, compressed), agrees(localUncompressed, uncompressed) else {
            throw ArchiveError(.malformed, entry: path, "its local header disagrees with the central directory on CRC or sizes")
        }
        return dataOffset
    }
}

func hex(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: false)
    return "0x" + String(repeating: "0", count: max(0, 8 - s.count)) + s
}
