// Reads the text of a <trace>: points, values and the explicit / difference prefixes of InkML.

import Foundation

/// Decodes trace text (InkML 1.0, §3.2.1) into one column of raw values per channel.
///
/// Grammar: points are separated by `,`; values within a point by whitespace, or by nothing
/// where the next value's first character cannot continue the previous one ("3-5" is 3 and -5,
/// "1.5.5" is 1.5 and .5, "7'2" is 7 and '2). A value is
/// `difference_order? wsp* "-"? wsp* number | "T" | "F" | "*" | "?"`, a number is
/// `digit+ ("." digit*)? | "." digit+`, optionally with an exponent, or `#` and hex digits.
///
/// Difference orders: `!` explicit, `'` first difference (value minus the previous one), `"`
/// second difference (change of the first difference). A prefix sticks: values of that channel
/// without a prefix keep the last order given, until another prefix; every channel starts
/// explicit. A second difference at the second point takes the velocity before the first point
/// as zero. `*` repeats the channel's previous value; `?` leaves it unknown (NaN), and the next
/// difference is taken from the last known value. `T`/`F` are 1 and 0.
struct TraceParser {
    enum Order { case explicit, first, second }

    struct Failure: Error {
        var offset: Int
        var message: String
        /// The trace passed the point bound (not a syntax error).
        var tooMany = false
        /// A point has more values than the format has channels.
        var tooManyValues = false
    }

    /// Columns of raw values, one per channel of the format, all of the same length; NaN where a
    /// value is unknown.
    var columns: [[Double]]
    var pointCount: Int { columns.first?.count ?? 0 }

    /// - Parameters:
    ///   - maxPoints: the parse stops with an error past this many points.
    static func parse(_ text: UnsafeRawBufferPointer, format: TraceFormat, maxPoints: Int) throws(Failure) -> TraceParser {
        var parser = Decoder(text: text, format: format, maxPoints: maxPoints)
        try parser.run()
        return TraceParser(columns: parser.columns)
    }

    private struct ChannelState {
        var order = Order.explicit
        var last: Double?      // v(n-1), the last known value
        var velocity: Double = 0 // v(n-1) - v(n-2)
    }

    private struct Decoder {
        let text: UnsafeRawBufferPointer
        let format: TraceFormat
        let maxPoints: Int
        var columns: [[Double]]
        var states: [ChannelState]
        var position = 0

        init(text: UnsafeRawBufferPointer, format: TraceFormat, maxPoints: Int) {
            self.text = text
            self.format = format
            self.maxPoints = maxPoints
            self.columns = Array(repeating: [], count: format.channels.count)
            self.states = Array(repeating: ChannelState(), count: format.channels.count)
        }

        mutating func run() throws(Failure) {
            let total = format.channels.count
            let regular = format.regularCount
            var pointIndex = 0
            while true {
                skipSpace()
                if position == text.count { break }
                let pointStart = position
                var valueCount = 0
                while true {
                    skipSpace()
                    if position == text.count || text[position] == UInt8(ascii: ",") { break }
                    guard valueCount < total else {
                        throw Failure(offset: position, message: "point \(pointIndex + 1) has more values than the \(total) channels of its trace format",
                                      tooManyValues: true)
                    }
                    try readValue(channel: valueCount)
                    valueCount += 1
                }
                if valueCount == 0 {
                    // A trailing comma ends the trace harmlessly; an empty point inside it is an error.
                    if position == text.count && pointIndex > 0 { break }
                    throw Failure(offset: pointStart, message: "point \(pointIndex + 1) is empty")
                }
                guard valueCount >= regular else {
                    throw Failure(offset: pointStart, message: "point \(pointIndex + 1) has \(valueCount) values but the trace format has \(regular) regular channels")
                }
                for channel in valueCount..<total { omit(channel: channel) }
                pointIndex += 1
                guard pointIndex <= maxPoints else {
                    throw Failure(offset: pointStart, message: "the trace has more than \(maxPoints) points", tooMany: true)
                }
                if position < text.count { position += 1 } // the comma
            }
        }

        mutating func skipSpace() {
            while position < text.count {
                switch text[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func readValue(channel: Int) throws(Failure) {
            let start = position
            let c = text[position]
            switch c {
            case UInt8(ascii: "*"):
                position += 1
                columns[channel].append(states[channel].last ?? .nan)
                // Unchanged value: the velocity becomes zero.
                states[channel].velocity = 0
                return
            case UInt8(ascii: "?"):
                position += 1
                columns[channel].append(.nan)
                return
            case UInt8(ascii: "T"), UInt8(ascii: "F"):
                position += 1
                store(c == UInt8(ascii: "T") ? 1 : 0, channel: channel)
                return
            default:
                break
            }
            var order: Order?
            switch c {
            case UInt8(ascii: "!"): order = .explicit
            case UInt8(ascii: "'"): order = .first
            case UInt8(ascii: "\""): order = .second
            default: break
            }
            if order != nil { position += 1; skipSpace() }
            var negative = false
            if position < text.count && text[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
                skipSpace()
            }
            guard let magnitude = readNumber() else {
                let what = position < text.count ? "\"\(Character(Unicode.Scalar(text[position])))\"" : "the end of the trace"
                throw Failure(offset: position, message: "expected a number but found \(what)")
            }
            guard magnitude.isFinite else {
                throw Failure(offset: start, message: "the value is out of range")
            }
            let x = negative ? -magnitude : magnitude
            if let order { states[channel].order = order }
            var state = states[channel]
            let value: Double
            switch state.order {
            case .explicit:
                value = x
            case .first:
                guard let last = state.last else {
                    throw Failure(offset: start, message: "a difference value with no earlier value to add it to (channel \(format.channels[channel].name))")
                }
                value = last + x
            case .second:
                guard let last = state.last else {
                    throw Failure(offset: start, message: "a second difference with no earlier value (channel \(format.channels[channel].name))")
                }
                value = last + state.velocity + x
            }
            state.velocity = state.last.map { value - $0 } ?? 0
            state.last = value
            states[channel] = state
            columns[channel].append(value)
        }

        mutating func store(_ value: Double, channel: Int) {
            states[channel].velocity = states[channel].last.map { value - $0 } ?? 0
            states[channel].last = value
            columns[channel].append(value)
        }

        /// An intermittent channel the point left out: its previous value, else its default.
        mutating func omit(channel: Int) {
            columns[channel].append(states[channel].last ?? format.channels[channel].defaultValue ?? .nan)
        }

        /// `#hex`, or a decimal with an optional exponent; nil if none starts here.
        mutating func readNumber() -> Double? {
            guard position < text.count else { return nil }
            if text[position] == UInt8(ascii: "#") {
                var end = position + 1
                var value: UInt64 = 0
                while end < text.count, let d = hexDigit(text[end]) {
                    if value > (UInt64.max >> 4) { return .infinity }
                    value = value << 4 | UInt64(d)
                    end += 1
                }
                guard end > position + 1 else { return nil }
                position = end
                return Double(value)
            }
            let start = position
            var mantissa: UInt64 = 0
            var digits = 0
            var fractionDigits = 0
            var end = position
            while end < text.count, isDigit(text[end]) {
                if digits < 18 { mantissa = mantissa * 10 + UInt64(text[end] - 48) }
                digits += 1; end += 1
            }
            let integerDigits = digits
            if end < text.count, text[end] == UInt8(ascii: ".") {
                end += 1
                while end < text.count, isDigit(text[end]) {
                    if digits < 18 { mantissa = mantissa * 10 + UInt64(text[end] - 48) }
                    digits += 1; fractionDigits += 1; end += 1
                }
            }
            guard integerDigits > 0 || fractionDigits > 0 else { return nil }
            var hasExponent = false
            if end < text.count, text[end] | 0x20 == UInt8(ascii: "e") {
                var e = end + 1
                if e < text.count, text[e] == UInt8(ascii: "+") || text[e] == UInt8(ascii: "-") { e += 1 }
                guard e < text.count, isDigit(text[e]) else { return nil }
                while e < text.count, isDigit(text[e]) { e += 1 }
                end = e
                hasExponent = true
            }
            position = end
            // Up to 15 significant digits: one exact division, correctly rounded.
            if !hasExponent && digits <= 15 && fractionDigits < Self.powersOfTen.count {
                return Double(mantissa) / Self.powersOfTen[fractionDigits]
            }
            let literal = String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<end]), as: UTF8.self)
            return Double(literal) ?? .infinity
        }

        /// 10^0 ... 10^22, all exact in a Double.
        static let powersOfTen: [Double] = (0...22).reduce(into: []) { table, n in table.append(n == 0 ? 1 : table[n - 1] * 10) }

        func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        func hexDigit(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
    }
}
