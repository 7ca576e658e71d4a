// The bounded form of `lnote-dev hostile`: a fixed seed's inputs of every kind, each imported into a
// fresh library; every one refused clearly or imported whole, nothing outside changed.

import Foundation
import Testing
import LulucatInk
import LulucatStore
import LulucatInterchange
import LulucatInterchangeTesting

@Suite struct HostileRunTests {
    @Test func aSeededHostileRunHasNoFailures() async throws {
        let base = NSTemporaryDirectory() + "lnote-hostile-test-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let outside = base + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try #require(FileManager.default.createFile(atPath: outside + "/bystander.txt", contents: Data("untouched".utf8)))
        var kinds = Set<HostileRun.Kind>()
        var accepted = 0, refused = 0
        for i in 0..<96 {
            let input = HostileRun.input(seed: 18, index: i)
            kinds.insert(input.kind)
            let outcome = await HostileRun.check(input, folder: base, outside: outside)
            #expect(outcome.problem == nil, "input \(i) (\(input.kind.rawValue): \(input.how)): \(outcome.problem ?? "")")
            if outcome.accepted { accepted += 1 } else { refused += 1 }
        }
        #expect(kinds == Set(HostileRun.Kind.allCases))
        // Both verdicts occur: the mutations neither all break the input nor all miss.
        #expect(accepted > 5 && refused > 5, "\(accepted) imported, \(refused) refused")
    }

    /// The same seed and index give the same bytes (a failure of a long run is reproducible).
    @Test func inputsAreReproducible() {
        for i in [0, 7, 1234] {
            #expect(HostileRun.input(seed: 5, index: i).bytes == HostileRun.input(seed: 5, index: i).bytes)
        }
        #expect(HostileRun.input(seed: 5, index: 3).bytes != HostileRun.input(seed: 6, index: 3).bytes)
    }
}
