// The writer and reader agree, and the writer's bytes are exactly reproducible.

import Foundation
import Testing
@testable import LulucatInterchange

@Suite struct ZipRoundTripTests {
    static let text = Data(String(repeating: "Lulucat notes are plain file packages. ", count: 200).utf8)
    static let noise = Data((0..<5000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })

    @Test func storedAndDeflatedRoundTrip() throws {
        let zip = ZipWriter()
        try zip.add(path: "a/stored.bin", data: Self.noise, method: .stored)
        try zip.add(path: "a/deflated.txt", data: Self.text, method: .deflated)
        try zip.add(path: "empty", data: Data(), method: .deflated)
        try zip.add(path: "empty-stored", data: Data(), method: .stored)
        try zip.addFolder(path: "folder/")
        let bytes = try zip.finish()

        let reader = try ZipReader(bytes)
        #expect(reader.entries.map(\.path) == ["a/stored.bin", "a/deflated.txt", "empty", "empty-stored", "folder/"])
        #expect(reader.entries.map(\.method) == [0, 8, 8, 0, 0])
        #expect(reader.entries[4].isDirectory)
        #expect(try reader.contents(of: reader.entries[0]) == Self.noise)
        #expect(try reader.contents(of: reader.entries[1]) == Self.text)
        #expect(try reader.contents(of: reader.entries[2]) == Data())
        #expect(try reader.contents(of: reader.entries[3]) == Data())
        // Deflate actually compressed the text.
        #expect(reader.entries[1].compressedSize < UInt64(Self.text.count) / 10)

        var seen: [String] = []
        try reader.forEachFile { entry, data in
            seen.append(entry.path)
            #expect(data.count == Int(entry.uncompressedSize))
        }
        #expect(seen == ["a/stored.bin", "a/deflated.txt", "empty", "empty-stored"])
    }

    /// The exact bytes of a one-entry stored archive, field by field (APPNOTE 4.3.7, 4.3.12, 4.3.16).
    @Test func storedArchiveIsByteExact() throws {
        let zip = ZipWriter()
        try zip.add(path: "a.txt", data: Data("hi".utf8), method: .stored)
        let bytes = [UInt8](try zip.finish())
        let crc: [UInt8] = [0xAC, 0x2A, 0x93, 0xD8] // CRC-32 of "hi" is 0xD8932AAC (Python zlib.crc32)
        let local: [UInt8] = [0x50, 0x4B, 0x03, 0x04, 10, 0, 0x00, 0x08, 0, 0, 0, 0, 0x21, 0]
            + crc + [2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0] + Array("a.txt".utf8) + Array("hi".utf8)
        let central: [UInt8] = [0x50, 0x4B, 0x01, 0x02, 20, 3, 10, 0, 0x00, 0x08, 0, 0, 0, 0, 0x21, 0]
            + crc + [2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0xA4, 0x81, 0, 0, 0, 0]
            + Array("a.txt".utf8)
        let end: [UInt8] = [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 1, 0, 1, 0, UInt8(central.count), 0, 0, 0,
                            UInt8(local.count), 0, 0, 0, 0, 0]
        #expect(bytes == local + central + end)
    }

    @Test func outputIsDeterministic() throws {
        func build() throws -> Data {
            let zip = ZipWriter()
            try zip.add(path: "document.json", data: Self.text)
            try zip.add(path: "assets/x.jpg", data: Self.noise, method: .stored)
            return try zip.finish()
        }
        let a = try build(), b = try build()
        #expect(a == b)
        // Every header carries the fixed 1980-01-01 timestamp.
        let reader = try ZipReader(a)
        for e in reader.entries {
            #expect(a[e.localHeaderOffset + 10] == 0 && a[e.localHeaderOffset + 12] == 0x21)
        }
        // A chosen timestamp changes only the timestamp bytes.
        let zip = ZipWriter(options: .init(timestamp: ZipTimestamp(year: 2026, month: 11, day: 30, hour: 12)))
        try zip.add(path: "document.json", data: Self.text)
        try zip.add(path: "assets/x.jpg", data: Self.noise, method: .stored)
        let c = try zip.finish()
        #expect(c.count == a.count && c != a)
    }

    @Test func sinkStreamsTheSameBytes() throws {
        var streamed = Data()
        let zip = ZipWriter(sink: { streamed.append(contentsOf: $0) })
        try zip.add(path: "document.json", data: Self.text)
        try zip.add(path: "b.bin", data: Self.noise, method: .stored)
        #expect(try zip.finish().isEmpty)
        let memory = ZipWriter()
        try memory.add(path: "document.json", data: Self.text)
        try memory.add(path: "b.bin", data: Self.noise, method: .stored)
        #expect(streamed == (try memory.finish()))

        struct Full: Error {}
        let failing = ZipWriter(sink: { _ in throw Full() })
        #expect(archiveError { try failing.add(path: "x", data: Self.text) }?.kind == .io)
    }

    /// Zip without zip64 ends at 4 GiB. The size is checked before a byte is read, so a buffer
    /// that claims 4 GiB over one real byte is enough to see the refusal.
    @Test func writerRefusesEntriesOf4GiB() throws {
        let zip = ZipWriter()
        let one: [UInt8] = [0]
        one.withUnsafeBytes { real in
            let claimed = UnsafeRawBufferPointer(start: real.baseAddress, count: 1 << 32)
            let e = archiveError { try zip.add(path: "huge.bin", bytes: claimed) }
            #expect(e?.kind == .tooLarge)
            #expect(e?.entry == "huge.bin")
        }
    }

    @Test func writerRefusesWhatTheReaderRefuses() throws {
        let zip = ZipWriter()
        for bad in ["/abs", "../up", "a/../b", "a\\b", "", "a//b", "./a", "c:x", "dir/"] {
            #expect(archiveError { try zip.add(path: bad, data: Data()) }?.kind == .unsafeName, "\(bad)")
        }
        try zip.add(path: "Doc.json", data: Data())
        #expect(archiveError { try zip.add(path: "Doc.json", data: Data()) }?.kind == .duplicateName)
        #expect(archiveError { try zip.add(path: "doc.JSON", data: Data()) }?.kind == .duplicateName)
        #expect(archiveError { try zip.add(path: "Doc.json/inner", data: Data()) }?.kind == .duplicateName)
    }
}
