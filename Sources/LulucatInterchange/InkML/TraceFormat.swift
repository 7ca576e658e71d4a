// A trace format: the channels of each point, in order, with their units and ranges.

import Foundation

/// One channel of a trace format, as `<channel>` declares it, with the `resolution` its ink
/// source may give.
struct ChannelSpec: Sendable {
    enum ValueType: String, Sendable { case integer, decimal, double, boolean }

    var name: String
    var type: ValueType = .decimal
    var units: String?
    var min: Double?
    var max: Double?
    /// `orientation="-ve"`: the channel grows against the canvas axis.
    var negative = false
    /// The value of an intermittent channel a point leaves out.
    var defaultValue: Double?
    var intermittent = false
    /// `<channelProperty name="resolution">`: counts per `resolutionUnits`.
    var resolution: Double?
    var resolutionUnits: String?
    /// `respectTo` of a T channel: the timestamp its values count from.
    var respectTo: String?
}

/// The channels of a trace format: regular ones, present in every point, then intermittent
/// ones, which a point may leave out at its end.
struct TraceFormat: Sendable {
    var channels: [ChannelSpec]

    var regularCount: Int { channels.lazy.filter { !$0.intermittent }.count }

    /// The default trace format of the InkML recommendation: X and Y, decimal.
    static let `default` = TraceFormat(channels: [ChannelSpec(name: "X"), ChannelSpec(name: "Y")])

    func index(of name: String) -> Int? { channels.firstIndex { $0.name == name } }
}

/// How a channel's raw values become ours: value * factor, after subtracting `offset`.
struct ChannelScale {
    var factor: Double
    var offset: Double = 0
    func apply(_ raw: Double) -> Double { (raw - offset) * factor }
}

extension ChannelSpec {
    /// The factor to our unit for a channel of this dimension, honouring `resolution` on every
    /// numeric type: a channel with a resolution counts 1/resolution of the resolution's unit
    /// (Windows ink writes X as integer himetric counts with `units="cm"` and a resolution of
    /// 1000 per cm; double and decimal channels with a resolution are counts just the same).
    /// - Returns: nil when the units are missing or not of this dimension.
    func factor(to perUnit: (String) -> Double?) -> Double? {
        if let r = resolution, r > 0, r.isFinite {
            let unit = resolutionUnits.flatMap { $0.hasPrefix("1/") ? String($0.dropFirst(2)) : nil } ?? units
            if let unit, let f = perUnit(unit) { return f / r }
        }
        return units.flatMap(perUnit)
    }
}
