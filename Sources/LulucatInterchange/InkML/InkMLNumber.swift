// Numbers from InkML attributes, read strictly: finite decimals only, never NaN or infinity.

import Foundation

/// Reads an attribute value as a number. Swift's `Double(String)` accepts `nan`, `inf`,
/// `infinity` and hexadecimal floats; a file from another device must not get any of those
/// into a conversion (`UInt8(Double.nan)` traps), so only `[+-]? digits [. digits] [e [+-] digits]`
/// (or `.digits`) is taken, surrounding white space allowed, and only when the result is finite.
enum InkMLNumber {
    static func parse(_ s: String) -> Double? {
        let t = s.trimmingCharacters(in: .whitespacesAndNewlines)
        let b = Array(t.utf8)
        guard !b.isEmpty, b.count <= 64 else { return nil }
        var i = 0
        if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        func digits() -> Int {
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
            return i - start
        }
        var n = digits()
        if i < b.count, b[i] == UInt8(ascii: ".") { i += 1; n += digits() }
        guard n > 0 else { return nil }
        if i < b.count, b[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return nil }
        }
        guard i == b.count, let v = Double(t), v.isFinite else { return nil }
        return v
    }

    /// `value`, when it is finite and within `range`.
    static func parse(_ s: String, in range: ClosedRange<Double>) -> Double? {
        guard let v = parse(s), range.contains(v) else { return nil }
        return v
    }
}

extension InkMLNumber {
    /// A short decimal for messages ("133", "0.5").
    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(format: "%.4g", v)
    }
}
