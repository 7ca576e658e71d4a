// The journal fuzz check in bounded form: engine-written journals mutated a few thousand times by
// a seeded generator (the same inputs every run), each replayed as given and with its CRCs fixed.

import Foundation
import Testing
import LulucatInk
@testable import LulucatStore
import LulucatStoreTesting

@Suite struct JournalFuzzTests {
    @Test func seedsAreTheEngineWritingEveryKindOfChange() throws {
        let seeds = Dictionary(uniqueKeysWithValues: JournalFuzz.seeds())
        #expect(seeds.count == 8)
        for (name, bytes) in seeds {
            #expect(JournalFuzz.problem(bytes) == nil, "\(name)")
            // Engine-written frames already carry their CRCs; only the stale seed's base is moved.
            #expect((JournalFuzz.withChecksumsFixed(bytes) == bytes) == (name != "stale"), "\(name)")
        }
        let full = try #require(seeds["compact-snapshot-fixed16-frames"])
        let types = framesTypes(full)
        #expect(types == [1, 5, 2, 3, 4, 6, 7])
        let replay = replayed(full)
        #expect(replay.journal == .current && replay.frameCount == 7 && replay.tailToClear == nil)
        #expect(replay.content != JournalFuzz.basePage)
        let torn = replayed(try #require(seeds["torn-tail"]))
        #expect(torn.frameCount == 6 && torn.tailToClear != nil && torn.journal == .current)
        #expect(replayed(try #require(seeds["stale"])).journal == .stale)
        #expect(replayed(try #require(seeds["preallocated"])).frameCount == 7)
    }

    @Test func fixingChecksumsLetsAMutatedPayloadThrough() throws {
        let seed = JournalFuzz.seeds()[0].1
        // A byte inside the first frame's payload (a stroke's sample): the CRC fails as given.
        var bad = seed
        bad[JournalFormat.headerSize + JournalFormat.frameHeaderSize + 60] ^= 0x01
        let asGiven = replayed(bad)
        #expect(asGiven.frameCount == 0 && asGiven.journal != .current)
        let fixed = replayed(JournalFuzz.withChecksumsFixed(bad))
        #expect(fixed.frameCount > 0)
        #expect(JournalFuzz.problem(bad) == nil)
    }

    /// 1,500 mutated journals (bit flips, byte and field replacements, truncations, insertions,
    /// repeated runs), each as given and with header and frame CRCs recomputed; in three parts
    /// of 500 with their own seeds, which the test runner runs side by side.
    @Test(arguments: 0..<3) func mutatedJournalsReplayOrFailCleanly(part: Int) {
        let seeds = JournalFuzz.seeds().map(\.1)
        var mutator = ByteMutator(seed: 0x4A4F_5552_4E41_4C &+ UInt64(part))
        var framesReached = 0, framesFailed = 0
        for i in 0..<500 {
            let bytes = mutator.mutate(seeds[i % seeds.count])
            if let problem = JournalFuzz.problem(bytes) {
                Issue.record("part \(part), mutation \(i): \(problem)")
                return
            }
            let fixed = replayed(JournalFuzz.withChecksumsFixed(bytes))
            if fixed.frameCount > 0 { framesReached += 1 }
            if case .damaged(let why) = fixed.journal, why.contains("does not apply") { framesFailed += 1 }
        }
        // The fixed copies must reach the change decoders, and some must be refused there.
        #expect(framesReached > 250, "\(framesReached)")
        #expect(framesFailed > 80, "\(framesFailed)")
    }

    /// Fuzz finding (fuzz/regressions/journal/crash-e0dc...): a header claiming generation
    /// 2^64-1 made the next write trap computing generation + 1. It is now a bad header: the
    /// journal is kept aside and a new one starts at generation 1.
    @Test func theLastGenerationIsABadHeader() throws {
        let base = SnapshotIdentity(snapshot: JournalFuzz.snapshots[0])
        let last = JournalFormat.encodeHeader(JournalFormat.Header(codec: .fixed16, generation: .max, base: base))
        #expect(throws: JournalFormatError.self) { try last.withUnsafeBytes { try JournalFormat.decodeHeader($0) } }
        let before = JournalFormat.Header(codec: .fixed16, generation: .max - 1, base: base)
        #expect(try JournalFormat.encodeHeader(before).withUnsafeBytes { try JournalFormat.decodeHeader($0) } == before)
        let replay = replayed(last)
        guard case .damaged = replay.journal else { Issue.record("\(replay.journal)"); return }
        #expect(JournalFuzz.problem(last) == nil)
    }

    func replayed(_ bytes: [UInt8]) -> JournalReplay {
        let snapshot = JournalFuzz.snapshot(for: bytes)
        let (content, encoded) = try! PageFile.decodeKeepingStrokes(snapshot)
        return JournalReplay.replaying(bytes, path: "test.journal", on: content, encoded: encoded,
                                       snapshot: SnapshotIdentity(snapshot: snapshot))
    }

    func framesTypes(_ bytes: [UInt8]) -> [UInt8] {
        let header = try! bytes.withUnsafeBytes { try JournalFormat.decodeHeader($0) }
        return bytes.withUnsafeBytes { JournalScan($0, generation: header.generation).frames.map(\.type) }
    }
}
