// Archives built by hand to attack the reader: each must be refused with the right error.

import Foundation
import Testing
@testable import LulucatInterchange

@Suite struct HostileArchiveTests {
    let hello = Array("hello, world".utf8)

    func refusal(_ entries: [RawEntry], limits: ZipReader.Limits = .init(),
                 allowed: @escaping (String) -> Bool = { _ in true }) -> ArchiveError? {
        let data = RawZip.build(entries)
        return archiveError {
            let reader = try ZipReader(data, limits: limits, allowedName: allowed)
            try reader.forEachFile { _, _ in }
        }
    }

    @Test func honestRawArchiveIsAccepted() throws {
        let data = RawZip.build([.stored("a.txt", hello), .deflated("b/c.txt", hello)])
        let reader = try ZipReader(data)
        #expect(try reader.contents(of: reader.entries[1]) == Data(hello))
    }

    @Test func dataDescriptorsAndCommentsAreAccepted() throws {
        var a = RawEntry.deflated("a.txt", hello), b = RawEntry.stored("b.txt", hello)
        a.dataDescriptor = true
        b.dataDescriptor = true
        let reader = try ZipReader(RawZip.build([a, b]))
        #expect(try reader.contents(of: reader.entries[0]) == Data(hello))
        #expect(try reader.contents(of: reader.entries[1]) == Data(hello))
        // An archive comment, exactly as long as the end record says.
        let commented = RawZip.build([.stored("a.txt", hello)]) { w in
            w.setUInt32(UInt32(5) << 16, at: w.count - 4) // comment length 5 (the high half of the last word)
            w.writeBytes(Array("hello".utf8))
        }
        #expect(try ZipReader(commented).entries.count == 1)
        var lying = commented
        lying.append(0)
        #expect(archiveError { _ = try ZipReader(lying) }?.kind == .notAnArchive)
    }

    @Test func unsafeNames() {
        for name in ["/etc/passwd", "../evil", "a/../../evil", "a\\..\\evil", "", "a//b", "./x", "C:/x", "a\u{0}b"] {
            let e = refusal([.stored(name, hello)])
            #expect(e?.kind == .unsafeName, "\(name): \(String(describing: e))")
            #expect(e?.entry == name)
        }
        // Not UTF-8.
        var raw = RawEntry.stored("x", hello)
        raw.name = String(decoding: [0x61, 0xFF, 0x62], as: UTF8.self) // replaced by U+FFFD: still fine UTF-8
        #expect(refusal([raw]) == nil)
    }

    @Test func symlinkAndSpecialFiles() {
        var link = RawEntry.stored("link", Array("/etc/passwd".utf8))
        link.externalAttributes = 0o120777 << 16
        #expect(refusal([link])?.kind == .symlink)
        #expect(refusal([link])?.entry == "link")
        // A link is refused even when the host byte claims MS-DOS.
        link.madeBy = 20
        #expect(refusal([link])?.kind == .symlink)
        var fifo = RawEntry.stored("fifo", [])
        fifo.externalAttributes = 0o010644 << 16
        #expect(refusal([fifo])?.kind == .specialFile)
    }

    @Test func duplicates() {
        #expect(refusal([.stored("a.json", hello), .stored("a.json", hello)])?.kind == .duplicateName)
        let caseDuplicate = refusal([.stored("pages/A.content", hello), .stored("pages/a.CONTENT", hello)])
        #expect(caseDuplicate?.kind == .duplicateName)
        #expect(caseDuplicate?.entry == "pages/a.CONTENT")
        // Same name in NFC and NFD: one file on APFS.
        #expect(refusal([.stored("caf\u{E9}", hello), .stored("cafe\u{301}", hello)])?.kind == .duplicateName)
        // A file and a folder of the same name.
        #expect(refusal([.stored("a", hello), .stored("a/b", hello)])?.kind == .duplicateName)
        #expect(refusal([.stored("a/b", hello), .stored("A", hello)])?.kind == .duplicateName)
    }

    @Test func encryptedAndUnsupportedMethods() {
        var encrypted = RawEntry.stored("secret", hello)
        encrypted.flags |= 1
        #expect(refusal([encrypted])?.kind == .encrypted)
        var bzip = RawEntry.stored("b", hello)
        bzip.method = 12
        #expect(refusal([bzip])?.kind == .unsupportedMethod)
    }

    @Test func namesOutsideTheLayout() {
        let e = refusal([.stored("ok.txt", hello), .stored("evil.sh", hello)], allowed: { $0.hasSuffix(".txt") })
        #expect(e?.kind == .outsideLayout)
        #expect(e?.entry == "evil.sh")
    }

    @Test func declaredSizesThatLie() {
        let contents = [UInt8](repeating: 7, count: 1000)
        var tooSmall = RawEntry.deflated("big", contents)
        tooSmall.uncompressedSize = 10
        let small = refusal([tooSmall])
        #expect(small?.kind == .sizeMismatch)
        #expect(small?.entry == "big")
        var tooLarge = RawEntry.deflated("big", contents)
        tooLarge.uncompressedSize = 2000
        #expect(refusal([tooLarge])?.kind == .sizeMismatch)
        // A stored entry whose sizes disagree.
        var stored = RawEntry.stored("s", hello)
        stored.uncompressedSize = 5
        #expect(refusal([stored])?.kind == .sizeMismatch)
        // Deflate data that is cut short.
        var cut = RawEntry.deflated("cut", (0..<4000).map { UInt8(truncatingIfNeeded: $0 * 31 / 7) })
        cut.payload.removeLast(cut.payload.count / 2)
        #expect(refusal([cut])?.kind == .truncated)
        // Garbage that is not deflate at all.
        var garbage = RawEntry.stored("g", [0xFF, 0xFF, 0xFF, 0xFF])
        garbage.method = 8
        garbage.uncompressedSize = 100
        #expect(refusal([garbage])?.kind == .malformed)
    }

    @Test func zipBombs() {
        // 20 MB of zeros deflate to ~20 KB: a ratio near 1000:1.
        let bomb = RawEntry.deflated("bomb", [UInt8](repeating: 0, count: 20 << 20))
        let e = refusal([bomb])
        #expect(e?.kind == .limitExceeded)
        #expect(e?.entry == "bomb")
        // The total bound, with many honest entries.
        var limits = ZipReader.Limits()
        limits.maxTotalUncompressed = 10_000
        let many = (0..<20).map { RawEntry.stored("f\($0)", [UInt8](repeating: 1, count: 600)) }
        #expect(refusal(many, limits: limits)?.kind == .limitExceeded)
        // The entry count bound.
        limits = ZipReader.Limits()
        limits.maxEntries = 10
        #expect(refusal(many, limits: limits)?.kind == .limitExceeded)
        // One entry's declared size.
        limits = ZipReader.Limits()
        limits.maxEntryUncompressed = 500
        #expect(refusal(many, limits: limits)?.kind == .limitExceeded)
    }

    @Test func overlappingEntries() {
        // Two central records pointing at the same local header and data.
        var second = RawEntry.stored("b", hello)
        second.offsetOverride = 0
        second.localName = "b"
        let data = RawZip.build([.stored("a", hello), second])
        // The second's local header (at 0) names "a", which is caught first; either way: refused.
        #expect(archiveError { _ = try ZipReader(data) }?.kind == .malformed)
    }

    @Test func localHeaderMustAgree() {
        var renamed = RawEntry.stored("good.txt", hello)
        renamed.localName = "evil.txt"
        #expect(refusal([renamed])?.kind == .malformed)
    }

    @Test func zip64AndMultiDisk() {
        let zip64 = RawZip.build([.stored("a", hello)]) { w in
            let end = w.count - 22
            w.setUInt32(0xFFFF_FFFF, at: end + 16) // directory offset marker
        }
        #expect(archiveError { _ = try ZipReader(zip64) }?.kind == .unsupportedFeature)
        let spanned = RawZip.build([.stored("a", hello)]) { w in
            w.bytes[w.count - 22 + 4] = 1 // disk number
        }
        #expect(archiveError { _ = try ZipReader(spanned) }?.kind == .unsupportedFeature)
    }

    @Test func notAnArchive() {
        #expect(archiveError { _ = try ZipReader(Data()) }?.kind == .notAnArchive)
        #expect(archiveError { _ = try ZipReader(Data(repeating: 0x50, count: 100_000)) }?.kind == .notAnArchive)
    }

    @Test func corruptedData() throws {
        var data = RawZip.build([.stored("a.txt", hello), .deflated("b.txt", hello)])
        data[30 + 5 + 3] ^= 0x20 // a byte of "hello" in the stored entry
        let reader = try ZipReader(data)
        let e = archiveError { _ = try reader.contents(of: reader.entries[0]) }
        #expect(e?.kind == .checksumMismatch)
        #expect(e?.entry == "a.txt")
        #expect(try reader.contents(of: reader.entries[1]) == Data(hello))
        // A wrong CRC declared consistently in both headers.
        var lying = RawEntry.stored("c.txt", hello)
        lying.crc ^= 1
        #expect(refusal([lying])?.kind == .checksumMismatch)
    }

    /// Every truncation of a valid archive is refused cleanly.
    @Test func truncatedAtEveryOffset() throws {
        let writer = ZipWriter()
        try writer.add(path: "document.json", data: Data(String(repeating: "{\"a\":1}", count: 50).utf8))
        try writer.add(path: "pages/p.content", data: Data((0..<300).map { UInt8($0 % 251) }), method: .stored)
        let full = try writer.finish()
        for length in 0..<full.count {
            let cut = full.prefix(length)
            let e = archiveError {
                let reader = try ZipReader(Data(cut))
                try reader.forEachFile { _, _ in }
            }
            #expect(e != nil, "a truncation to \(length) bytes was accepted")
        }
    }

    /// Any single corrupted byte is refused or, where it touches nothing that matters (a
    /// timestamp), gives back exactly the original contents: never wrong data.
    @Test func everySingleByteCorruption() throws {
        let writer = ZipWriter()
        let files: [(String, Data)] = [("a.json", Data(String(repeating: "ab", count: 40).utf8)),
                                       ("b.bin", Data((0..<64).map { UInt8($0) }))]
        try writer.add(path: files[0].0, data: files[0].1)
        try writer.add(path: files[1].0, data: files[1].1, method: .stored)
        let full = try writer.finish()
        for offset in 0..<full.count {
            var bad = full
            bad[offset] ^= 0x5A
            do {
                let reader = try ZipReader(bad)
                var read: [Data] = []
                try reader.forEachFile { _, data in read.append(data) }
                #expect(read == files.map(\.1), "corruption at \(offset) changed the contents")
            } catch is ArchiveError {
                // Refused: fine.
            }
        }
    }
}

@Suite struct ZipEntryMisuseTests {
    @Test func anAlteredEntryIsRefused() throws {
        let reader = try ZipReader(RawZip.build([.stored("a", Array("abc".utf8))]))
        var entry = reader.entries[0]
        entry.compressedSize = 1 << 40
        entry.uncompressedSize = 1 << 40
        #expect(archiveError { _ = try reader.contents(of: entry) }?.kind == .malformed)
        entry = reader.entries[0]
        entry.dataOffset = -1
        #expect(archiveError { _ = try reader.contents(of: entry) }?.kind == .malformed)
    }
}
