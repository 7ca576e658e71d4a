// The zip fuzz check, shared by `fuzz/run.sh zip` and the bounded test in swift test: bytes as
// a one-file export, listed and extracted into memory within the reader's limits.

import Foundation
import LulucatInterchange
import LulucatInk
import LulucatStore
import LulucatStoreTesting

/// Feeds bytes to `ZipReader` (any names) and to `PackageArchive.read` (the package layout).
///
/// Expected for any bytes: an `ArchiveError`, or a listing. Checked: every file entry listed
/// either extracts to exactly its declared size and CRC-32 or fails with an `ArchiveError`;
/// nothing listed is unsafe, over a limit or overlapping; a package that imports has a
/// `document.json` and paths of the layout, and exporting its files and reading them again gives
/// the same files.
public enum ZipFuzz {
    /// The reader's own limits, and the import's: a fuzzed archive gets what a real one gets.
    /// (Within 64 KiB of input they bound one entry to about 13 MB: 1 MiB below the ratio floor,
    /// at most 200 times the compressed size above it.)
    package static let limits = ZipReader.Limits()
    package static let packageLimits = PackageArchive.defaultLimits

    public static func problem(_ bytes: [UInt8]) -> String? {
        if let p = problemOnce(bytes) { return "as given: \(p)" }
        let fixed = withChecksumsFixed(bytes)
        if fixed != bytes, let p = problemOnce(fixed) { return "with CRC-32s fixed: \(p)" }
        return nil
    }

    public static func problemOnce(_ bytes: [UInt8]) -> String? {
        let data = Data(bytes)
        if let reader = try? ZipReader(data, limits: limits) {
            if let p = listingProblem(reader, size: bytes.count) { return p }
            var total: UInt64 = 0
            for entry in reader.entries where !entry.isDirectory {
                total += entry.uncompressedSize
                // A thrown ArchiveError (typed throws) is the expected failure.
                guard let contents = try? reader.contents(of: entry) else { continue }
                guard UInt64(contents.count) == entry.uncompressedSize else {
                    return "\(entry.path) extracts to \(contents.count) bytes, declared \(entry.uncompressedSize)"
                }
                guard Deflate.crc32(contents) == entry.crc32 else { return "\(entry.path) extracts with another CRC-32 than declared" }
            }
            guard total <= limits.maxTotalUncompressed else { return "the entries declare \(total) bytes, over the limit" }
        }
        guard let files = try? PackageArchive.read(data, limits: packageLimits) else { return nil }
        guard files.contains(where: { $0.relativePath == "document.json" }) else { return "a package without document.json imports" }
        for f in files where !PackageLayout.allowsFile(f.relativePath) {
            return "the package imports \"\(f.relativePath)\", which is not a file of the layout"
        }
        guard Set(files.map(\.relativePath)).count == files.count else { return "the package imports a path twice" }
        let again: Data
        do { again = try PackageArchive.export(files: files) } catch { return "the imported files do not export: \(error)" }
        guard let back = try? PackageArchive.read(again, limits: packageLimits) else { return "the exported files do not import again" }
        func sorted(_ f: [(relativePath: String, data: Data)]) -> [String: Data] {
            Dictionary(f.map { ($0.relativePath, $0.data) }, uniquingKeysWith: { a, _ in a })
        }
        guard sorted(back) == sorted(files) else { return "the imported files differ after export and import" }
        return nil
    }

    /// What opening promised: safe, unique names inside the limits, data inside the archive,
    /// entries that do not overlap.
    package static func listingProblem(_ reader: ZipReader, size: Int) -> String? {
        guard reader.entries.count <= limits.maxEntries else { return "\(reader.entries.count) entries listed" }
        var keys = Set<String>()
        for e in reader.entries {
            if let p = EntryName.problem(e.path) { return "an unsafe name is listed: \(e.path) (\(p))" }
            guard keys.insert(EntryName.collisionKey(e.path)).inserted else { return "a duplicate name is listed: \(e.path)" }
            guard e.method == 0 || e.method == 8 else { return "\(e.path) has method \(e.method)" }
            guard e.uncompressedSize <= limits.maxEntryUncompressed else { return "\(e.path) declares \(e.uncompressedSize) bytes" }
            guard e.uncompressedSize <= limits.ratioFloor || e.uncompressedSize / max(e.compressedSize, 1) <= limits.maxRatio else {
                return "\(e.path) declares a ratio over the limit"
            }
            guard e.localHeaderOffset >= 0, e.dataOffset >= e.localHeaderOffset,
                  e.compressedSize <= UInt64(size), e.dataOffset <= size - Int(e.compressedSize) else {
                return "\(e.path)'s data lies outside the archive"
            }
            guard !e.isDirectory || e.uncompressedSize == 0 else { return "folder \(e.path) holds bytes" }
        }
        let byOffset = reader.entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (a, b) in zip(byOffset, byOffset.dropFirst()) where a.dataOffset + Int(a.compressedSize) > b.localHeaderOffset {
            return "\(a.path) and \(b.path) overlap"
        }
        return nil
    }

    // MARK: Checksums

    /// `bytes` with each entry's CRC-32 (central directory and local header) set to that of
    /// what its data inflates to, so that mutated data reaches the end of extraction and the
    /// package checks. The directory is walked as leniently as the bytes allow; anything that does
    /// not parse is left alone.
    public static func withChecksumsFixed(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        func le16(_ o: Int) -> Int { Int(out[o]) | Int(out[o + 1]) << 8 }
        func le32(_ o: Int) -> Int { le16(o) | le16(o + 2) << 16 }
        func put32(_ v: UInt32, _ o: Int) { for i in 0..<4 { out[o + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) } }
        guard out.count >= 22 else { return out }
        var end = out.count - 22
        while end >= max(0, out.count - 22 - 0xFFFF), le32(end) != 0x0605_4B50 { end -= 1 }
        guard end >= 0, end >= out.count - 22 - 0xFFFF else { return out }
        let count = le16(end + 10)
        var cursor = le32(end + 16)
        for _ in 0..<count {
            guard cursor >= 0, cursor + 46 <= out.count, le32(cursor) == 0x0201_4B50 else { break }
            let method = le16(cursor + 10)
            let compressed = le32(cursor + 20), uncompressed = le32(cursor + 24)
            let next = cursor + 46 + le16(cursor + 28) + le16(cursor + 30) + le16(cursor + 32)
            let local = le32(cursor + 42)
            defer { cursor = next }
            guard local + 30 <= out.count, le32(local) == 0x0403_4B50 else { continue }
            let start = local + 30 + le16(local + 26) + le16(local + 28)
            guard start <= out.count, compressed <= out.count - start else { continue }
            let crc: UInt32? = out.withUnsafeBytes { raw in
                let payload = UnsafeRawBufferPointer(rebasing: raw[start..<start + compressed])
                if method == 0 { return Deflate.crc32(payload) }
                guard method == 8, uncompressed <= 4 << 20 else { return nil }
                var buffer = [UInt8](repeating: 0, count: uncompressed + 1)
                return buffer.withUnsafeMutableBytes { room in
                    guard case .ended(let produced, _) = Deflate.inflate(payload, into: room) else { return nil }
                    return Deflate.crc32(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(room)[0..<produced]))
                }
            }
            guard let crc else { continue }
            put32(crc, cursor + 16)
            if le32(local + 14) != 0 || le16(local + 6) & 8 == 0 { put32(crc, local + 14) }
        }
        return out
    }

    // MARK: Seeds

    /// Archives our exporter made (`PackageArchive.export`, as `lnote export` writes them) of a
    /// small two-page package: with its top folder, without, and the metadata alone.
    public static func seeds() -> [(String, [UInt8])] {
        let files = SamplePackage.files()
        let metadata = files.filter { $0.relativePath.hasSuffix(".json") }
        do {
            return [("package.zip", [UInt8](try PackageArchive.export(files: files, topFolder: SamplePackage.documentID))),
                    ("no-top-folder.zip", [UInt8](try PackageArchive.export(files: files))),
                    ("metadata-only.zip", [UInt8](try PackageArchive.export(files: metadata, topFolder: SamplePackage.documentID)))]
        } catch {
            fatalError("the zip fuzz seeds could not be made: \(error)")
        }
    }
}
