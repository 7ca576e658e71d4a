// The JSON form of docs/json-form.md: its exact bytes, round trips of every element kind (real and
// awkward strokes), and bad input refused with a clear error.

import Foundation
import Testing
@testable import LulucatInk
import LulucatHandwriting

@Suite struct ModelJSONTests {
    static let strokeID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
    static let imageID = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
    static let assetID = UUID(uuidString: "00000000-0000-0000-0000-0000000000AA")!

    static let stroke = Stroke(id: strokeID, ink: Ink(tool: .pencil, color: RGBA8(r: 1, g: 2, b: 3), width: 20),
                               samples: [Sample(x: -5, y: 10, radius: 12, pressure: 500, time: 0),
                                         Sample(x: 7, y: 11, radius: 13, pressure: 1000, time: 8)],
                               azimuth: [100, 200], opacity: [1000, 900])
    static let strokeJSON = #"{"azimuth":[100,200],"id":"00000000-0000-0000-0000-000000000001","ink":{"color":[1,2,3,255],"tool":"pencil","width":20},"opacity":[1000,900],"samples":[[-5,10,12,500,0],[7,11,13,1000,8]]}"#

    static func page() throws -> PageContent {
        let unknown = try UnknownElement(kind: 9, payload: Data(Array(0..<16) + [0xFF, 0xFF, 0xFE]))
        return PageContent(canvasSize: .letter, elements: [
            .stroke(stroke),
            .image(ImageElement(id: imageID, assetID: assetID, frame: QuantizedRect(x: 1, y: -2, width: 300, height: 400), rotation: 1500)),
            .unknown(unknown),
        ])
    }
    static let pageJSON = #"{"canvas":[6120,7920],"elements":[{"stroke":"# + strokeJSON + #"},"#
        + #"{"image":{"asset":"00000000-0000-0000-0000-0000000000AA","frame":[1,-2,300,400],"id":"00000000-0000-0000-0000-000000000002","rotation":1500}},"#
        + #"{"unknown":{"kind":9,"payload":"AAECAwQFBgcICQoLDA0OD////g=="}}]}"#

    @Test func theDocumentedBytes() throws {
        #expect(String(decoding: try InkJSON.encode(Self.stroke), as: UTF8.self) == Self.strokeJSON)
        #expect(String(decoding: try InkJSON.encode(try Self.page()), as: UTF8.self) == Self.pageJSON)
        #expect(String(decoding: try InkJSON.encode(Tool(rawValue: 42)), as: UTF8.self) == #""tool42""#)
        #expect(try InkJSON.decode(PageContent.self, from: Data(Self.pageJSON.utf8)) == (try Self.page()))
        #expect(try InkJSON.decode(PageContent.self, from: Data(Self.pageJSON.utf8)).elements[2].id
                == UUID(uuidString: "00010203-0405-0607-0809-0A0B0C0D0E0F"))
    }

    @Test func realAndAwkwardStrokesRoundTrip() throws {
        var strokes = TestInk.awkwardStrokes()
        strokes += HandwritingGenerator(seed: 5).page(strokes: 30).strokes
        if let real = try? TestInk.realStrokes() { strokes += real.prefix(200) }
        let page = PageContent(canvasSize: .a4, elements: strokes.map { .stroke($0) })
        let data = try InkJSON.encode(page)
        #expect(try InkJSON.decode(PageContent.self, from: data) == page)
        // A plain JSONEncoder (keys in any order, pretty) reads back the same.
        let pretty = JSONEncoder()
        pretty.outputFormatting = .prettyPrinted
        #expect(try JSONDecoder().decode(PageContent.self, from: pretty.encode(page)) == page)
    }

    @Test func extraKeysAreIgnored() throws {
        let json = #"{"canvas":[1,2],"elements":[],"future":{"x":1}}"#
        #expect(try InkJSON.decode(PageContent.self, from: Data(json.utf8)) == PageContent(canvasSize: QuantizedSize(width: 1, height: 2)))
    }

    func refusal<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try InkJSON.decode(type, from: Data(json.utf8))
            return nil
        } catch let DecodingError.dataCorrupted(context) {
            return context.debugDescription
        } catch {
            return "\(error)"
        }
    }

    @Test func badInputIsRefusedAndSaysWhy() throws {
        let id = "00000000-0000-0000-0000-000000000001"
        let ink = #""ink":{"color":[0,0,0,255],"tool":"pen","width":20}"#
        let oneSample = #""samples":[[1,2,3,4,5]]"#
        #expect(refusal(Stroke.self, #"{"id":"\#(id)",\#(ink),\#(oneSample),"azimuth":[1,2]}"#)?.contains("differs from its 1 samples") == true)
        #expect(refusal(Stroke.self, #"{"id":"\#(id)",\#(ink),"samples":[[1,2,3,4,5,6]]}"#)?.contains("more than 5") == true)
        #expect(refusal(Stroke.self, #"{"id":"\#(id)",\#(ink),"samples":[[1,2,3,4]]}"#) != nil)
        #expect(refusal(Stroke.self, #"{"id":"\#(id)",\#(ink),"samples":[[1,2,70000,4,5]]}"#) != nil)  // radius beyond UInt16
        #expect(refusal(Stroke.self, #"{"id":"nope",\#(ink),\#(oneSample)}"#) != nil)
        #expect(refusal(Tool.self, #""crayon""#)?.contains("unknown tool name 'crayon'") == true)
        #expect(refusal(RGBA8.self, "[1,2,3]")?.contains("3 numbers, not 4") == true)
        #expect(refusal(Element.self, #"{}"#)?.contains("exactly one of the keys") == true)
        #expect(refusal(Element.self, #"{"stroke":{"id":"\#(id)",\#(ink),\#(oneSample)},"image":{}}"#)?.contains("exactly one") == true)
        #expect(refusal(UnknownElement.self, #"{"kind":3,"payload":"AAEC"}"#)?.contains("shorter than its 16-byte id") == true)
        #expect(refusal(UnknownElement.self, #"{"kind":3,"payload":"**"}"#)?.contains("not base64") == true)
        let stroke = #"{"stroke":{"id":"\#(id)",\#(ink),\#(oneSample)}}"#
        #expect(refusal(PageContent.self, #"{"canvas":[1,1],"elements":[\#(stroke),\#(stroke)]}"#)?.contains("share an id") == true)
        #expect(refusal(PageContent.self, #"{"canvas":[1,1],"elements":[\#(stroke)]}"#) == nil)
    }
}
