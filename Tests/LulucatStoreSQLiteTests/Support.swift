// Test support for the SQLite engine's tests: temporary folders, as LulucatStoreTests has them
// (sample strokes and file helpers are LulucatStoreTesting's, SampleElements.swift).

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
