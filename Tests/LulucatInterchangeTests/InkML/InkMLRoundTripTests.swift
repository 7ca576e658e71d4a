// Export then import gives back exactly the quantized samples, inks and angle channels.

import Foundation
import Testing
import LulucatInk
@testable import LulucatInterchange

@Suite struct InkMLRoundTripTests {
    static func page() -> PageContent {
        var strokes: [Element] = []
        var seed: UInt64 = 42
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let inks = [Ink(), Ink(tool: .highlighter, color: RGBA8(r: 255, g: 230, b: 0, a: 128), width: 123),
                    Ink(tool: .pencil, color: RGBA8(r: 1, g: 2, b: 3), width: 7), Ink(tool: Tool(rawValue: 9), width: 0)]
        for k in 0..<12 {
            var samples: [Sample] = []
            var t: UInt32 = 0
            for _ in 0..<(1 + next(200)) {
                samples.append(Sample(x: Int32(next(200_000)) - 100_000, y: Int32(next(90_000)) - 1000,
                                      radius: UInt16(next(700)), pressure: UInt16(next(4000)), time: t))
                t += UInt32(next(20))
            }
            var s = Stroke(ink: inks[k % inks.count], samples: samples)
            if k % 3 == 0 {
                s.azimuth = samples.map { _ in UInt16(next(6284)) }
                s.altitude = samples.map { _ in UInt16(next(1572)) }
            }
            strokes.append(.stroke(s))
        }
        // Extremes of every field.
        strokes.append(.stroke(Stroke(samples: [Sample(x: .min, y: .max, radius: .max, pressure: .max, time: 0),
                                                Sample(x: .max, y: .min, radius: 0, pressure: 0, time: .max)])))
        return PageContent(elements: strokes)
    }

    @Test func samplesInksAndAnglesSurvive() throws {
        let original = Self.page()
        let xml = InkMLWriter.write(original)
        let back = try InkMLReader.read(xml)
        #expect(back.warnings.isEmpty, "\(back.warnings)")
        #expect(back.strokes.count == original.strokes.count)
        for (a, b) in zip(original.strokes, back.strokes) {
            #expect(a.samples == b.samples)
            #expect(a.ink == b.ink)
            #expect(a.azimuth == b.azimuth)
            #expect(a.altitude == b.altitude)
        }
        // Writing is deterministic.
        #expect(InkMLWriter.write(original) == xml)
    }

    @Test func writtenFileDeclaresItsFormat() throws {
        let page = PageContent(elements: [.stroke(Stroke(samples: [Sample(x: -15, y: 20, radius: 13, pressure: 500, time: 0)]))])
        let text = String(decoding: InkMLWriter.write(page), as: UTF8.self)
        #expect(text.contains("<ink xmlns=\"http://www.w3.org/2003/InkML\">"))
        #expect(text.contains("<channel name=\"X\" type=\"decimal\" units=\"pt\"/>"))
        #expect(text.contains("<channel name=\"T\" type=\"integer\" units=\"ms\"/>"))
        #expect(text.contains("<trace contextRef=\"#ctx0\" brushRef=\"#br0\">-1.5 2 0 0.5 2.6</trace>"))
        #expect(text.contains("<brushProperty name=\"color\" value=\"#000000\"/>"))
        // Images have no InkML form: an empty page still makes a valid file.
        let empty = try InkMLReader.read(InkMLWriter.write(PageContent()))
        #expect(empty.strokes.isEmpty)
    }

    @Test func decimalFormatting() {
        #expect(InkMLWriter.decimal(0, places: 1) == "0")
        #expect(InkMLWriter.decimal(-5, places: 1) == "-0.5")
        #expect(InkMLWriter.decimal(1230, places: 3) == "1.23")
        #expect(InkMLWriter.decimal(7, places: 3) == "0.007")
        #expect(InkMLWriter.decimal(Int64(Int32.min), places: 1) == "-214748364.8")
    }
}
