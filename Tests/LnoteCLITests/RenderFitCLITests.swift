// `lnote render` never refuses a page for its size: it draws at the largest scale that fits the
// pixel limits and says which scale it used.

import Foundation
import Testing

@Suite struct RenderFitCLITests {
    @Test func aPageTooLargeForTheScaleIsDrawnSmallerAndSaysSo() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-fit-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lib = dir + "/lib"
        let created = try await lnote(["new", "Poster", "--library", lib, "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try await lnote(["page", "add", id, "--size", "14400x14400", "--library", lib]).status == 0)

        // 14,400 pt at scale 4 is 57,600 px a side: over the limit, so it is fitted.
        let big = try await lnote(["render", id, "--page", "2", "--scale", "4", "-o", dir + "/big.png", "--library", lib, "--json"])
        #expect(big.status == 0, "\(big.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(big.stdout.utf8)) as? [String: Any])
        #expect(object["fitted"] as? Bool == true)
        let used = try #require(object["scale"] as? Double)
        #expect(used > 0 && used < 4 && used * 14400 <= 16384, "\(used)")
        #expect(big.stderr.contains("drawn at scale"), "\(big.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/big.png"))

        // A page that fits is drawn at the scale asked for, without a word about fitting.
        let small = try await lnote(["render", id, "--page", "1", "--scale", "1", "-o", dir + "/small.png", "--library", lib, "--json"])
        #expect(small.status == 0, "\(small.stderr)")
        let o2 = try #require(try JSONSerialization.jsonObject(with: Data(small.stdout.utf8)) as? [String: Any])
        #expect(o2["fitted"] as? Bool == false && o2["scale"] as? Double == 1)
        #expect(!small.stderr.contains("drawn at scale"))
        #expect(try await lnote(["render", id, "--scale", "0", "-o", dir + "/zero.png", "--library", lib]).status == 64)
    }
}
