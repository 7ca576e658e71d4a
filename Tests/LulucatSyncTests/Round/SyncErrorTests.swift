// What an app shows of a SyncError: every case has a sentence (`errorDescription`, through
// `localizedDescription` too) and something the person can do.

import Foundation
import LulucatStore
import Testing
@testable import LulucatSync

@Suite struct SyncErrorTests {
    static let all: [SyncError] = [
        .massDeletion(count: 9, limit: 5, documents: [UUID()]),
        .remote(.ambiguous("heads/x", "connection lost")),
        .remote(.failed("heads", "401")),
        .remote(.timedOut("heads", .silent(seconds: 30))),
        .remote(.timedOut("the sync round", .roundDeadline(seconds: 120))),
        .store(.documentInUse(path: "/lib/A.lnote")),
        .localState(FileError("write", path: "/lib/.sync/index.json", errno: ENOSPC)),
        .encryption(.wrongPassphrase),
        .encryption(.settingsMissing),
        .damaged(object: "blob ab12", reason: "its SHA-256 is not its name"),
        .invalidRemote("'ftp://x' is neither an http(s) WebDAV URL nor an absolute folder path"),
        .deletedWhileOpen(UUID()),
        .elementMissing(page: UUID(), element: UUID()),
        .cancelled,
        .anotherRoundRunning,
        .overLimit(object: "head A.B.head", reason: "it names 60,001 pages and assets, more than 60,000"),
        .notKept(paths: ["heads/A.B.head"]),
    ]

    @Test(arguments: all)
    func everyErrorSaysWhatHappenedAndWhatToDo(_ error: SyncError) {
        let sentence = error.errorDescription ?? ""
        #expect(sentence.count > 10 && sentence.hasSuffix("."), "\(sentence)")
        #expect(error.localizedDescription == sentence)
        #expect(!error.description.isEmpty)
        #expect((error.recoverySuggestion ?? "").count > 10, "\(error)")
    }

    @Test func theRecoveryFollowsTheCause() {
        #expect(SyncError.localState(FileError("write", path: "/x", errno: ENOSPC)).recoverySuggestion?.contains("Free some space") == true)
        #expect(SyncError.remote(.ambiguous("p", "m")).recoverySuggestion?.contains("Sync again") == true)
        #expect(SyncError.encryption(.wrongPassphrase).recoverySuggestion?.contains("passphrase") == true)
        #expect(SyncError.store(.documentInUse(path: "/a")).errorDescription == StoreError.documentInUse(path: "/a").errorDescription)
    }
}
