// The worked example of docs/page-format.md: a page with one 3-sample stroke and one image.

import Foundation
@testable import LulucatInk

enum PageFileExample {
    static let strokeID = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let imageID = UUID(uuidString: "10000000-0000-4000-8000-000000000001")!
    static let assetID = UUID(uuidString: "20000000-0000-4000-8000-000000000002")!

    static let page = PageContent(canvasSize: .letter, elements: [
        .stroke(Stroke(id: strokeID, ink: Ink(tool: .pen, color: .black, width: 20), samples: [
            Sample(x: 1000, y: 2000, radius: 10, pressure: 500, time: 0),
            Sample(x: 1003, y: 2001, radius: 10, pressure: 520, time: 4),
            Sample(x: 1007, y: 2003, radius: 10, pressure: 530, time: 8),
        ])),
        .image(ImageElement(id: imageID, assetID: assetID, frame: QuantizedRect(x: 100, y: 200, width: 3000, height: 2000))),
    ])
}
