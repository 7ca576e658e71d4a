// The InkML fuzz check in bounded form: written and hand-made InkML (and the small shared files,
// when present) mutated a few thousand times by a seeded generator, the same inputs every run.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
@testable import LulucatInterchange
import LulucatStoreTesting
import LulucatInterchangeTesting

@Suite struct InkMLFuzzTests {
    @Test func seedsImportAndRoundTrip() throws {
        let seeds = InkMLFuzz.seeds(extraFolder: SharedInk.folder?.path, maxBytes: 16 << 10)
        #expect(seeds.count >= 5)
        for (name, bytes) in seeds {
            #expect(InkMLFuzz.problem(bytes) == nil, "\(name)")
        }
        // The hand-made file reaches groups, continuations, views, tilts and the value prefixes.
        let features = try InkMLReader.read(Data(InkMLFuzz.features.utf8))
        // Six strokes: the pen-up trace is skipped, the continuation joins its trace, the view of a
        // stream trace draws nothing more.
        #expect(features.strokes.count == 6, "\(features.strokes.count) \(features.warnings)")
        #expect(features.strokes.map(\.samples.count) == [5, 4, 4, 2, 2, 2])
        #expect(features.strokes.contains { $0.azimuth != nil && $0.altitude != nil })
        #expect(features.strokes.contains { $0.ink.tool == .highlighter })
    }

    /// A stroke with only one of the angle channels loses it on the way out (the writer writes
    /// angles in pairs): the check expects exactly that, so it must find a changed pair.
    @Test func theCheckFindsALostChannel() throws {
        let oneAngle = """
            <ink><traceFormat><channel name="X" units="pt"/><channel name="Y" units="pt"/><channel name="OA" units="rad"/></traceFormat>
            <trace>1 2 0.5, 3 4 0.6</trace></ink>
            """
        let doc = try InkMLReader.read(Data(oneAngle.utf8))
        #expect(doc.strokes[0].azimuth == [500, 600] && doc.strokes[0].altitude == nil)
        #expect(InkMLFuzz.problem(Array(oneAngle.utf8)) == nil)
    }

    /// 3,000 mutated files: bit flips, byte replacements (with `<`, `>`, `/`, `.`, digits' bits),
    /// truncations, insertions, repeated runs, and InkML tokens inserted and digits changed.
    @Test func mutatedFilesImportOrFailCleanly() {
        let seeds = InkMLFuzz.seeds(extraFolder: SharedInk.folder?.path, maxBytes: 8 << 10).map(\.1)
        var mutator = ByteMutator(seed: 0x494E_4B4D_4C)
        var imported = 0
        for i in 0..<3000 {
            let bytes = mutator.mutate(seeds[i % seeds.count], tokens: Self.tokens)
            if let problem = InkMLFuzz.problem(bytes) {
                Issue.record("mutation \(i): \(problem)")
                return
            }
            if (try? InkMLReader.read(Data(bytes))) != nil { imported += 1 }
        }
        // Many mutations leave a file that still imports (a changed digit), so the round trip is
        // exercised, not only the refusals.
        #expect(imported > 300, "\(imported)")
    }

    /// 2,000 files with their values mutated rather than their bytes: NaN, infinities, huge and
    /// tiny numbers in traces and attributes, brush and channel properties with such values, ink
    /// sources with sample rates and canvas transforms, and the file re-encoded (UTF-16/UTF-32
    /// with and without a byte order mark, other declared encodings). Issue 18 §1's crashes are
    /// of these kinds.
    @Test func valueMutatedFilesImportOrFailCleanly() {
        let seeds = InkMLFuzz.seeds(extraFolder: SharedInk.folder?.path, maxBytes: 8 << 10).map(\.1)
        var mutator = InkMLValueMutator(seed: 0x5641_4C55_45)
        var imported = 0, refusedEncoding = 0
        for i in 0..<2000 {
            let bytes = mutator.mutate(seeds[i % seeds.count])
            if let problem = InkMLFuzz.problem(bytes) {
                Issue.record("value mutation \(i): \(problem)")
                return
            }
            do { _ = try InkMLReader.read(Data(bytes)); imported += 1 } catch {
                if error.kind == .unsupported { refusedEncoding += 1 }
            }
        }
        #expect(imported > 500, "\(imported)")
        #expect(refusedEncoding > 50, "\(refusedEncoding)")
    }

    /// What `fuzz/inkml.dict` gives libFuzzer, for the seeded mutations.
    static let tokens: [[UInt8]] = [
        "<trace>", "</trace>", "<traceGroup>", "</traceGroup>", " contextRef=\"#ctx1\"", " brushRef=\"#br0\"",
        "<channel name=\"OA\"/>", "<channel name=\"T\" units=\"s\"/>", " units=\"in\"", " min=\"0\"", " max=\"1e308\"",
        " '", " \"", " !", " *", " ?", " T", " F", " #FF", "1e308", "-1e308", "4294967295", ",", " ", "-", ".",
        " continuation=\"end\" priorRef=\"#t\"", " xml:id=\"t\"", " type=\"penUp\"", " orientation=\"-ve\"",
    ].map { Array($0.utf8) }
}
