import Foundation
import Testing
import LulucatInk

/// The public way to read bytes: a reader lent inside a closure, over arrays, Data and slices,
/// with its typed errors carried out and file offsets named from `base`.
struct ByteReaderTests {
    @Test func readsLittleEndianAndVarintsFromEveryContiguousKind() throws {
        let bytes: [UInt8] = [0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xAC, 0x02]
        func fields(_ source: some ContiguousBytes) throws(PageFormatError) -> [UInt64] {
            try ByteReader.reading(source) { (r) throws(PageFormatError) in
                [UInt64(try r.readUInt8()), UInt64(try r.readUInt16()), UInt64(try r.readUInt32()),
                 try r.readVarint(), r.isAtEnd ? 1 : 0]
            }
        }
        let expected: [UInt64] = [1, 0x1234, 0x1234_5678, 300, 1]
        #expect(try fields(bytes) == expected)
        #expect(try fields(Data(bytes)) == expected)
        #expect(try fields(Array(bytes[0...])) == expected)
    }

    @Test func aReadPastTheEndThrowsTheFileOffset() {
        #expect(throws: PageFormatError.truncated(offset: 102, needed: 4, available: 1)) {
            try ByteReader.reading([UInt8]([1, 2, 3]), base: 100) { (r) throws(PageFormatError) in
                _ = try r.readUInt16()
                _ = try r.readUInt32()
            }
        }
    }

    @Test func anOverlongVarintIsRefused() {
        let eleven = [UInt8](repeating: 0x80, count: 10) + [0x01]
        #expect(throws: PageFormatError.self) {
            try ByteReader.reading(eleven) { (r) throws(PageFormatError) in _ = try r.readVarint() }
        }
    }
}
