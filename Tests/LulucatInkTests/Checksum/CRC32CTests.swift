import Testing
@testable import LulucatInk

@Suite struct CRC32CTests {
    // RFC 3720, appendix B.4.
    @Test func rfc3720Vectors() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        let iscsiRead: [UInt8] = [
            0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
            0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]
        #expect(CRC32C.checksum(iscsiRead) == 0xD9963A56)
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func hardwareAndSoftwareAgree() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        // From 6,144 bytes (3 x 2 KiB) the hardware path runs three streams and joins them.
        for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4097, 6_143, 6_144, 6_145, 6_151, 12_288, 12_301, 54_400, 200_003] {
            let bytes = (0..<length).map { _ -> UInt8 in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 33)
            }
            let soft = bytes.withUnsafeBytes { CRC32C.software($0) }
            #expect(CRC32C.checksum(bytes) == soft, "length \(length)")
            let softCont = bytes.withUnsafeBytes { CRC32C.software($0, continuing: 0xDEAD_BEEF) }
            #expect(CRC32C.checksum(bytes, continuing: 0xDEAD_BEEF) == softCont)
        }
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.software($0) } == 0xE306_9283)
    }

    /// The three-stream path at every alignment and across the joins, continuing from many states.
    @Test func threeStreamsAgreeAtEveryOffset() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let bytes = (0..<40_000).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        bytes.withUnsafeBytes { all in
            for offset in 0..<16 {
                for length in [6_144 - offset, 6_144 + offset, 18_432 + 3 * offset, 39_984 - offset] {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let seed = UInt32(truncatingIfNeeded: offset &* 0x9E37_79B9)
                    #expect(CRC32C.checksum(slice, continuing: seed) == CRC32C.software(slice, continuing: seed), "offset \(offset) length \(length)")
                }
            }
        }
    }

    @Test func continuingMatchesWhole() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let a = CRC32C.checksum(Array(bytes[..<split]))
            #expect(CRC32C.checksum(Array(bytes[split...]), continuing: a) == CRC32C.checksum(bytes))
        }
    }

    /// Combining the CRCs of two pieces gives the CRC of the whole, and `suffix` undoes it, at
    /// every split of random bytes (lengths across the powers of two the shift is made of).
    @Test func combineMatchesWhole() {
        var state: UInt64 = 0x1234_5678_9ABC_DEF1
        let bytes = (0..<70_000).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        let whole = CRC32C.checksum(bytes)
        for split in [0, 1, 2, 3, 4, 5, 8, 24, 255, 256, 257, 4095, 4096, 33_333, 65_536, 69_999, 70_000] {
            let a = CRC32C.checksum(Array(bytes[..<split]))
            let b = CRC32C.checksum(Array(bytes[split...]))
            #expect(CRC32C.combine(a, b, lengthB: bytes.count - split) == whole, "split \(split)")
            #expect(CRC32C.suffix(of: whole, prefix: a, lengthB: bytes.count - split) == b, "split \(split)")
        }
        #expect(CRC32C.combine(0xE306_9283, 0, lengthB: 0) == 0xE306_9283)
        #expect(CRC32C.combine(0, 0xE306_9283, lengthB: 9) == 0xE306_9283)
    }
}
