// A client crash during a sync round, at every point the crash model allows (docs/crash-model.md):
// the check itself is `SyncCrashCheck` (LulucatSyncTesting), which `lnote-dev crashcheck` runs too.

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing

private let crashAll = ProcessInfo.processInfo.environment["LULUCAT_SYNC_CRASH_ALL"] == "1"

@Suite(.serialized) struct SyncCrashTests {
    /// A crash anywhere in a round that merges a document (applying, saving pages, base, uploads)
    /// is finished by the next rounds: nothing lost, converged, verify clean. The bounded form
    /// checks one state per crash point on the snapshot engine; LULUCAT_SYNC_CRASH_ALL=1 checks
    /// every state on the snapshot and journal engines (about ten minutes here).
    @Test(arguments: crashAll ? [EngineKind.snapshot, .journal] : [.snapshot])
    func aCrashAnywhereInTheApplyStepIsFinishedByTheNextRound(engine: EngineKind) async throws {
        let r = try await SyncCrashCheck.run(engine: engine, everyState: crashAll)
        #expect(r.documentsMerged == 1, "\(r)")
        #expect(r.path == "session", "\(r.path)")
        #expect(r.operations > 10, "the round wrote \(r.operations) operations")
        #expect(r.distinctStates > 20 && r.statesChecked > 10, "\(r)")
        #expect(r.failures.isEmpty, "\(r.failures.count) crash states not recovered:\n\(r.failures.joined(separator: "\n"))")
    }

    /// The same when only A changed: its round reads the document under its lock alone (no
    /// session) and writes its base, page states included, in one synced file before the head.
    @Test(arguments: crashAll ? [EngineKind.snapshot, .journal] : [.snapshot])
    func aCrashAnywhereInARoundThatOnlyPushesIsFinishedByTheNextRound(engine: EngineKind) async throws {
        let r = try await SyncCrashCheck.run(engine: engine, othersPublish: false, everyState: crashAll)
        #expect(r.documentsPushed == 1 && r.documentsMerged == 0 && r.pagesPushed == 1, "\(r)")
        #expect(r.path == "underLock", "\(r.path)")
        #expect(r.operations > 10, "the round wrote \(r.operations) operations")
        #expect(r.distinctStates > 20 && r.statesChecked > 10, "\(r)")
        #expect(r.failures.isEmpty, "\(r.failures.count) crash states not recovered:\n\(r.failures.joined(separator: "\n"))")
    }
}
