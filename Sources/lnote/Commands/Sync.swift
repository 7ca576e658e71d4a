// lnote remote, lnote sync: one library on every device, through a WebDAV server, an S3 bucket or
// a folder (docs/sync.md). Credentials come from the environment or a netrc file, never from argv.

import Foundation
import LulucatStore
import LulucatSync

struct RemoteCommand: Command {
    static let name = "remote"
    static let abstract = "Set or show the remote the library syncs with (a WebDAV URL, s3://BUCKET/PREFIX?endpoint=URL&region=R, "
        + "or a folder). Credentials come from LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD (S3: AWS_ACCESS_KEY_ID, "
        + "AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN), or 'machine HOST login U password P' in $LNOTE_NETRC or ~/.netrc. "
        + "--encrypt seals everything on the remote under a key the passphrase unlocks (asked on the terminal without echo, "
        + "or read from LNOTE_PASSPHRASE); 'passphrase' changes it (the new one from the terminal or LNOTE_NEW_PASSPHRASE). "
        + "A new passphrase needs at least 10 characters (--weak-passphrase accepts a shorter one). A FOLDER must exist "
        + "(--create makes it): sync never creates a missing one, which is usually an unmounted drive or a typo."
    static let actions = ["add", "passphrase", "remove"]
    static let options: [OptionSpec] = [.flag("create", "remote add FOLDER: make the folder if it does not exist."), .flag("encrypt", "remote add: encrypt everything sent (asks for the passphrase)."), .flag("weak-passphrase", "Accept a passphrase shorter than the minimum (scripts, tests)."), .library]
    static let examples = ["lnote remote add https://dav.example.com/notes --encrypt", "lnote remote add /media/usb/notes --create", "lnote remote", "lnote remote remove"]
    static let usage = "lnote remote add URL|FOLDER [--create] [--encrypt [--weak-passphrase]] [--library DIR]\n"
        + "lnote remote passphrase [--weak-passphrase] [--library DIR]\nlnote remote remove [--library DIR]\nlnote remote [--library DIR]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        let p = args.positionals
        guard p.isEmpty || (p.count == 2 && p[0] == "add") || p == ["passphrase"] || p == ["remove"] else {
            throw UsageError("remote takes 'add URL', 'passphrase', 'remove' or nothing")
        }
        if args.flag("encrypt") && p.first != "add" { throw UsageError("--encrypt goes with 'remote add URL'") }
        if args.flag("create") && p.first != "add" { throw UsageError("--create goes with 'remote add FOLDER'") }
        if args.flag("weak-passphrase") && !(args.flag("encrypt") || p == ["passphrase"]) {
            throw UsageError("--weak-passphrase goes with 'remote add URL --encrypt' or 'remote passphrase'")
        }
        if p.count == 2, let u = URL(string: p[1]), u.user != nil || u.password != nil {
            throw UsageError(u.scheme?.lowercased() == "s3"
                ? "put no credentials in the URL: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a netrc file"
                : "put no credentials in the URL: use LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc file")
        }
    }
    func run() async throws {
        let lib = library(args)
        if args.positionals.count == 2 {
            let config = SyncConfiguration(remote: args.positionals[1])
            let folder = try config.makeRemote(netrc: netrcText()) as? FolderRemote
            if let folder, !isDirectory(folder.root) {
                guard args.flag("create") else {
                    printError("lnote remote: \(folder.root) does not exist; pass --create to make it (sync never creates a missing folder)")
                    throw ExitCode(code: ExitStatus.failure)
                }
                try folder.createRoot()
            } else if args.flag("create"), folder == nil {
                throw UsageError("--create makes a folder remote; a WebDAV collection or an S3 bucket is made on the server")
            }
            if args.flag("encrypt") {
                let phrase = try Passphrase.obtain(prompt: "Passphrase of the encrypted remote: ", environment: "LNOTE_PASSPHRASE")
                let created = try await RemoteEncryption.setUp(library: lib, remote: try config.makeRemote(netrc: netrcText()), passphrase: phrase,
                                                                   allowWeak: args.flag("weak-passphrase"))
                try config.save(lib)
                print("Remote of \(lib.root): \(args.positionals[1]) (encrypted; "
                      + (created ? "new library key made, keep the passphrase safe: it cannot be recovered" : "joined with the passphrase")
                      + "; the key is kept in \(lib.root)/.sync/library.key, mode 0600)")
            } else {
                try config.save(lib)
                RemoteEncryption.forget(lib)
                print("Remote of \(lib.root): \(args.positionals[1])")
            }
        } else if args.positionals == ["remove"] {
            guard let gone = try await SyncConfiguration.remove(from: lib) else {
                print("No remote set for \(lib.root); nothing to remove.")
                return
            }
            print("Remote of \(lib.root) removed: \(gone.remote) (nothing on it was changed; 'lnote remote add' with the same remote resumes where sync stopped)")
        } else if args.positionals == ["passphrase"] {
            guard let c = SyncConfiguration.read(lib), RemoteEncryption.isSetUp(lib) else {
                printError("lnote remote: \(lib.root) has no encrypted remote; run 'lnote remote add URL --encrypt' first")
                throw ExitCode(code: ExitStatus.failure)
            }
            let old = try Passphrase.obtain(prompt: "Current passphrase: ", environment: "LNOTE_PASSPHRASE")
            let new = try Passphrase.obtain(prompt: "New passphrase: ", environment: "LNOTE_NEW_PASSPHRASE", confirm: true)
            try await RemoteEncryption.changePassphrase(library: lib, remote: try c.makeRemote(netrc: netrcText()), old: old, new: new,
                                                       allowWeak: args.flag("weak-passphrase"))
            print("Passphrase of \(c.remote) changed (the library key is the same; nothing was re-encrypted)")
        } else if let c = SyncConfiguration.read(lib) {
            print(c.remote + (RemoteEncryption.isSetUp(lib) ? " (encrypted)" : ""))
        } else {
            print("No remote set for \(lib.root). Run 'lnote remote add URL'.")
        }
    }
}

/// A passphrase from the environment (for scripts) or the terminal with echo off; never argv.
enum Passphrase {
    static func obtain(prompt: String, environment name: String, confirm: Bool = false) throws -> String {
        if let p = ProcessInfo.processInfo.environment[name] {
            guard !p.isEmpty else { throw UsageError("\(name) is empty") }
            return p
        }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard fd >= 0 else { throw UsageError("no terminal to ask the passphrase on: set \(name)") }
        defer { close(fd) }
        let first = try ask(prompt, fd)
        guard !first.isEmpty else { throw UsageError("an empty passphrase") }
        if confirm, try ask("Again: ", fd) != first { throw UsageError("the two passphrases differ") }
        return first
    }

    /// One line from the terminal with echo off, restored whatever happens. Echo goes off before
    /// the prompt is shown, so that nothing typed after the prompt is echoed or flushed away.
    static func ask(_ prompt: String, _ fd: Int32) throws -> String {
        var saved = termios()
        let isTerminal = tcgetattr(fd, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else { throw UsageError("cannot turn the terminal's echo off") }
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        defer {
            if isTerminal { _ = tcsetattr(fd, TCSAFLUSH, &saved) }
            _ = write(fd, "\n", 1)
        }
        var line: [UInt8] = []
        var c: UInt8 = 0
        while read(fd, &c, 1) == 1, c != 10, c != 13 { line.append(c) }
        return String(decoding: line, as: UTF8.self)
    }
}

struct SyncCommand: Command {
    static let name = "sync"
    static let abstract = "Sync the library with its remote (progress, then a summary), or show --status."
    static let options: [OptionSpec] = [
        .valued("trash-limit", "N", default: "5", "At most N documents go to the trash in one round; more stops the round."),
        .valued("deadline", "SECONDS", default: "120", "The round ends by then, finished work kept (0: no deadline)."),
        .flag("status", "Say what a round would push and pull, changing nothing."),
        .flag("offline", "With --status: from what is known locally, without asking the remote."),
        .library, .json,
    ]
    static let examples = ["lnote sync", "lnote sync --deadline 600", "lnote sync --status --json"]
    static let usage = "lnote sync [--trash-limit N] [--deadline SECONDS] [--library DIR] [--json]\nlnote sync --status [--offline] [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.isEmpty else { throw UsageError("sync takes no arguments") }
        if let n = try args.int("trash-limit"), n < 0 { throw UsageError("--trash-limit takes a number ≥ 0") }
        if let n = try args.int("deadline"), n < 0 { throw UsageError("--deadline takes a number of seconds ≥ 0 (0: none)") }
        if args.flag("status") && args.value("deadline") != nil { throw UsageError("--deadline goes with a sync, not --status") }
        if args.flag("offline") && !args.flag("status") { throw UsageError("--offline goes with --status") }
        if args.flag("status") && args.value("trash-limit") != nil { throw UsageError("--trash-limit goes with a sync, not --status") }
    }
    func run() async throws {
        let lib = library(args)
        guard let config = SyncConfiguration.read(lib) else {
            printError("lnote sync: no remote set for \(lib.root); run 'lnote remote add URL' first")
            throw ExitCode(code: ExitStatus.failure)
        }
        let sync = try LibrarySync(library: lib, remote: try config.makeRemote(netrc: netrcText()))
        if args.flag("status") {
            let s = try await sync.status(offline: args.flag("offline"))
            if args.flag("json") {
                var o: [String: Any] = ["remote": config.remote, "device": s.device.uuidString, "synced": s.documentsSynced,
                                        "encrypted": sync.isEncrypted,
                                        "to_push": s.localChanges.map(\.uuidString), "unpublished": s.unpublished.map(\.uuidString)]
                if let r = s.remoteChanges { o["to_pull"] = r }
                printJSON(o)
                return
            }
            print("remote    \(config.remote)\ndevice    \(s.device.uuidString)\nsynced    \(counted(s.documentsSynced, "document"))")
            print("to push   \(counted(s.localChanges.count, "document")) changed here" + (s.unpublished.isEmpty ? "" : ", \(s.unpublished.count) not yet published"))
            if let r = s.remoteChanges { print("to pull   \(counted(r, "head")) written elsewhere since the last sync") }
            return
        }
        var options = SyncOptions()
        if let n = try args.int("trash-limit") { options.trashLimit = n }
        // The round's deadline (120 s by default); a first sync of a large library over a slow
        // link may need more, or none (0).
        if let n = try args.int("deadline") { options.roundDeadline = n == 0 ? nil : .seconds(n) }
        let json = args.flag("json")
        // A first line at once, then the documents and the bytes moved (SyncProgressLine); the
        // line is cleared before an error is printed, so the error stands on its own line.
        let line = json ? nil : SyncProgressLine(remote: config.remote, statistics: sync.remote.statistics)
        let progress: @Sendable (SyncProgress) -> Void = { p in line?.documents(p) }
        let ticker = Task {
            while !Task.isCancelled, let line {
                try? await Task.sleep(for: .milliseconds(250))
                line.tick()
            }
        }
        let report: SyncReport
        do { report = try await sync.sync(options: options, progress: progress) } catch {
            ticker.cancel()
            line?.done()
            throw error
        }
        ticker.cancel()
        line?.done()
        if json {
            printJSON(["checked": report.documentsChecked, "pulled": report.documentsPulled, "pushed": report.documentsPushed,
                       "merged": report.documentsMerged, "created": report.documentsCreated, "trashed": report.documentsTrashed,
                       "restored": report.documentsRestored, "pages_pulled": report.pagesPulled, "pages_pushed": report.pagesPushed,
                       "requests": report.requests, "bytes_sent": report.bytesSent, "bytes_received": report.bytesReceived,
                       "skipped": Dictionary(uniqueKeysWithValues: report.skipped.map { ($0.key.uuidString, $0.value) }),
                       "problems": report.problems])
        } else {
            print(report.description)
        }
        if !report.skipped.isEmpty || !report.problems.isEmpty { throw ExitCode(code: ExitStatus.failure) }
    }
}

/// `lnote sync`'s progress on standard error: a first line at once ("syncing with REMOTE"), then
/// the documents done and, as each page's blob goes up or comes down, the pages and bytes moved
/// (the bytes are the remote's counters, read every quarter second by the caller's `tick`), so
/// that a large notebook is not minutes of silence. On a terminal one line rewritten in place; in
/// a log a line per document, and a line of pages and bytes at most once a second.
final class SyncProgressLine: @unchecked Sendable {
    private let line = ProgressLine()
    private let statistics: RemoteStatistics
    private let start: (sent: Int, received: Int)
    private let lock = NSLock()
    private var counted: SyncProgress?
    private var shown = ""
    private var shownAt = ContinuousClock.now
    private var finished = false

    init(remote: String, statistics: RemoteStatistics) {
        self.statistics = statistics
        start = (statistics.bytesSent, statistics.bytesReceived)
        show("syncing with \(terminalSafe(remote))", force: true)
    }

    /// A document started (or, `done == total`, the last one finished): a line of its own; a
    /// page of it moved: shown as the bytes are.
    func documents(_ p: SyncProgress) {
        guard p.total > 0 else { return }
        let newDocument: Bool = lock.withLock {
            defer { counted = p }
            return counted.map { $0.done != p.done || $0.total != p.total || $0.document != p.document } ?? true
        }
        show(text(), force: newDocument)
    }

    /// The bytes moved since the last line, if any: on a terminal now, in a log once a second.
    func tick() { show(text(), force: false) }

    /// The round is over: the line is cleared (on a terminal) and nothing more is shown.
    func done() {
        lock.withLock {
            guard !finished else { return }
            finished = true
            line.done()
        }
    }

    private func text() -> String {
        let sent = statistics.bytesSent - start.sent, received = statistics.bytesReceived - start.received
        let c = lock.withLock { counted }
        var t = c.map { "syncing \($0.done)/\($0.total) documents" } ?? "syncing"
        if let c, c.pagesToMove > 0 { t += ", \(c.pagesMoved)/\(c.pagesToMove) pages" }
        if sent > 0 || received > 0 { t += ", \(Self.size(sent)) sent, \(Self.size(received)) received" }
        return t
    }

    private func show(_ text: String, force: Bool) {
        lock.withLock {
            guard !finished, text != shown, force || line.live || ContinuousClock.now - shownAt >= .seconds(1) else { return }
            shown = text
            shownAt = .now
            line.step(text)
        }
    }

    static func size(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1 << 20 { return "\(bytes >> 10) KB" }
        return String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }
}

/// The netrc file sync takes credentials from when the environment gives none: `$LNOTE_NETRC`, else
/// `~/.netrc` (a symbolic link is followed, as netrc files often are).
func netrcText(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
    let file = environment["LNOTE_NETRC"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.netrc")
    return try? String(contentsOfFile: file, encoding: .utf8)
}
