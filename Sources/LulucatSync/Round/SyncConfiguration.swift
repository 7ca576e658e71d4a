// Which remote a library syncs with (`.sync/remote.json`, never a secret), where credentials come
// from (the environment or a netrc-style file, never the command line), and a round's status.

import Foundation
import LulucatStore

/// Which remote a library syncs with, kept in `.sync/remote.json` (never a secret).
public struct SyncConfiguration: Sendable, Equatable {
    /// An http(s) URL of a WebDAV collection, an `s3://BUCKET/PREFIX?endpoint=…&region=…` URL of
    /// an S3 bucket (`S3Location`), or an absolute folder path (or file:// URL).
    public var remote: String

    /// A configuration for `remote` (checked by `save` and `makeRemote`).
    public init(remote: String) { self.remote = remote }

    static func path(_ library: Library) -> String { library.root + "/.sync/remote.json" }

    /// The library's configuration, or nil when none was saved (or it cannot be read).
    public static func read(_ library: Library) -> SyncConfiguration? {
        let store = SyncStateStore(library: library)
        guard let file = store.read(RemoteFile.self, path(library)) else { return nil }
        return SyncConfiguration(remote: file.remote)
    }

    /// Checks the remote's form and saves it.
    /// - Throws: `SyncError.invalidRemote` for a URL that is neither http(s), s3 nor an absolute folder.
    public func save(_ library: Library) throws(SyncError) {
        _ = try kind()
        try SyncError.store { () throws(StoreError) in try library.prepare() }
        let store = SyncStateStore(library: library)
        try store.prepare()
        try store.write(RemoteFile(remote: remote), to: SyncConfiguration.path(library))
        store.forgetPlainRemote()
    }

    /// Forgets the library's remote: which remote it is, the heads seen there, the blobs seen
    /// unreferenced there and, for an encrypted remote, the library key kept here (the passphrase
    /// brings it back). Nothing on the remote and nothing in the documents changes. What each
    /// document last agreed with the remote (its base, with its logical clock) is kept, so that
    /// adding the same remote again resumes where it stopped and no edit ever reuses a stamp.
    /// Waits for a round in progress, as a round does, and does nothing if none was set.
    /// - Returns: the remote that was forgotten, or nil when the library had none.
    /// - Throws: `SyncError.anotherRoundRunning`, `.localState`.
    @discardableResult
    public static func remove(from library: Library) async throws(SyncError) -> SyncConfiguration? {
        let store = SyncStateStore(library: library)
        guard let configuration = read(library) else { return nil }
        let lock = try await store.lockRounds(waiting: SyncOptions().waitForOtherRound)
        defer { store.unlockRounds(lock) }
        // The remote first: once it is gone no round starts, whatever else a crash leaves.
        for name in ["remote.json", "seen.json", LibrarySync.garbageFile] {
            try SyncError.state { () throws(FileError) in try store.fs.removeIfPresent(store.folder + "/" + name) }
        }
        store.forgetPlainRemote()
        RemoteEncryption.forget(library)
        return configuration
    }

    enum Kind { case folder(String), webdav(URL), s3(S3Location) }

    func kind() throws(SyncError) -> Kind {
        if remote.hasPrefix("/") { return .folder(remote) }
        if let u = URL(string: remote), let scheme = u.scheme?.lowercased() {
            if scheme == "file" { return .folder(u.path) }
            if scheme == "s3" {
                do { return .s3(try S3Location(url: remote)) } catch {
                    if case .failed(_, let why) = error { throw .invalidRemote(why) }
                    throw .invalidRemote("\(error)")
                }
            }
            if scheme == "http" || scheme == "https", u.host != nil, u.user == nil, u.password == nil { return .webdav(u) }
            if u.user != nil || u.password != nil {
                throw .invalidRemote("put no credentials in the URL: use LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc file")
            }
        }
        throw .invalidRemote("'\(remote)' is neither an http(s) WebDAV URL, an s3:// URL nor an absolute folder path")
    }

    /// The remote, with credentials from `LNOTE_REMOTE_USER`/`LNOTE_REMOTE_PASSWORD` in
    /// `environment`, else from `netrc`: the text of a netrc-style file the caller read
    /// (`machine HOST login USER password PASS`; `lnote` reads `$LNOTE_NETRC` or `~/.netrc`).
    /// An S3 remote takes `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN` when
    /// set), else the netrc entry of the endpoint's host (login: the access key, password: the secret).
    /// Sync itself reads no file outside the library.
    public func makeRemote(environment: [String: String] = ProcessInfo.processInfo.environment,
                           netrc: String? = nil) throws(SyncError) -> any Remote {
        switch try kind() {
        case .folder(let p): return FolderRemote(root: p)
        case .webdav(let url):
            var credentials: WebDAVCredentials?
            if let u = environment["LNOTE_REMOTE_USER"], let p = environment["LNOTE_REMOTE_PASSWORD"] {
                credentials = WebDAVCredentials(user: u, password: p)
            } else if let netrc, let host = url.host {
                credentials = SyncConfiguration.netrc(netrc, host: host)
            }
            do { return try WebDAVRemote(url: url, credentials: credentials) } catch { throw .remote(error) }
        case .s3(let location):
            return S3Remote(location: location, credentials: SyncConfiguration.s3Credentials(location, environment: environment, netrc: netrc))
        }
    }

    /// An S3 remote's keys: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
    /// `AWS_SESSION_TOKEN` when set) in `environment`, else the netrc entry of the endpoint's host;
    /// nil when neither has them (requests then go unsigned).
    package static func s3Credentials(_ location: S3Location, environment: [String: String], netrc: String?) -> S3Credentials? {
        if let a = environment["AWS_ACCESS_KEY_ID"], let s = environment["AWS_SECRET_ACCESS_KEY"], !a.isEmpty, !s.isEmpty {
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return S3Credentials(accessKey: a, secretKey: s, sessionToken: token)
        }
        if let netrc, let host = location.endpoint.host, let c = SyncConfiguration.netrc(netrc, host: host) {
            return S3Credentials(accessKey: c.user, secretKey: c.password)
        }
        return nil
    }

    /// The login and password of `host` in netrc text (or of `default`).
    package static func netrc(_ text: String, host: String) -> WebDAVCredentials? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).map(String.init)
        var i = 0
        var current: String?
        var found: [String: (String?, String?)] = [:]
        while i < tokens.count {
            switch tokens[i] {
            case "machine" where i + 1 < tokens.count: current = tokens[i + 1]; i += 2
            case "default": current = "default"; i += 1
            case "login" where i + 1 < tokens.count:
                if let c = current { found[c, default: (nil, nil)].0 = tokens[i + 1] }
                i += 2
            case "password" where i + 1 < tokens.count:
                if let c = current { found[c, default: (nil, nil)].1 = tokens[i + 1] }
                i += 2
            default: i += 1
            }
        }
        for key in [host, "default"] {
            if let (u, p) = found[key], let u, let p { return WebDAVCredentials(user: u, password: p) }
        }
        return nil
    }
}

/// Where a library stands against its remote, without running a round
/// (``LibrarySync/status(offline:)``; what `lnote sync --status` shows).
public struct SyncStatus: Sendable {
    /// This library's device id.
    public var device: UUID
    /// Documents with a base (synced at least once).
    public var documentsSynced: Int
    /// Documents changed here since their last round (or never synced).
    public var localChanges: [UUID]
    /// Documents whose last round did not finish publishing, and (asked of the remote) those
    /// whose published head the server did not keep (missing from its listing or at another size).
    public var unpublished: [UUID]
    /// Heads written elsewhere and not read yet; nil when the remote was not asked.
    public var remoteChanges: Int?
}

extension LibrarySync {
    /// The status, from the local state and (unless `offline`) one listing of the remote's heads.
    /// - Throws: `SyncError.remote` when the remote cannot be reached or read (refused
    ///   credentials, a server error, no server, a missing folder): "nothing to pull" is never
    ///   said of a remote that was not read (`offline` gives the local side alone).
    public func status(offline: Bool = false) async throws(SyncError) -> SyncStatus {
        if let key { return try await EncryptedRound(library: library, inner: remote, key: key).status(offline: offline) }
        let bases = store.baseIDs()
        var local: [UUID] = []
        var unpublished: [UUID] = []
        var baseByID: [UUID: Base] = [:]
        for id in bases { if let b = store.base(id) { baseByID[id] = b; if !b.published { unpublished.append(id) } } }
        for e in try SyncError.store({ () throws(StoreError) in try library.documents() }) where baseByID[e.id]?.docModified != e.modified.milliseconds { local.append(e.id) }
        var remoteChanges: Int?
        if !offline {
            let seen = store.seen()
            var n = 0
            let listed = try await listHeadsForStatus()
            for e in listed {
                guard let (_, dev) = Head.parseFileName(e.name), dev != device else { continue }
                if seen[e.name] != RemotePath.normalizedETag(e.etag) { n += 1 }
            }
            remoteChanges = n
            // Ours, published and acknowledged but not kept by the server: to be published again.
            if store.isKnownPlain(remote.identity) {
                let published = store.index().filter { baseByID[$0.key]?.published == true && $0.value.file == store.baseFileIdentity($0.key) }
                    .compactMapValues(\.publishedHeadBytes)
                for (id, _) in Self.headsNotKept(listed, published: published, device: device) where !unpublished.contains(id) { unpublished.append(id) }
            }
        }
        return SyncStatus(device: device, documentsSynced: baseByID.count, localChanges: local.sorted { $0.precedesInBytes($1) },
                          unpublished: unpublished, remoteChanges: remoteChanges)
    }

    /// The remote's heads for `status`; none when the remote holds no `heads/` yet (a new
    /// remote), but a missing remote folder, or any failure, is the error.
    func listHeadsForStatus() async throws(SyncError) -> [RemoteEntry] {
        let remote = self.remote
        switch await Self.attempt({ () async throws(RemoteError) in try await remote.list(Self.headsFolder) }) {
        case .success(let entries): return entries
        case .failure(.notFound):
            // No heads/: a new remote, unless its folder itself is missing.
            switch await Self.attempt({ () async throws(RemoteError) in try await remote.list("") }) {
            case .failure(.notFound):
                throw .remote(.refused("", .missingFolder(remote.identity.isEmpty ? "of the remote" : remote.identity)))
            case .failure(let e) where Self.isUnreadable(e): throw .remote(e)
            default: return []
            }
        case .failure(let e): throw .remote(e)
        }
    }

    /// Whether a listing's failure says the remote cannot be read (rather than that the remote
    /// lists no folder by that name, as a folder or encrypted remote answers of its root).
    static func isUnreadable(_ e: RemoteError) -> Bool {
        switch e {
        case .refused, .timedOut, .ambiguous, .invalidResponse: return true
        case .notFound, .failed: return false
        }
    }
}
