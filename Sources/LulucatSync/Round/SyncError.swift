// Why a sync call stopped: one typed error for everything `LulucatSync` throws, with a sentence an
// app can show (`errorDescription`) and what the person can do about it (`recoverySuggestion`).

import Foundation
import LulucatStore

/// Why a sync call stopped: the one error everything in `LulucatSync` throws.
public enum SyncError: Error, Sendable, LocalizedError, CustomStringConvertible {
    /// The round would move more documents to the trash than `SyncOptions.trashLimit`; nothing
    /// was changed.
    case massDeletion(count: Int, limit: Int, documents: [UUID])
    /// The remote failed or refused a request.
    case remote(RemoteError)
    /// The library here failed: a document in use, a full disk, damage the store found.
    case store(StoreError)
    /// A file of this device's sync state (`.sync/` in the library) could not be read or written.
    case localState(FileError)
    /// End-to-end encryption stopped the round; nothing was changed here.
    case encryption(EncryptionError)
    /// Something read from the remote cannot be used (a blob whose bytes are not its name, a
    /// head or blob that does not decode); it is left out, and nothing of ours is lost.
    case damaged(object: String, reason: String)
    /// The remote's address cannot be used (not http(s) or an absolute folder, or credentials in it).
    case invalidRemote(String)
    /// A document open in this process was deleted on another device: it goes to the trash once
    /// it is closed.
    case deletedWhileOpen(UUID)
    /// A merged page names an element that no copy read this round holds (a bug or a damaged
    /// remote; the page is not written).
    case elementMissing(page: UUID, element: UUID)
    /// The round was cancelled between documents; what was done stands.
    case cancelled
    /// Another round of this library (in this app or another process) was still running after
    /// `SyncOptions.waitForOtherRound`; nothing was done.
    case anotherRoundRunning
    /// A head from the remote would make a document larger than an imported one may be
    /// (`ImportLimits`: pages and assets, the bytes of its pages as written here): it is left out
    /// for that document, checked before its blobs are fetched where the head alone tells.
    case overLimit(object: String, reason: String)
    /// The server acknowledged writes it did not keep: this device's heads, written in an earlier
    /// round, are missing from the listing or listed at another size (the paths). Their documents
    /// are published again by the next round.
    case notKept(paths: [String])

    /// The failure in a sentence, for a log.
    public var description: String {
        switch self {
        case let .massDeletion(count, limit, _):
            return "this sync would move \(count) documents to the trash (more than \(limit)); nothing was changed. "
                + "If that is what you want, run it again with a larger limit (lnote sync --trash-limit N)"
        case .remote(let e): return e.description
        case .store(let e): return e.description
        case .localState(let e): return "this library's sync state: \(e)"
        case .encryption(let e): return e.description
        case let .damaged(object, reason): return "\(object) is damaged: \(reason)"
        case .invalidRemote(let why): return why
        case .deletedWhileOpen: return "open in a session and deleted on another device; moved to the trash when it is closed"
        case let .elementMissing(page, element): return "page \(page): element \(element) is in no copy read this round"
        case .cancelled: return "the sync was cancelled"
        case .anotherRoundRunning: return "another sync of this library is running; nothing was done"
        case let .overLimit(object, reason): return "\(object) is over the limits of a document: \(reason); it is left out, nothing here changed"
        case .notKept(let paths):
            return "the server acknowledged but did not keep \(paths.count) file\(paths.count == 1 ? "" : "s") this device wrote (\(paths.prefix(3).joined(separator: ", "))\(paths.count > 3 ? ", ..." : "")); they are written again by the next sync"
        }
    }

    /// What happened, in a sentence a person reads (`localizedDescription`): the remote's, the
    /// store's or the encryption's own sentence for the errors it wraps; never a path of the
    /// remote or of the library's files.
    public var errorDescription: String? {
        switch self {
        case .massDeletion(let count, _, _): return "This sync would move \(count) notes to the trash, so nothing was changed."
        case .remote(let e): return e.errorDescription
        case .store(let e): return e.errorDescription
        case .localState(let e):
            if StoreError.notWritableLibrary(e) != nil || e.isOutOfSpace { return e.errorDescription }
            return "This device's sync records could not be read or written, so the sync stopped; your notes here are safe."
        case .encryption(let e): return e.errorDescription
        case .damaged: return "Something on the sync server is damaged, so it was left out; nothing here was lost."
        case .invalidRemote(let why): return "The sync address cannot be used: \(why)."
        case .deletedWhileOpen: return "This note was deleted on another device while it is open here."
        case .elementMissing: return "A synced page could not be put together, so it was not written; nothing here was lost."
        case .cancelled: return "The sync was cancelled."
        case .anotherRoundRunning: return "Another sync of these notes is still running, so this one did nothing."
        case .overLimit: return "A note on the sync server is larger than a note may be, so it was left out; nothing here changed."
        case .notKept(let paths):
            let files = paths.count == 1 ? "1 file" : "\(paths.count) files"
            return "The sync server acknowledged but did not keep \(files) this device wrote; the next sync writes them again."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .massDeletion: return "If those notes were deleted on purpose, sync again allowing more deletions."
        case .remote(let e): return e.recoverySuggestion
        case .store(let e): return e.recoverySuggestion
        case .localState(let e):
            if StoreError.notWritableLibrary(e) != nil { return e.recoverySuggestion }
            return e.isOutOfSpace ? "Free some space on this device, then sync again." : "Sync again; if it keeps failing, check the library folder's permissions."
        case .encryption(let e): return e.recoverySuggestion
        case .damaged: return "Sync from the device that made it; nothing here was lost."
        case .invalidRemote: return "Use an http(s) address of a WebDAV folder or an absolute folder path; give credentials separately."
        case .deletedWhileOpen: return "Close the note; it then goes to the trash, where it can be restored."
        case .elementMissing: return "Sync again; if it keeps failing, report it."
        case .cancelled: return "Sync again when you are ready: what was done stands."
        case .anotherRoundRunning: return "Sync again once the other sync has finished."
        case .overLimit: return "Nothing here was lost; reduce the note on the device that made it, then sync again."
        case .notKept: return "Check the server's free space, quota and storage; the next sync writes them again."
        }
    }
}

extension SyncError {
    /// A store call, its error as `.store`.
    static func store<T>(_ body: () throws(StoreError) -> T) throws(SyncError) -> T {
        do { return try body() } catch { throw .store(error) }
    }

    /// An async store call (a session's), its error as `.store`.
    static func store<T>(_ body: () async throws(StoreError) -> T) async throws(SyncError) -> T {
        do { return try await body() } catch { throw .store(error) }
    }

    /// A remote call, its error as `.remote`.
    static func remote<T>(_ body: () async throws(RemoteError) -> T) async throws(SyncError) -> T {
        do { return try await body() } catch { throw .remote(error) }
    }

    /// A call on this device's sync state, its error as `.localState`.
    static func state<T>(_ body: () throws(FileError) -> T) throws(SyncError) -> T {
        do { return try body() } catch { throw .localState(error) }
    }

    /// A crypto call (LulucatCrypto throws untyped), its failure as a refused object.
    static func crypto<T>(_ object: String, _ body: () throws -> T) throws(SyncError) -> T {
        do { return try body() } catch let e as SyncError { throw e } catch let e as EncryptionError { throw .encryption(e) } catch {
            throw .encryption(.refused(object: object, reason: "\(error)"))
        }
    }

    /// Whether the store said the document is open elsewhere (its lock is held).
    var isDocumentInUse: Bool {
        if case .store(.documentInUse) = self { return true }
        return false
    }
}
