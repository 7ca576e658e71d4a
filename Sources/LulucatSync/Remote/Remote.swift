// Where sync state lives: five calls, small enough that S3 can be added (docs/sync.md §9).

import Foundation

/// One name in a remote folder, as the server listed it (untrusted: validate before use).
public struct RemoteEntry: Sendable, Equatable {
    /// The entry's name in its folder, as listed. A round uses only names of 1 to 128 characters
    /// of `A-Z a-z 0-9 . _ -` not starting with a dot, and ignores every other.
    public var name: String
    /// Compared without a `W/` prefix; nil when the server gave none.
    public var etag: String?
    /// Its size in bytes, when the server gave one.
    public var size: Int?
    /// Whether it is a folder.
    public var isFolder: Bool

    /// An entry, as a remote's `list` makes them.
    public init(name: String, etag: String?, size: Int?, isFolder: Bool = false) {
        self.name = name
        self.etag = etag
        self.size = size
        self.isFolder = isFolder
    }
}

/// What a remote call can end in. A write that may or may not have happened is `ambiguous`;
/// nothing is concluded from it, and the round that made it is repeated.
public enum RemoteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file or folder (the path) is not on the remote.
    case notFound(String)
    /// The write may have happened (a dropped connection, a lost reply, a 5xx after the body).
    case ambiguous(String, String)
    /// The request certainly did not change anything (refused before it was sent, a 4xx).
    case failed(String, String)
    /// The reply could not be used (too large, unparsable, a redirect, cut short).
    case invalidResponse(String, String)
    /// A read ended by a limit: the server was silent, too slow, or the request or the round
    /// passed its deadline (`SyncOptions.transfer`, `SyncOptions.roundDeadline`). A write that
    /// meets one may or may not have happened: it is `ambiguous`, with the same words.
    case timedOut(String, RemoteTimeout)
    /// The server refused the request, or could not be reached, for a cause it names (no or
    /// wrong credentials, its own rules, a missing folder, no storage left, its own error on a
    /// read): nothing was changed there (docs/sync.md §7).
    case refused(String, RemoteRefusal)

    /// The failure in a sentence for a log (or `lnote`), naming the path; an app shows
    /// `localizedDescription` instead.
    public var description: String {
        switch self {
        case .notFound(let p): return "\(p): not found on the remote"
        case .refused(let p, let r): return p.isEmpty ? "\(r)" : "\(p): \(r)"
        case .ambiguous(let p, let m): return "\(p): the write may or may not have happened (\(m)); the next sync repeats it"
        case .failed(let p, let m): return "\(p): \(m)"
        case .invalidResponse(let p, let m): return "\(p): unusable reply (\(m))"
        case .timedOut(let p, let t): return "\(p): \(t)"
        }
    }
}

/// Why a server refused a request, or could not be reached: the cause a person can act on,
/// in `RemoteError.refused` (docs/sync.md §7 gives the sentences). Nothing was changed there.
public enum RemoteRefusal: Sendable, Equatable, CustomStringConvertible {
    /// 401, and no credentials were given.
    case noCredentials
    /// 401 to the credentials given: the user name or password is wrong.
    case wrongCredentials
    /// 403: the server's own rules forbid the request (the credentials, if any, were accepted).
    case forbidden
    /// The remote's folder (its URL or path here) does not exist on the server (a 404 or 409 on it
    /// or under it).
    case missingFolder(String)
    /// 507 Insufficient Storage: the server has no room left (a full disk or a quota).
    case storageFull
    /// An error of the server's own (5xx, its status here) on a request that changes nothing.
    case serverError(Int)
    /// No answer could be had at all (no server at the address, an unknown host, no network), in words.
    case unreachable(String)
    /// A file is where the remote needs a folder (the remote's folder itself, or `heads`, `blobs`
    /// or a folder under them): nothing can have been written under it. The file's path or URL.
    case notAFolder(String)

    /// The cause in words, with the status the server gave.
    public var description: String {
        switch self {
        case .noCredentials:
            return "the server asks for a user name and password and none were given (401): "
                + "set LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc entry for the host"
        case .wrongCredentials:
            return "the server refused the user name or password (401): check LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD "
                + "(or the netrc entry)"
        case .forbidden:
            return "the server forbids this request by its own rules (403 Forbidden; the credentials are not the cause): "
                + "the folder's permissions on the server must allow it"
        case .missingFolder(let f): return "the folder \(f) does not exist on the server"
        case .storageFull: return "the server is out of storage (507 Insufficient Storage): nothing was stored"
        case .serverError(let s): return "the server failed with an error of its own (\(s))"
        case .unreachable(let why): return why
        case .notAFolder(let f): return "\(f) is a file, not a folder: nothing can be written under it"
        }
    }
}

/// Where a library's sync state lives: a folder holding `heads/` and `blobs/`, reached by five
/// calls (docs/sync.md §9).
///
/// The library ships three: ``FolderRemote`` (a folder on this device), ``WebDAVRemote`` and
/// ``S3Remote``; ``SyncConfiguration/makeRemote(environment:netrc:)`` makes the right one from a
/// URL or a path. An app may conform a type of its own to sync through another store. Sync asks
/// no more of it than this: a `put` replaces a file whole or leaves it as it was, and a `get`
/// after a successful `put` returns those bytes or a later `put`'s. No compare-and-swap, no
/// locking, no listing consistency is needed.
///
/// Paths are relative, `/`-separated, and built only from names of 1 to 128 characters of
/// `A-Z a-z 0-9 . _ -` that do not start with a dot. Everything a remote returns is untrusted:
/// a round checks each name, size and hash itself.
///
/// A remote is `Sendable`: a round calls it from several tasks at once.
public protocol Remote: Sendable {
    /// The entries of one folder (one level); `notFound` when it does not exist. A remote that
    /// reads a reply reads at most 64 MiB of it.
    func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry]
    /// The entries of one folder, reading at most `maxBytes` of the server's reply (a larger one
    /// is `invalidResponse`, refused as it streams, before it is parsed). Defaults to `list(_:)`,
    /// which is bounded at 64 MiB; a remote that reads a reply implements it.
    func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry]
    /// A file's bytes and its ETag when the server gave one; `notFound` when it does not exist;
    /// `invalidResponse` when larger than `maxBytes`, refused before more than `maxBytes` is held.
    func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?)
    /// Replaces a file whole.
    func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError)
    /// Writes a file that is never replaced once it is there (a content-addressed blob: whoever
    /// writes its name writes the same content), so that no upload, cut or concurrent, can damage
    /// a copy that is already whole. A file already there under the name is success. Defaults to
    /// `put` (for a remote whose `put` replaces a file whole or not at all).
    func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError)
    /// Removes a file; a file already gone is success.
    func delete(_ path: String) async throws(RemoteError)
    /// Creates a folder; one that exists is success.
    func makeFolder(_ path: String) async throws(RemoteError)
    /// Requests made and bytes sent so far (for `lnote sync` and the bench).
    var statistics: RemoteStatistics { get }
    /// A stable name of where this remote keeps its files (a URL, a folder path), or "" when it has
    /// none. Sync records which remote it last saw holding no encryption settings, and sends a
    /// changed document's blobs before the listing answers only to that one (never, in clear, to
    /// a remote it does not know yet). Defaults to "".
    var identity: String { get }
    /// How many blob transfers a round keeps under way at once for one document (the uploads of
    /// its blobs, the fetches of a head's pages): several for a remote across a network, so that
    /// a first sync of a large notebook costs about one round trip per `concurrentTransfers`
    /// blobs rather than one per blob (docs/sync.md §9). Defaults to 1 (one after the other).
    var concurrentTransfers: Int { get }
}

extension Remote {
    /// No identity: blobs wait for the listing (see `Remote.identity`).
    public var identity: String { "" }

    /// One transfer at a time (see `Remote.concurrentTransfers`).
    public var concurrentTransfers: Int { 1 }

    /// `list(_:)`, whose own bound applies (see `Remote.list(_:maxBytes:)`).
    public func list(_ folder: String, maxBytes: Int) async throws(RemoteError) -> [RemoteEntry] { try await list(folder) }

    /// `put`: the remote's `put` replaces a file whole or leaves it as it was.
    public func create(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) { try await put(path, bytes) }
}

/// The size caps of what a round reads from a remote, one per kind of object (docs/sync.md §2):
/// a reply larger than its cap is refused while it streams, before it is parsed.
package enum RemoteLimits {
    /// A listing's reply (the `PROPFIND` XML; a folder remote counts each name plus 64 bytes):
    /// 64 MiB, some 200,000 heads.
    package static let listingBytes = 64 << 20
    /// A head: 16 MiB.
    package static var headBytes: Int { Head.maxBytes }
    /// A page or asset blob: 256 MiB.
    package static var blobBytes: Int { PageBlob.maxBytes }
    /// The reply to a write (`PUT`, `DELETE`, `MKCOL`), which sync does not use: 1 MiB.
    package static let writeReplyBytes = 1 << 20
}

/// Counts of a remote's requests, shared by its calls: what ``SyncReport/requests``,
/// ``SyncReport/bytesSent`` and ``SyncReport/bytesReceived`` are taken from. Safe to read from
/// any thread while requests run (the counters are behind a lock).
public final class RemoteStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var _requests = 0
    private var _bytesSent = 0
    private var _bytesReceived = 0

    /// Counters at zero.
    public init() {}

    /// Requests made so far.
    public var requests: Int { lock.withLock { _requests } }
    /// Bytes sent so far (request bodies).
    public var bytesSent: Int { lock.withLock { _bytesSent } }
    /// Bytes received so far (response bodies).
    public var bytesReceived: Int { lock.withLock { _bytesReceived } }

    package func record(sent: Int, received: Int) {
        lock.withLock {
            _requests += 1
            _bytesSent += sent
            _bytesReceived += received
        }
    }

    /// Sets every counter back to zero.
    public func reset() { lock.withLock { _requests = 0; _bytesSent = 0; _bytesReceived = 0 } }
}

/// The rules for the paths a round builds and the names a remote lists, for every `Remote`.
package enum RemotePath {
    /// A name we may put in a path: 1...128 of `[A-Za-z0-9._-]`, not starting with a dot.
    package static func isSafeName(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard !u.isEmpty, u.count <= 128, u[0] != 46 else { return false }
        return u.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 46 || $0 == 45 || $0 == 95 }
    }

    /// Whether every component of a relative path is a safe name.
    package static func isSafe(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { isSafeName(String($0)) }
    }

    /// An ETag without its weak prefix, for comparison.
    package static func normalizedETag(_ etag: String?) -> String? {
        guard var e = etag?.trimmingCharacters(in: .whitespaces), !e.isEmpty else { return nil }
        if e.hasPrefix("W/") { e.removeFirst(2) }
        return e
    }
}
