// Every public error of LulucatSync and LulucatCrypto is a LocalizedError: an app's
// `localizedDescription` is a sentence in plain words (never Foundation's generic "could not be
// completed", never a type name), with a recovery suggestion. And a folder remote where a file is in
// the place of a folder is refused as such (`RemoteRefusal.notAFolder`): nothing was written, so it
// is not "may or may not have happened".

import Foundation
import LulucatCrypto
import LulucatStore
import LulucatSyncTestSupport
import LulucatSyncTesting
import Testing
@testable import LulucatSync

/// Checks what an app shows of `error`: its `errorDescription` is its `localizedDescription`, a
/// sentence (a capital, a period) without type names; and a recovery suggestion.
private func expectReadable(_ error: any LocalizedError, sourceLocation: SourceLocation = #_sourceLocation) {
    let text = (error as any Error).localizedDescription
    #expect(text == error.errorDescription, "\(error)", sourceLocation: sourceLocation)
    #expect(!text.isEmpty && text.hasSuffix(".") && text.first!.isUppercase, "\(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("could not be completed"), "\(text)", sourceLocation: sourceLocation)
    for word in ["Error(", "Error.", "Error ", "errno", "PBKDF2", "ChaCha", "magic", "answered", "heads/", "blobs/"] {
        #expect(!text.contains(word), "\(text) contains \(word)", sourceLocation: sourceLocation)
    }
    let s = error.recoverySuggestion
    #expect(s.map { !$0.isEmpty && $0.hasSuffix(".") } == true, "\(error): \(s ?? "no suggestion")", sourceLocation: sourceLocation)
}

/// The error a remote call ended in, or nil.
private func failure(_ call: () async throws(RemoteError) -> Void) async -> RemoteError? {
    do { try await call() } catch { return error }
    return nil
}

@Suite struct SyncLocalizedErrorsTests {
    @Test func remoteErrors() {
        let all: [RemoteError] = [
            .notFound("heads/abc"), .ambiguous("blobs/ab/abc", "PUT answered 502"), .failed("heads", "PROPFIND answered 400"),
            .invalidResponse("heads", "PROPFIND reply is not a multistatus"),
            .timedOut("heads", .silent(seconds: 30)), .timedOut("blobs/ab", .tooSlow(bytes: 12, seconds: 15, minimumRate: 1024)),
            .timedOut("heads/abc", .requestDeadline(seconds: 120)), .timedOut("the sync round", .roundDeadline(seconds: 120)),
            .refused("heads", .noCredentials), .refused("heads", .wrongCredentials), .refused("heads/abc", .forbidden),
            .refused("heads", .missingFolder("https://dav.example.org/notes/")), .refused("blobs/abc", .storageFull),
            .refused("heads", .serverError(500)), .refused("heads", .unreachable("no server answers at 127.0.0.1:9 (the connection was refused)")),
            .refused("heads/abc", .notAFolder("/Volumes/Sync/notes/heads")),
        ]
        for e in all { expectReadable(e) }
        // The reason in words, in the sentence a person reads.
        #expect(RemoteError.timedOut("heads", .silent(seconds: 30)).localizedDescription.contains("The sync server sent nothing for 30 s"))
        #expect(RemoteError.timedOut("b", .tooSlow(bytes: 12, seconds: 15, minimumRate: 1024)).localizedDescription
            .contains("replied too slowly (12 bytes in 15 s)"))
        #expect(RemoteError.timedOut("b", .tooSlow(bytes: 12, seconds: 15, minimumRate: 1024)).description
            == "b: the server answered too slowly (12 bytes in 15 s, below the minimum of 1024 bytes a second)")
        #expect(RemoteError.timedOut("r", .roundDeadline(seconds: 2.5)).description == "r: the sync round took more than its deadline of 2.5 s")
        #expect(RemoteError.failed("x", "y").localizedDescription.contains("nothing was changed"))
    }

    @Test func encryptionErrors() {
        let all: [EncryptionError] = [
            .notSetUp(".sync/library.key is missing"), .wrongPassphrase, .settingsMissing, .settingsReplaced("another salt"),
            .remoteNotEncrypted, .remoteEncrypted, .anotherKeyHere,
            .weakPassphrase(RemoteEncryption.weakness(of: "abc")!), .refused(object: "heads/abc", reason: "tampered"),
            .replayedHead(object: "heads/abc", counter: 3, highest: 5),
        ]
        for e in all { expectReadable(e) }
        #expect(EncryptionError.weakPassphrase(RemoteEncryption.weakness(of: "abc")!).localizedDescription.contains("3 characters"))
    }

    @Test func cryptoErrors() {
        let all: [CryptoError] = [
            .backend(function: "EVP_EncryptInit_ex", detail: "error:0308010C"), .invalidArgument("nonce of 11 bytes"),
            .authenticationFailed, .notAnEncryptedObject, .truncated(expected: 40, found: 3),
            .unsupportedVersion(found: 9, supported: 1), .malformed("reserved bits set"), .wrongKind(expected: .blob, found: 2),
            .wrongKey, .wrongDocument, .wrongName, .tampered, .notKeySettings, .wrongPassphrase,
            .weakKeySettings(iterations: 10, floor: 100_000),
        ]
        for e in all { expectReadable(e) }
    }

    /// A file where the remote needs a folder: every write under it is refused naming it as a file
    /// (nothing can have been written), not a write that may or may not have happened.
    @Test func aFileWhereAFolderGoesIsRefusedNamingIt() async throws {
        let root = temporaryFolder("file-not-folder")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/heads", contents: Data("not a folder".utf8)))
        let remote = FolderRemote(root: root)
        let put = await failure { () async throws(RemoteError) in try await remote.put("heads/abc", [1, 2, 3]) }
        let made = await failure { () async throws(RemoteError) in try await remote.makeFolder("heads") }
        let below = await failure { () async throws(RemoteError) in try await remote.makeFolder("heads/sub") }
        let deleted = await failure { () async throws(RemoteError) in try await remote.delete("heads/abc") }
        for e in [put, made, below, deleted] {
            guard case .refused(_, let why)? = e else { Issue.record("\(String(describing: e)) is not a refusal"); continue }
            #expect(why == .notAFolder(root + "/heads"), "\(why)")
            #expect(e!.localizedDescription == "The sync folder cannot be used: \(root)/heads is a file, not a folder, so nothing was written there.")
            #expect(!e!.localizedDescription.contains("may or may not") && !e!.description.contains("may or may not"))
            #expect(e!.recoverySuggestion?.contains("Move or rename that file") == true)
        }
        // A sync round through it fails plainly, as a refusal (not "may or may not have happened").
        let lib = Library(root: temporaryFolder("file-not-folder-lib"))
        defer { try? FileManager.default.removeItem(atPath: lib.root) }
        _ = try await lib.createDocument(title: "Blocked")
        await #expect { try await lib.sync(with: remote, options: testSyncOptions) } throws: { e in
            guard case .remote(.refused(_, .notAFolder(let file))) = e as? SyncError else { return false }
            return file.hasSuffix("/heads") && e.localizedDescription.contains("is a file, not a folder")
        }
        // The remote's root itself a file.
        let fileRoot = root + "/heads"
        let underFile = await failure { () async throws(RemoteError) in try await FolderRemote(root: fileRoot).put("abc", [1]) }
        guard case .refused(_, let why)? = underFile else { Issue.record("\(String(describing: underFile))"); return }
        #expect(why == .notAFolder(fileRoot))
        // Listing it, making a folder in it, or making it with its parents: the same refusal,
        // never "not found" or "does not exist".
        let listed = await failure { () async throws(RemoteError) in _ = try await remote.list("heads") }
        #expect(listed == .refused("heads", .notAFolder(fileRoot)), "\(String(describing: listed))")
        let madeUnder = await failure { () async throws(RemoteError) in try await FolderRemote(root: fileRoot).makeFolder("heads") }
        #expect(madeUnder == .refused("heads", .notAFolder(fileRoot)), "\(String(describing: madeUnder))")
        let created = await failure { () async throws(RemoteError) in try FolderRemote(root: fileRoot + "/notes").createRoot() }
        #expect(created == .refused(fileRoot + "/notes", .notAFolder(fileRoot)), "\(String(describing: created))")
        for e in [listed, madeUnder, created] {
            #expect(e?.localizedDescription.contains("\(fileRoot) is a file, not a folder") == true, "\(String(describing: e))")
        }
        // The file is untouched.
        #expect(FileManager.default.contents(atPath: root + "/heads") == Data("not a folder".utf8))
    }

    /// The same on a WebDAV server (Apache mod_dav): a PUT or MKCOL under a file is refused (400),
    /// said plainly (naming the file), and not taken for a write that may have happened.
    @Test(.enabled(if: ApacheServer.isAvailable, noApache))
    func aFileWhereAFolderGoesOnWebDAVIsAFailure() async throws {
        let server = try ApacheServer()
        defer { server.stop() }
        let remote = try WebDAVRemote(url: server.url, credentials: nil, timeout: 120)
        try await remote.put("heads", Array("not a folder".utf8))
        let put = await failure { () async throws(RemoteError) in try await remote.put("heads/abc", [1, 2, 3]) }
        let below = await failure { () async throws(RemoteError) in try await remote.makeFolder("heads/sub") }
        for e in [put, below] {
            guard case .refused(_, .notAFolder(let file))? = e else { Issue.record("\(String(describing: e)) is not a refusal"); continue }
            #expect(file.hasSuffix("/heads"), "\(file)")
        }
        #expect(try await remote.get("heads", maxBytes: 100).bytes == Array("not a folder".utf8))
    }
}
