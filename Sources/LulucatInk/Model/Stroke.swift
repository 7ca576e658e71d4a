// A pen stroke: its id, its ink and its samples, with optional per-stroke channels.

import Foundation

/// Optional per-sample channels a stroke may carry. A stroke has a channel for all of its samples
/// or not at all.
public struct OptionalChannels: OptionSet, Hashable, Sendable {
    /// The channel bits as the page file stores them (bit 0 azimuth, 1 altitude, 2 opacity).
    public let rawValue: UInt8
    /// The channels whose bits `rawValue` sets.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Azimuth of the pen in 0.001 rad (0...6283).
    public static let azimuth = OptionalChannels(rawValue: 1 << 0)
    /// Altitude of the pen in 0.001 rad (0...1571, 1571 is perpendicular to the screen).
    public static let altitude = OptionalChannels(rawValue: 1 << 1)
    /// Opacity in thousandths (PencilKit keeps it per sample).
    public static let opacity = OptionalChannels(rawValue: 1 << 2)
    /// Every optional channel this version knows: what a stroke from PencilKit points carries.
    public static let all: OptionalChannels = [.azimuth, .altitude, .opacity]
}

/// A pen stroke as the canvas drew it.
public struct Stroke: Hashable, Sendable, Identifiable {
    /// The stroke's id, unique on its page.
    public var id: UUID
    /// The tool, colour and base width it was drawn with.
    public var ink: Ink
    /// The pen's samples in the order drawn (at most `PageFile.maxSamplesPerStroke`).
    public var samples: [Sample]
    /// Azimuth per sample in 0.001 rad, or nil when the stroke has no azimuth channel.
    public var azimuth: [UInt16]?
    /// Altitude per sample in 0.001 rad, or nil.
    public var altitude: [UInt16]?
    /// Opacity per sample in thousandths, or nil.
    public var opacity: [UInt16]?

    /// A stroke from quantized samples and, optionally, per-sample channels, each with one value
    /// per sample (a session refuses a stroke whose channels do not, with
    /// `PageFormatError.unencodable`). `init(ink:pencilPoints:)` makes one from points.
    public init(id: UUID = UUID(), ink: Ink = Ink(), samples: [Sample],
                azimuth: [UInt16]? = nil, altitude: [UInt16]? = nil, opacity: [UInt16]? = nil) {
        self.id = id
        self.ink = ink
        self.samples = samples
        self.azimuth = azimuth
        self.altitude = altitude
        self.opacity = opacity
    }

    /// Which optional channels are present.
    public var channels: OptionalChannels {
        var c: OptionalChannels = []
        if azimuth != nil { c.insert(.azimuth) }
        if altitude != nil { c.insert(.altitude) }
        if opacity != nil { c.insert(.opacity) }
        return c
    }

    /// The channel arrays present, in format order (azimuth, altitude, opacity).
    public var optionalChannelValues: [[UInt16]] {
        [azimuth, altitude, opacity].compactMap { $0 }
    }

    /// Whether every present optional channel has exactly one value per sample.
    public var channelsAreConsistent: Bool {
        optionalChannelValues.allSatisfy { $0.count == samples.count }
    }

    /// The bounding box of the samples' centres (where the pen went), in 0.1 pt; nil when empty.
    public var centreBounds: QuantizedRect? {
        guard let first = samples.first else { return nil }
        var minX = first.x, maxX = minX, minY = first.y, maxY = minY
        for s in samples {
            minX = min(minX, s.x); maxX = max(maxX, s.x)
            minY = min(minY, s.y); maxY = max(maxY, s.y)
        }
        return QuantizedRect(clampingX: Int64(minX), y: Int64(minY), width: Int64(maxX) - Int64(minX), height: Int64(maxY) - Int64(minY))
    }

    /// The bounding box of the samples' centres widened by their radii, in 0.1 pt; nil when empty.
    public var bounds: QuantizedRect? {
        guard let first = samples.first else { return nil }
        var minX = Int64(first.x), maxX = minX, minY = Int64(first.y), maxY = minY
        var maxR: Int64 = 0
        for s in samples {
            minX = min(minX, Int64(s.x)); maxX = max(maxX, Int64(s.x))
            minY = min(minY, Int64(s.y)); maxY = max(maxY, Int64(s.y))
            maxR = max(maxR, Int64(s.radius))
        }
        return QuantizedRect(clampingX: minX - maxR, y: minY - maxR,
                             width: maxX - minX + 2 * maxR, height: maxY - minY + 2 * maxR)
    }
}
