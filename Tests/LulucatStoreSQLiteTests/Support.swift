// Test support for the SQLite engine's tests: temporary folders and sample strokes, as
// LulucatStoreTests has them (each test target keeps its own small support file).

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatStoreSQLite

/// A fresh temporary folder, removed when the value is released. The SQLite engine is enabled
/// for every library the tests make (the suites enable it in their init too).
final class TemporaryFolder: @unchecked Sendable {
    let path: String
    init() {
        Library.enableSQLiteEngine()
        path = NSTemporaryDirectory() + "lnote-sqlite-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func sampleStroke(_ n: Int = 50, seed: Int = 0, tool: Tool = .pen) -> Stroke {
    let samples = (0..<n).map { i in
        Sample(x: Int32(1000 + i * 7 + seed), y: Int32(2000 + (i * i) % 97), radius: UInt16(10 + i % 3),
               pressure: UInt16(400 + i % 50), time: UInt32(i * 4))
    }
    return Stroke(ink: Ink(tool: tool, color: RGBA8(r: 10, g: 20, b: 30), width: 20), samples: samples)
}

func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
