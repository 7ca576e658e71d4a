// Every input the fuzzers found (fuzz/regressions/<target>/) replayed through the same checks as
// fuzz/FuzzTargets.swift: decoding may fail, but never crash, and what decodes must round-trip.
// (InkML and zip findings: Tests/LulucatInterchangeTests/FuzzRegressionTests.swift.)

import Foundation
import LulucatInk
import Testing
@testable import LulucatStore
import LulucatStoreTesting

@Suite("Fuzz findings")
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/regressions")

    static func inputs(_ target: String) -> [(String, [UInt8])] {
        let dir = root.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().compactMap { name in
            (try? Data(contentsOf: dir.appendingPathComponent(name))).map { (name, [UInt8]($0)) }
        }
    }

    @Test("document.json findings round-trip or fail cleanly")
    func documents() throws {
        let inputs = Self.inputs("document")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            guard let doc = try? PackageJSON.decodeDocument(bytes, path: name) else { continue }
            let back = try PackageJSON.decodeDocument(PackageJSON.encode(doc), path: name)
            #expect(back == doc, "\(name)")
        }
    }

    @Test("manifest findings round-trip or fail cleanly")
    func manifests() throws {
        for (name, bytes) in Self.inputs("manifest") {
            guard let m = try? PackageJSON.decodeManifest(bytes, path: name) else { continue }
            #expect(try PackageJSON.decodeManifest(PackageJSON.encode(m), path: name) == m, "\(name)")
        }
    }

    @Test("page findings round-trip or fail cleanly")
    func pages() throws {
        for (name, bytes) in Self.inputs("page") {
            guard let content = try? PageFile.decode(bytes) else { continue }
            let codec = try bytes.withUnsafeBytes { try PageFile.readHeader($0) }.codec
            #expect(try PageFile.decode(PageFile.encode(content, codec: codec)) == content, "\(name)")
        }
    }

    @Test("journal findings replay or fail cleanly, and the page saved after them replays")
    func journals() {
        for (name, bytes) in Self.inputs("journal") {
            #expect(JournalFuzz.problem(bytes) == nil, "\(name)")
        }
    }

    @Test("times with more than millisecond precision are kept to the millisecond, exactly")
    func subMillisecondTimes() throws {
        for s in ["2026-09-21T14:13:20.124444444444444444444444444443Z", "2026-09-21T14:13:20.1239Z",
                  "2026-09-21T14:13:20.999999Z", "1969-12-31T23:59:59.9995Z", "2026-09-21T14:13:20.123+02:00",
                  "6334-09-21T14:13:20.123Z", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00.001Z"] {
            let d = try #require(ISO8601.date(s))
            #expect(ISO8601.date(ISO8601.string(d)) == d, "\(s) -> \(ISO8601.string(d)) \(d.timeIntervalSince1970)")
        }
        #expect(ISO8601.string(ISO8601.date("2026-09-21T14:13:20.1249Z")!) == "2026-09-21T14:13:20.124Z")
    }
}
