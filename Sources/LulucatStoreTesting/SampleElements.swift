// Sample elements and pages (and small file helpers) for the store's tests (LulucatStoreTests, LulucatStoreSQLiteTests): the
// same strokes, images and unknown elements wherever a test needs a page with every kind of element.

import Foundation
import LulucatInk
import LulucatStore

/// Deterministic strokes: a smooth wave whose values depend on `seed`.
public func makeStroke(_ seed: Int, samples: Int = 40, channels: OptionalChannels = []) -> Stroke {
    let s = (0..<samples).map { i in
        Sample(x: Int32(seed * 100 + i * 7), y: Int32(2000 + (i * i + seed) % 300), radius: UInt16(10 + (i + seed) % 5),
               pressure: UInt16(400 + (i * 13 + seed) % 500), time: UInt32(i * 4))
    }
    func channel(_ k: Int) -> [UInt16] { (0..<samples).map { UInt16((($0 + 1) * k + seed) % 1500) } }
    return Stroke(ink: Ink(tool: Tool(rawValue: UInt8(seed % 5)), color: RGBA8(r: UInt8(seed % 256), g: 0x80, b: 0xFF, a: 0xC0),
                           width: UInt16(15 + seed)),
                  samples: s,
                  azimuth: channels.contains(.azimuth) ? channel(3) : nil,
                  altitude: channels.contains(.altitude) ? channel(5) : nil,
                  opacity: channels.contains(.opacity) ? channel(7) : nil)
}

public func makeImage(_ seed: Int) -> ImageElement {
    ImageElement(assetID: UUID(), frame: QuantizedRect(x: Int32(seed), y: -5, width: 300, height: 200), rotation: -4500)
}

public func makeUnknown(kind: UInt8) -> UnknownElement {
    let id = UUID()
    var payload = Data(withUnsafeBytes(of: id.uuid) { Array($0) })
    payload.append(contentsOf: [1, 2, 3, 0xFE])
    return try! UnknownElement(kind: kind, payload: payload)
}

public func samplePage() -> PageContent {
    PageContent(canvasSize: .a4, elements: [
        .stroke(makeStroke(1)),
        .image(makeImage(2)),
        .stroke(makeStroke(3, channels: [.azimuth, .altitude])),
        .unknown(makeUnknown(kind: 9)),
        .stroke(makeStroke(5, samples: 0)),
        .stroke(makeStroke(6, channels: .all)),
        .stroke(makeStroke(7, samples: 1, channels: [.opacity])),
    ])
}

/// Every file name directly in a package folder.
public func packageFiles(_ package: DocumentPackage) -> Set<String> {
    Set((try? FileManager.default.contentsOfDirectory(atPath: package.path)) ?? [])
}

/// A file's size in bytes, or nil when it is not there.
public func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
}

/// A 50-sample pen stroke (by default) whose x values shift with `seed`: the plain stroke most
/// store tests append.
public func sampleStroke(_ n: Int = 50, seed: Int = 0, tool: Tool = .pen) -> Stroke {
    let samples = (0..<n).map { i in
        Sample(x: Int32(1000 + i * 7 + seed), y: Int32(2000 + (i * i) % 97), radius: UInt16(10 + i % 3),
               pressure: UInt16(400 + i % 50), time: UInt32(i * 4))
    }
    return Stroke(ink: Ink(tool: tool, color: RGBA8(r: 10, g: 20, b: 30), width: 20), samples: samples)
}

/// A file's bytes, or nil when it cannot be read.
public func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
