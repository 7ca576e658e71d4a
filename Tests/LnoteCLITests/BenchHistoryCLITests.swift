// `lnote-dev bench history` (issue 35) is registered, refuses bad arguments, and its bounded form
// prints the figures history promises: every published page state restorable byte for byte on
// every device, a restore that converges, remote bytes with history within 1.5 times those
// without (the old versions' own page blobs aside), an idle round of 1 request and a listing of
// none. It runs through the local Apache when apache2-bin is installed, else through a folder (it
// says which). Its timings come from a release build only, so none is checked here.

import Foundation
import Testing

@Suite struct BenchHistoryCLITests {
    @Test func usageErrors() async throws {
        let unknown = try await lnoteDev(["bench", "history", "--nope"])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown option --nope"), "\(unknown.stderr)")
        let zero = try await lnoteDev(["bench", "history", "--rounds", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--rounds must be in 1..."), "\(zero.stderr)")
        let only = try await lnoteDev(["bench", "history", "--only", "everything"])
        #expect(only.status == 64 && only.stderr.contains("--only takes states, bytes or time"), "\(only.stderr)")
        let seed = try await lnoteDev(["bench", "history", "--seed", "-1"])
        #expect(seed.status == 64 && seed.stderr.contains("--seed takes a whole number"), "\(seed.stderr)")
        let help = try await lnoteDev(["bench"])
        #expect(help.status == 64 && help.stderr.contains("history"))
    }

    @Test("the bounded form: every published state restorable, a restore converged, bytes within 1.5, idle round 1 request, listing none")
    func boundedForm() async throws {
        let r = try await lnoteDev(["bench", "history", "--rounds", "20", "--edits", "30", "--pages", "20", "--pairs", "2", "--seed", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        let out = r.stdout
        #expect(out.contains("remote: Apache mod_dav on 127.0.0.1:") || out.contains("remote: a folder"), "\(out)")
        #expect(out.contains("states: 20 randomized rounds of 3 devices (seed 5)"), "\(out)")
        // "restorable byte for byte: X of Y (Z %)": all of them, and some.
        let restorable = try #require(Self.numbers(after: "restorable byte for byte: ", in: out), "\(out)")
        #expect(restorable.count >= 2 && restorable[0] == restorable[1] && restorable[1] > 0, "\(out)")
        #expect(out.contains("(100.0 %)"), "\(out)")
        #expect(out.contains("converged yes") && !out.contains("converged NO"), "\(out)")
        let ratio = try #require(Self.numbers(after: "ratio (with - old-version page blobs) / without = ", in: out)?.first, "\(out)")
        #expect(ratio > 0 && ratio <= 1.5, "\(out)")
        // Old versions are kept as page blobs of their own, and none is missing.
        #expect(out.contains(", 0 missing), "), "\(out)")
        #expect(!out.contains("blobs of 0 versions"), "\(out)")
        #expect(out.contains("requests: idle round 1, 1, 1; "), "\(out)")
        #expect(out.contains(") 0 (0 beyond a round)"), "\(out)")
        #expect(out.contains("reading one version's content 1"), "\(out)")
        #expect(out.contains("time: a one-page round of a 20-page notebook"), "\(out)")
    }

    /// The numbers (digits and dots) at the start of the text after `label`, split at anything else.
    static func numbers(after label: String, in text: String) -> [Double]? {
        guard let range = text.range(of: label) else { return nil }
        let line = text[range.upperBound...].prefix { $0 != "\n" }
        var out: [Double] = []
        var current = ""
        for c in line {
            if c.isNumber || (c == "." && !current.isEmpty) { current.append(c); continue }
            if let v = Double(current) { out.append(v) }
            current = ""
            if out.count >= 3 { break }
        }
        if let v = Double(current) { out.append(v) }
        return out.isEmpty ? nil : out
    }
}
