// The checked quantizers: round to nearest within half a quantum, and refuse NaN, infinities and
// values out of range with an error that names the value.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct QuantizeCheckedTests {
    @Test func roundToNearestWithinHalfAQuantum() throws {
        var rng = SeededRandom(seed: 9)
        for _ in 0..<10_000 {
            let p = rng.uniform(-50_000...50_000)
            #expect(abs(Quantize.points(try Quantize.coordinate(p)) - p) <= 0.05 + 1e-9)
            let o = rng.uniform(0...1)
            #expect(abs(Quantize.opacity(try Quantize.opacity(o)) - o) <= 0.0005 + 1e-12)
            let alt = rng.uniform(0...(Double.pi / 2))
            #expect(abs(Quantize.radians(try Quantize.altitude(alt)) - alt) <= 0.0005 + 1e-12)
            let az = rng.uniform(-20...20)
            let back = Quantize.radians(try Quantize.azimuth(az))
            var d = abs(back - az).truncatingRemainder(dividingBy: 2 * .pi)
            d = min(d, 2 * .pi - d)
            #expect(d <= 0.0005 + 1e-9 || abs(back - 6.283) < 1e-12)
            let deg = rng.uniform(-1000...1000)
            let r = try Quantize.rotation(degrees: deg)
            #expect((0..<36000).contains(r))
            var e = abs(Quantize.degrees(r) - deg).truncatingRemainder(dividingBy: 360)
            e = min(e, 360 - e)
            #expect(e <= 0.005 + 1e-9)
        }
    }

    @Test func exactValues() throws {
        #expect(try Quantize.point(x: 12.34, y: -0.05) == (123, -1))
        #expect(try Quantize.rect(x: 1, y: 2, width: 3.25, height: 4) == QuantizedRect(x: 10, y: 20, width: 33, height: 40))
        #expect(try Quantize.size(width: 612, height: 792) == .letter)
        #expect(try Quantize.radius(1.25) == 13)
        #expect(try Quantize.force(2.0625) == 2063)
        #expect(try Quantize.opacity(1.2) == 1200)
        #expect(try Quantize.azimuth(-Double.pi / 2) == 4712)
        #expect(try Quantize.azimuth(2 * .pi - 1e-9) == 6283)
        #expect(try Quantize.altitude(.pi / 2) == 1571)
        #expect(try Quantize.rotation(degrees: -90) == 27000)
        #expect(try Quantize.rotation(degrees: 720.004) == 0)
        #expect(try Quantize.rotation(radians: .pi) == 18000)
        #expect(try Quantize.timeOffset(0.0125) == 13)
    }

    @Test func notANumberInfinityAndOutOfRangeAreRefused() {
        let bad: [(String, () throws -> Any)] = [
            ("x", { try Quantize.point(x: .nan, y: 0) }),
            ("y", { try Quantize.point(x: 0, y: .infinity) }),
            ("coordinate", { try Quantize.coordinate(3e8) }),
            ("width", { try Quantize.size(width: -1, height: 1) }),
            ("height", { try Quantize.rect(x: 0, y: 0, width: 1, height: .nan) }),
            ("radius", { try Quantize.radius(6553.6) }),
            ("radius", { try Quantize.radius(-0.1) }),
            ("force", { try Quantize.force(-.infinity) }),
            ("opacity", { try Quantize.opacity(-0.01) }),
            ("azimuth", { try Quantize.azimuth(.nan) }),
            ("altitude", { try Quantize.altitude(1.6) }),
            ("altitude", { try Quantize.altitude(-0.001) }),
            ("rotation", { try Quantize.rotation(degrees: .infinity) }),
            ("rotation", { try Quantize.rotation(radians: .nan) }),
            ("time offset", { try Quantize.timeOffset(-1) }),
            ("time offset", { try Quantize.timeOffset(5e6) }),
        ]
        for (what, f) in bad {
            do {
                _ = try f()
                Issue.record("\(what) was accepted")
            } catch let error as QuantizeError {
                #expect(error.what == what)
                #expect(error.description.hasPrefix("\(what) "))
                #expect(error.description.contains("cannot be stored"))
            } catch {
                Issue.record("\(what): \(error)")
            }
        }
    }
}
