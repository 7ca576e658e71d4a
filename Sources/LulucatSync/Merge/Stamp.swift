// Stamps, version vectors and position keys: the small ordered values the merge joins (docs/sync.md §5).

import Foundation

/// A logical time: a device's Lamport clock and the device. Ordered by clock, then by the device's
/// UUID string. Wall-clock times are never compared across devices.
package struct Stamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var clock: UInt64

    /// The largest clock a head, a blob or a base may carry (2^53: a device stamping a thousand
    /// edits a second would need 285,000 years). A larger one is refused where it is decoded (the
    /// head or blob left out and reported), so `clock + 1` never overflows and a hostile head
    /// cannot push every device's clock to the end of its range (docs/sync.md §5.1).
    package static let maxClock: UInt64 = 1 << 53
    package var device: UUID

    package init(clock: UInt64, device: UUID) {
        self.clock = clock
        self.device = device
    }

    package static func < (a: Stamp, b: Stamp) -> Bool {
        if a.clock != b.clock { return a.clock < b.clock }
        return a.device.precedesInBytes(b.device)
    }

    package var description: String { "\(clock)@\(device.uuidString.prefix(8))" }
}

/// What a deleting device had seen: for each device, the largest clock of its stamps.
/// The join is the element-wise maximum.
package struct VersionVector: Hashable, Sendable {
    package var clocks: [UUID: UInt64]

    package init(_ clocks: [UUID: UInt64] = [:]) { self.clocks = clocks }

    /// Whether the deleting device had seen the change `stamp` stands for.
    package func covers(_ stamp: Stamp) -> Bool { (clocks[stamp.device] ?? 0) >= stamp.clock }

    package mutating func include(_ stamp: Stamp) {
        if (clocks[stamp.device] ?? 0) < stamp.clock { clocks[stamp.device] = stamp.clock }
    }

    package func joined(_ other: VersionVector) -> VersionVector {
        var r = self
        for (d, c) in other.clocks where (r.clocks[d] ?? 0) < c { r.clocks[d] = c }
        return r
    }

    /// The join of two optional removals, `nil` being the bottom (never removed).
    package static func join(_ a: VersionVector?, _ b: VersionVector?) -> VersionVector? {
        guard let a else { return b }
        guard let b else { return a }
        return a.joined(b)
    }
}

/// A place in an order: digits in `[0, 2^32)`, compared lexicographically (a proper prefix is
/// smaller). Ties between equal keys are broken by the element's or page's id.
package struct PositionKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    package static let maxDigits = 64
    package var digits: [UInt32]

    package init(_ digits: [UInt32]) { self.digits = digits }

    package static func < (a: PositionKey, b: PositionKey) -> Bool { a.digits.lexicographicallyPrecedes(b.digits) }

    package var description: String { digits.map(String.init).joined(separator: ".") }

    /// A key strictly between `a` and `b` (either may be open), or nil when there is none
    /// (`a >= b`, or the key would grow past `maxDigits`). After the last key it is `[first + 1]`,
    /// so appending keeps keys one digit long.
    package static func between(_ a: PositionKey?, _ b: PositionKey?) -> PositionKey? {
        if let a, let b, !(a < b) { return nil }
        let lower = a?.digits ?? []
        var upper: [UInt32]? = b?.digits
        var result: [UInt32] = []
        var i = 0
        while i < maxDigits {
            let da = UInt64(i < lower.count ? lower[i] : 0)
            let db: UInt64
            if let u = upper { db = i < u.count ? UInt64(u[i]) : 0 } else { db = 1 << 32 }
            if da == db {
                result.append(UInt32(da))
                i += 1
                continue
            }
            if db - da > 1 {
                // Open above: step by one so repeated appends stay short.
                let digit = upper == nil ? da + 1 : (da + db) / 2
                result.append(UInt32(digit))
                // A key equal to `lower` with nothing after is not above it; da < digit, so fine.
                return PositionKey(result)
            }
            // Adjacent digits: keep `da` and look for room above the rest of `lower`.
            result.append(UInt32(da))
            upper = nil
            i += 1
        }
        return nil
    }
}

/// A last-writer-wins register: the value with the largest stamp wins.
package struct Register<Value: Hashable & Comparable & Sendable>: Hashable, Sendable {
    package var value: Value
    package var stamp: Stamp

    package init(_ value: Value, stamp: Stamp) {
        self.value = value
        self.stamp = stamp
    }

    /// The join; equal stamps (one device, one round) carry equal values, but a tie still decides
    /// the same way everywhere.
    package func joined(_ other: Register) -> Register {
        if stamp != other.stamp { return stamp < other.stamp ? other : self }
        return value >= other.value ? self : other
    }
}
