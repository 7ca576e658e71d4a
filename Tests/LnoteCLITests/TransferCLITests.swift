// The binary's export, import, render, thumbnails and repair commands on real fixtures.

import Foundation
import Testing

/// ../shared/data/ink beside the repository (a worktree sits one level deeper).
func sharedInk() -> String? {
    var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    for _ in 0..<5 {
        dir = dir.deletingLastPathComponent()
        let candidate = dir.appendingPathComponent("shared/data/ink").path
        if FileManager.default.fileExists(atPath: candidate) { return candidate }
    }
    return nil
}

@Suite struct TransferCLITests {
    @Test(.enabled(if: sharedInk() != nil, "needs ../shared/data/ink beside the repository"))
    func inkMLImportExportZipRoundTripRenderAndRepair() async throws {
        let ink = try #require(sharedInk())
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let imported = try await lnote(["import", ink + "/wacom_uim/ink.inkml", "--library", lib, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as! [String: Any]
        #expect(obj["strokes"] as? Int == 4)
        #expect(obj["samples"] as? Int == 868)
        #expect((obj["page_bytes"] as? Int ?? 0) > 100)
        let id = obj["id"] as! String

        // InkML out and back in: the same samples.
        let inkml = tmp.path + "/page.inkml"
        #expect(try await lnote(["export", id, "--page", "1", "-o", inkml, "--library", lib]).status == 0)
        let back = try await lnote(["import", inkml, "--library", lib, "--json"])
        let backObj = try JSONSerialization.jsonObject(with: Data(back.stdout.utf8)) as! [String: Any]
        #expect(backObj["samples"] as? Int == 868)

        // One-file export and import: a second copy under a new id.
        let zip = tmp.path + "/doc.zip"
        #expect(try await lnote(["export", id, "-o", zip, "--library", lib]).status == 0)
        let other = tmp.path + "/other"
        let z = try await lnote(["import", zip, "--library", other, "--json"])
        #expect(z.status == 0, "\(z.stderr)")
        #expect(try await lnote(["verify", "--library", other]).status == 0)

        // A truncated archive is refused, names the problem, and leaves nothing.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: zip))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: tmp.path + "/cut.zip"))
        let cut = try await lnote(["import", tmp.path + "/cut.zip", "--library", tmp.path + "/third"])
        #expect(cut.status == 1)
        #expect(!cut.stderr.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: tmp.path + "/third")) ?? []).allSatisfy { !$0.hasSuffix(".lnote") })

        // Render: PNG and SVG files a person can open.
        let png = tmp.path + "/page.png"
        #expect(try await lnote(["render", id, "--page", "1", "-o", png, "--scale", "1", "--library", lib]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: png)).prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let svg = tmp.path + "/page.svg"
        #expect(try await lnote(["render", id, "--page", "1", "--format", "svg", "-o", svg, "--library", lib]).status == 0)
        #expect(try String(contentsOfFile: svg, encoding: .utf8).contains("<svg"))
        #expect(try await lnote(["render", id, "--page", "9", "-o", png, "--library", lib]).status == 64)
        #expect(try await lnote(["render", id, "--format", "gif", "-o", png, "--library", lib]).status == 64)

        // Thumbnails and repair.
        #expect(try await lnote(["thumbnails", id, "--rebuild", "--library", lib]).status == 0)
        let repair = try await lnote(["repair", id, "--library", lib, "--json"])
        #expect(repair.status == 0, "\(repair.stderr)")
    }
}
