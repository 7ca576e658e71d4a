// A folder remote that is not there (an unmounted drive, a typo) fails the round and is never
// created by it: syncing into an empty folder where the drive should be would look like success.

import Foundation
import LulucatStore
import LulucatSyncTesting
import Testing
@testable import LulucatSync

@Suite struct MissingFolderTests {
    @Test func aMissingFolderRemoteFailsTheRoundAndIsNotCreated() async throws {
        let scope = temporaryFolder("missing")
        let lib = Library(root: temporaryFolder("missing-lib"))
        defer { for p in [scope, lib.root] { try? FileManager.default.removeItem(atPath: p) } }
        _ = try await lib.createDocument(title: "Nowhere to go")
        let root = scope + "/Volumes/USB/Notes"
        await #expect { try await lib.sync(with: FolderRemote(root: root), options: testSyncOptions) } throws: { e in
            guard case .remote(.failed(_, let why)) = e as? SyncError else { return false }
            return why.contains("does not exist")
        }
        #expect(!FileManager.default.fileExists(atPath: scope + "/Volumes"), "nothing was created")
        // Made on purpose (lnote remote add FOLDER --create), it syncs.
        try FolderRemote(root: root).createRoot()
        let r = try await lib.sync(with: FolderRemote(root: root), options: testSyncOptions)
        #expect(r.documentsPushed == 1, "\(r)")
        // A root that is a symbolic link to a folder (a synced folder kept elsewhere) is followed.
        let link = scope + "/Notes link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root)
        _ = try await lib.createDocument(title: "Through the link")
        let viaLink = try await lib.sync(with: FolderRemote(root: link), options: testSyncOptions)
        #expect(viaLink.documentsPushed == 1 && viaLink.skipped.isEmpty, "\(viaLink)")
    }
}
