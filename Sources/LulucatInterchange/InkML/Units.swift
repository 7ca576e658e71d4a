// InkML unit names and their factors to the units our samples use (points, ms, radians).

import Foundation

/// Unit conversions for channel values. Length units are the InkML standard length units (m, cm,
/// mm, in, pt, pc) plus px at 96 per inch (CSS) and himetric (0.01 mm, Windows ink).
enum InkMLUnits {
    /// Points per unit of length.
    static func pointsPer(_ unit: String) -> Double? {
        switch unit {
        case "pt": return 1
        case "pc": return 12
        case "in": return 72
        case "mm": return 72 / 25.4
        case "cm": return 720 / 25.4
        case "m": return 72_000 / 25.4
        case "px": return 0.75
        case "himetric": return 72 / 2540
        default: return nil
        }
    }

    /// Milliseconds per unit of time.
    static func millisecondsPer(_ unit: String) -> Double? {
        switch unit {
        case "ms": return 1
        case "s": return 1000
        case "us", "µs": return 0.001
        default: return nil
        }
    }

    /// Radians per unit of angle.
    static func radiansPer(_ unit: String) -> Double? {
        switch unit {
        case "rad": return 1
        case "deg": return Double.pi / 180
        default: return nil
        }
    }
}
