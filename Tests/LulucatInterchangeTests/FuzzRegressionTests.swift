// Every input the InkML and zip fuzzers found (fuzz/regressions/inkml/, fuzz/regressions/zip/)
// replayed through the same checks as `fuzz/run.sh`: refused cleanly or round-tripped.

import Foundation
import Testing
@testable import LulucatInterchange
import LulucatInterchangeTesting

@Suite("Interchange fuzz findings")
struct InterchangeFuzzRegressionTests {
    static func inputs(_ target: String) -> [(String, [UInt8])] {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fuzz/regressions/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().compactMap { name in
            (try? Data(contentsOf: dir.appendingPathComponent(name))).map { (name, [UInt8]($0)) }
        }
    }

    @Test func inkmlFindings() {
        for (name, bytes) in Self.inputs("inkml") {
            #expect(InkMLFuzz.problem(bytes) == nil, "\(name)")
        }
    }

    @Test func zipFindings() {
        for (name, bytes) in Self.inputs("zip") {
            #expect(ZipFuzz.problem(bytes) == nil, "\(name)")
        }
    }
}
