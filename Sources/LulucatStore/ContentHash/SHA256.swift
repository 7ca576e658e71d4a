// SHA-256 (FIPS 180-4), for content hashes that must agree across engines and machines. The
// toolchain has no portable digest on Linux, and the hash is small enough to own.

/// A SHA-256 digest of bytes.
enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        // Padding: 0x80, zeros to 56 mod 64, then the bit length big-endian.
        var tail = Array(message.suffix(message.count % 64))
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bits = UInt64(message.count) &* 8
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i)))) }
        // The schedule and the constants through raw pointers: no bounds checks or copies in the
        // 64 rounds (about 4x faster than arrays, which matters for page blobs of 250 KB).
        let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        defer { w.deallocate() }
        k.withUnsafeBufferPointer { kb in
            let k = kb.baseAddress!
            func blocks(_ raw: UnsafeRawBufferPointer, count: Int) {
                var offset = 0
                while offset + 64 <= count {
                    compress(raw.baseAddress! + offset, w, k, &h)
                    offset += 64
                }
            }
            message.withUnsafeBytes { blocks($0, count: $0.count) }
            tail.withUnsafeBytes { blocks($0, count: $0.count) }
        }
        let words = [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7]
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for v in words { for s in [24, 16, 8, 0] as [UInt32] { out.append(UInt8(truncatingIfNeeded: v >> s)) } }
        return out
    }

    @inline(__always)
    private static func compress(_ block: UnsafeRawPointer, _ w: UnsafeMutablePointer<UInt32>, _ k: UnsafePointer<UInt32>,
                                 _ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)) {
        for t in 0..<16 { w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self)) }
        for t in 16..<64 {
            let a = w[t - 15], b = w[t - 2]
            let s0 = a.rotr(7) ^ a.rotr(18) ^ (a >> 3)
            let s1 = b.rotr(17) ^ b.rotr(19) ^ (b >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = h
        for t in 0..<64 {
            let t1 = hh &+ (e.rotr(6) ^ e.rotr(11) ^ e.rotr(25)) &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
            let t2 = (a.rotr(2) ^ a.rotr(13) ^ a.rotr(22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
        }
        h.0 &+= a; h.1 &+= b; h.2 &+= c; h.3 &+= d; h.4 &+= e; h.5 &+= f; h.6 &+= g; h.7 &+= hh
    }
}

extension UInt32 {
    @inline(__always) fileprivate func rotr(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
}
