// `lnote-dev bench codec` run as a user would: the built binary, its JSON, its exit codes.

import Foundation
import Testing

@Suite struct BenchCodecCLITests {
    /// The `lnote-dev` binary SwiftPM built next to this test bundle.
    static func lnote() throws -> URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("lnote-dev")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "lnote-dev next to \(CommandLine.arguments[0])"])
    }

    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: Data, stderr: Data) {
        let r = try await runProgram(try lnote(), arguments)
        return (r.status, Data(r.stdout.utf8), Data(r.stderr.utf8))
    }

    @Test func jsonHasTheFiguresForAnInkFolder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let lines = (0..<3).map { s in
            "{\"t0_ms\": \(s * 500), \"points\": [" + (0..<40).map { i in
                "[\(100 + Double(i) * 0.7 + Double(s)), \(200 + Double(i * i) * 0.01), \(i * 16), \(0.3 + Double(i) / 200)]"
            }.joined(separator: ",") + "]}"
        }
        try lines.joined(separator: "\n").write(to: folder.appendingPathComponent("a.jsonl"), atomically: true, encoding: .utf8)

        let (status, stdout, stderr) = try await Self.run(["bench", "codec", "--json", "--rounds", "1", "--ink", folder.path])
        #expect(status == 0, "\(String(decoding: stderr, as: UTF8.self))")
        let objects = try #require(try JSONSerialization.jsonObject(with: stdout) as? [[String: Any]])
        #expect(objects.count == 1)
        let o = objects[0]
        #expect(o["name"] as? String == folder.lastPathComponent)
        #expect(o["samples"] as? Int == 120)
        #expect(o["strokes"] as? Int == 3)
        for key in ["compact_bytes_per_sample", "file_bytes_per_sample", "fixed16_bytes_per_sample",
                    "compact_decode_samples_per_s", "compact_encode_samples_per_s", "fixed16_decode_vs_memcpy",
                    "stroke_overhead_bytes"] {
            let value = try #require(o[key] as? Double, "\(key)")
            #expect(value > 0, "\(key)")
        }
        // fixed16 is 16 bytes a sample plus each stroke's count byte.
        #expect(abs((o["fixed16_bytes_per_sample"] as? Double ?? 0) - (16 + 3.0 / 120)) < 1e-9)
        #expect((o["compact_bytes_per_sample"] as? Double ?? 99) < 4)
    }

    @Test func badUsageExits64AndMissingInkExits1() async throws {
        await #expect(try Self.run(["bench"]).status == 64)
        await #expect(try Self.run(["bench", "nope"]).status == 64)
        await #expect(try Self.run(["bench", "codec", "--rounds", "0"]).status == 64)
        let missing = try await Self.run(["bench", "codec", "--ink", "/nonexistent-lnote-ink"])
        #expect(missing.status == 1)
        #expect(String(decoding: missing.stderr, as: UTF8.self).contains("no *.jsonl files"))
    }
}
