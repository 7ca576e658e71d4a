// lnote remote, lnote sync: one library on every device, through a WebDAV server or a folder
// (docs/sync.md). Credentials come from the environment or a netrc file, never from argv.

import Foundation
import LulucatStore
import LulucatSync

struct RemoteCommand: Command {
    static let name = "remote"
    static let abstract = "Set or show the remote the library syncs with (a WebDAV URL or a folder). Credentials come from "
        + "LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or 'machine HOST login U password P' in $LNOTE_NETRC or ~/.netrc."
    static let usage = "lnote remote add URL|FOLDER [--library DIR]\nlnote remote [--library DIR]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library"], flags: [])
        let p = args.positionals
        guard p.isEmpty || (p.count == 2 && p[0] == "add") else { throw UsageError("remote takes 'add URL' or nothing") }
        if p.count == 2, let u = URL(string: p[1]), u.user != nil || u.password != nil {
            throw UsageError("put no credentials in the URL: use LNOTE_REMOTE_USER and LNOTE_REMOTE_PASSWORD, or a netrc file")
        }
    }
    func run() async throws {
        let lib = library(args)
        if args.positionals.count == 2 {
            try SyncConfiguration(remote: args.positionals[1]).save(lib)
            print("Remote of \(lib.root): \(args.positionals[1])")
        } else if let c = SyncConfiguration.read(lib) {
            print(c.remote)
        } else {
            print("No remote set for \(lib.root). Run 'lnote remote add URL'.")
        }
    }
}

struct SyncCommand: Command {
    static let name = "sync"
    static let abstract = "Sync the library with its remote (progress, then a summary), or show --status."
    static let usage = "lnote sync [--trash-limit N] [--library DIR] [--json]\nlnote sync --status [--offline] [--library DIR]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, valued: ["library", "trash-limit"], flags: ["status", "offline", "json"])
        guard args.positionals.isEmpty else { throw UsageError("sync takes no arguments") }
        if let n = try args.int("trash-limit"), n < 0 { throw UsageError("--trash-limit takes a number ≥ 0") }
    }
    func run() async throws {
        let lib = library(args)
        guard let config = SyncConfiguration.read(lib) else {
            printError("lnote sync: no remote set for \(lib.root); run 'lnote remote add URL' first")
            throw ExitCode(code: ExitStatus.failure)
        }
        let sync = try LibrarySync(library: lib, remote: try config.makeRemote())
        if args.flag("status") {
            let s = try await sync.status(offline: args.flag("offline"))
            print("remote    \(config.remote)\ndevice    \(s.device.uuidString)\nsynced    \(s.documentsSynced) documents")
            print("to push   \(s.localChanges.count) documents changed here" + (s.unpublished.isEmpty ? "" : ", \(s.unpublished.count) not yet published"))
            if let r = s.remoteChanges { print("to pull   \(r) heads written elsewhere since the last sync") }
            return
        }
        var options = SyncOptions()
        if let n = try args.int("trash-limit") { options.trashLimit = n }
        let json = args.flag("json")
        let report = try await sync.sync(options: options) { p in
            guard !json, p.total > 0 else { return }
            FileHandle.standardError.write(Data("\rsyncing \(p.done)/\(p.total) documents".utf8))
            if p.done == p.total { FileHandle.standardError.write(Data("\n".utf8)) }
        }
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
