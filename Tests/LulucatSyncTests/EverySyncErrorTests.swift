// Every case of every public error of LulucatSync and LulucatCrypto, as an app shows it: a
// sentence without ids, paths of the remote or internal files, and a recovery suggestion
// (`userFacingProblems`). A new case stops the build at a switch of `name(_:)` until it is named
// there, and fails the test until a value of it is listed.

import Foundation
import LulucatCrypto
import LulucatStore
import LulucatStoreTesting
import Testing
@testable import LulucatSync

enum EverySyncError {
    static let remoteErrors: [RemoteError] = [
        .notFound("heads/abc"), .ambiguous("blobs/ab/abc", "PUT answered 502"), .failed("heads", "PROPFIND answered 400"),
        .invalidResponse("heads", "PROPFIND reply is not a multistatus"),
        .timedOut("heads", .silent(seconds: 30)), .timedOut("blobs/ab", .tooSlow(bytes: 12, seconds: 15, minimumRate: 1024)),
        .timedOut("heads/abc", .requestDeadline(seconds: 120)), .timedOut("the sync round", .roundDeadline(seconds: 120)),
    ] + refusals.map { .refused("heads/abc", $0) }

    static func name(_ e: RemoteError) -> String {
        switch e {
        case .notFound: "notFound"
        case .ambiguous: "ambiguous"
        case .failed: "failed"
        case .invalidResponse: "invalidResponse"
        case .timedOut: "timedOut"
        case .refused: "refused"
        }
    }
    static let remoteCaseCount = 6

    static let refusals: [RemoteRefusal] = [
        .noCredentials, .wrongCredentials, .forbidden, .missingFolder("https://dav.example.org/notes/"), .storageFull,
        .serverError(500), .unreachable("no server answers at 127.0.0.1:9 (the connection was refused)"),
        .notAFolder("/Volumes/Sync/notes/heads"),
    ]

    static func name(_ r: RemoteRefusal) -> String {
        switch r {
        case .noCredentials: "noCredentials"
        case .wrongCredentials: "wrongCredentials"
        case .forbidden: "forbidden"
        case .missingFolder: "missingFolder"
        case .storageFull: "storageFull"
        case .serverError: "serverError"
        case .unreachable: "unreachable"
        case .notAFolder: "notAFolder"
        }
    }
    static let refusalCaseCount = 8

    static let encryptionErrors: [EncryptionError] = [
        .notSetUp(".sync/library.key is missing"), .wrongPassphrase, .settingsMissing, .settingsReplaced("another salt"),
        .remoteNotEncrypted, .remoteEncrypted, .anotherKeyHere, .weakPassphrase(RemoteEncryption.weakness(of: "abc")!),
        .refused(object: "heads/0A1B2C3D-0000-4000-8000-000000000001.head", reason: "tampered"),
        .replayedHead(object: "heads/abc", counter: 3, highest: 5),
    ]

    static func name(_ e: EncryptionError) -> String {
        switch e {
        case .notSetUp: "notSetUp"
        case .wrongPassphrase: "wrongPassphrase"
        case .settingsMissing: "settingsMissing"
        case .settingsReplaced: "settingsReplaced"
        case .remoteNotEncrypted: "remoteNotEncrypted"
        case .remoteEncrypted: "remoteEncrypted"
        case .anotherKeyHere: "anotherKeyHere"
        case .weakPassphrase: "weakPassphrase"
        case .refused: "refused"
        case .replayedHead: "replayedHead"
        }
    }
    static let encryptionCaseCount = 10

    static let cryptoErrors: [CryptoError] = [
        .backend(function: "EVP_EncryptInit_ex", detail: "error:0308010C"), .invalidArgument("nonce of 11 bytes"),
        .authenticationFailed, .notAnEncryptedObject, .truncated(expected: 40, found: 3),
        .unsupportedVersion(found: 9, supported: 1), .malformed("reserved bits set"), .wrongKind(expected: .blob, found: 2),
        .wrongKey, .wrongDocument, .wrongName, .tampered, .notKeySettings, .wrongPassphrase,
        .weakKeySettings(iterations: 10, floor: 100_000),
    ]

    static func name(_ e: CryptoError) -> String {
        switch e {
        case .backend: "backend"
        case .invalidArgument: "invalidArgument"
        case .authenticationFailed: "authenticationFailed"
        case .notAnEncryptedObject: "notAnEncryptedObject"
        case .truncated: "truncated"
        case .unsupportedVersion: "unsupportedVersion"
        case .malformed: "malformed"
        case .wrongKind: "wrongKind"
        case .wrongKey: "wrongKey"
        case .wrongDocument: "wrongDocument"
        case .wrongName: "wrongName"
        case .tampered: "tampered"
        case .notKeySettings: "notKeySettings"
        case .wrongPassphrase: "wrongPassphrase"
        case .weakKeySettings: "weakKeySettings"
        }
    }
    static let cryptoCaseCount = 15

    static let page = UUID(uuidString: "0A1B2C3D-0000-4000-8000-000000000001")!
    static var syncErrors: [SyncError] {
        let library = "/home/u/Notes"
        return [
            .massDeletion(count: 9, limit: 5, documents: [UUID()]),
            .store(.documentInUse(path: "\(library)/\(UUID().uuidString).lnote")),
            .store(.file(FileError("open", path: "\(library)/\(UUID().uuidString).lnote/.lock", errno: EROFS))),
            .localState(FileError("write", path: "\(library)/.sync/\(temporaryFilePrefix)\(UUID().uuidString)-index.json", errno: ENOSPC)),
            .localState(FileError("write", path: "\(library)/.sync/remote.json", errno: EROFS)),
            .localState(FileError("read", path: "\(library)/.sync/remote.json", errno: EIO)),
            .damaged(object: "blobs/ab/ab12", reason: "its SHA-256 is not its name"),
            .invalidRemote("'ftp://x' is neither an http(s) WebDAV URL nor an absolute folder path"),
            .deletedWhileOpen(UUID()),
            .elementMissing(page: page, element: UUID()),
            .cancelled,
            .anotherRoundRunning,
            .overLimit(object: "heads/\(page.uuidString).\(UUID().uuidString).head", reason: "it names 60,001 pages and assets, more than 60,000"),
            .notKept(paths: ["heads/\(page.uuidString).\(UUID().uuidString).head"]),
        ] + remoteErrors.map { .remote($0) } + encryptionErrors.map { .encryption($0) }
    }

    static func name(_ e: SyncError) -> String {
        switch e {
        case .massDeletion: "massDeletion"
        case .remote: "remote"
        case .store: "store"
        case .localState: "localState"
        case .encryption: "encryption"
        case .damaged: "damaged"
        case .invalidRemote: "invalidRemote"
        case .deletedWhileOpen: "deletedWhileOpen"
        case .elementMissing: "elementMissing"
        case .cancelled: "cancelled"
        case .anotherRoundRunning: "anotherRoundRunning"
        case .overLimit: "overLimit"
        case .notKept: "notKept"
        }
    }
    static let syncCaseCount = 13
}

@Suite struct EverySyncErrorTests {
    private func check(_ e: any LocalizedError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(userFacingProblems(e) == [], "\(e)", sourceLocation: sourceLocation)
        // Nothing of the remote's layout reaches the person.
        let text = e.errorDescription ?? ""
        for layout in ["heads/", "blobs/", ".head", ".sync"] {
            #expect(!text.contains(layout), "\(text) names \(layout)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyCaseIsASentenceWithARecovery() {
        #expect(Set(EverySyncError.remoteErrors.map(EverySyncError.name)).count == EverySyncError.remoteCaseCount)
        #expect(Set(EverySyncError.refusals.map(EverySyncError.name)).count == EverySyncError.refusalCaseCount)
        #expect(Set(EverySyncError.encryptionErrors.map(EverySyncError.name)).count == EverySyncError.encryptionCaseCount)
        #expect(Set(EverySyncError.cryptoErrors.map(EverySyncError.name)).count == EverySyncError.cryptoCaseCount)
        #expect(Set(EverySyncError.syncErrors.map(EverySyncError.name)).count == EverySyncError.syncCaseCount)
        for e in EverySyncError.remoteErrors { check(e) }
        for r in EverySyncError.refusals { check(r) }
        for e in EverySyncError.encryptionErrors { check(e) }
        for e in EverySyncError.cryptoErrors { check(e) }
        for e in EverySyncError.syncErrors { check(e) }
    }

    /// A wrapped error reads as its own sentence; a library whose sync records cannot be written
    /// says the library cannot be written.
    @Test func wrappedErrorsKeepTheirOwnWords() {
        for e in EverySyncError.remoteErrors {
            #expect(SyncError.remote(e).localizedDescription == e.localizedDescription)
            #expect(SyncError.remote(e).recoverySuggestion == e.recoverySuggestion)
        }
        for e in EverySyncError.encryptionErrors { #expect(SyncError.encryption(e).localizedDescription == e.localizedDescription) }
        let readOnly = SyncError.localState(FileError("write", path: "/home/u/Notes/.sync/remote.json", errno: EROFS))
        #expect(readOnly.localizedDescription == "The library Notes cannot be written: it is on a read-only file system.")
        #expect(!SyncError.remote(.ambiguous("heads/x", "PUT answered 502")).localizedDescription.contains("heads"))
    }
}
