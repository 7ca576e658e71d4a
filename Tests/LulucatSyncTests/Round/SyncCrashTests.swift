// A client crash during a sync round, at every point the crash model allows (docs/crash-model.md):
// the round runs on the crash harness's simulated disk, and each crash state, with the remote as it
// was at that moment, is recovered by the next rounds with nothing lost and everything converged.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import Testing
@testable import LulucatSync

/// A remote in memory whose writes are stamped with the simulated disk's operation count, so the
/// remote can be rebuilt as it was when the disk crashed.
final class MemoryRemote: Remote, @unchecked Sendable {
    let statistics = RemoteStatistics()
    private let lock = NSLock()
    private var files: [String: [UInt8]] = [:]
    private var folders: Set<String> = []
    private var version = 0
    private var etags: [String: Int] = [:]
    /// Writes as (operations recorded on the disk before the write, path, bytes or nil for a delete).
    private(set) var log: [(at: Int, path: String, bytes: [UInt8]?)] = []
    var clock: () -> Int = { 0 }

    init() {}

    /// The remote as it was once every write before `operations` disk operations had happened.
    func asOf(_ operations: Int) -> MemoryRemote {
        lock.withLock {
            let r = MemoryRemote()
            r.folders = folders
            for w in log where w.at <= operations {
                if let b = w.bytes { r.files[w.path] = b } else { r.files[w.path] = nil }
                r.version += 1
                r.etags[w.path] = r.version
            }
            return r
        }
    }

    /// Makes the current content the starting point (no log).
    func settle() { lock.withLock { log = files.map { (0, $0.key, $0.value) } } }

    func list(_ folder: String) async throws(RemoteError) -> [RemoteEntry] {
        statistics.record(sent: 0, received: 0)
        let listed: [RemoteEntry]? = lock.withLock {
            guard folders.contains(folder) else { return nil }
            return files.keys.filter { $0.hasPrefix(folder + "/") }.map {
                RemoteEntry(name: String($0.dropFirst(folder.count + 1)), etag: "\"\(etags[$0] ?? 0)\"", size: files[$0]!.count)
            }
        }
        guard let listed else { throw .notFound(folder) }
        return listed
    }

    func get(_ path: String, maxBytes: Int) async throws(RemoteError) -> (bytes: [UInt8], etag: String?) {
        let found: ([UInt8], String?)? = lock.withLock { files[path].map { ($0, "\"\(etags[path] ?? 0)\"") } }
        guard let found else { throw .notFound(path) }
        statistics.record(sent: 0, received: found.0.count)
        return found
    }

    func put(_ path: String, _ bytes: [UInt8]) async throws(RemoteError) {
        let at = clock()
        lock.withLock {
            statistics.record(sent: bytes.count, received: 0)
            files[path] = bytes
            version += 1
            etags[path] = version
            log.append((at, path, bytes))
        }
    }

    func delete(_ path: String) async throws(RemoteError) {
        let at = clock()
        lock.withLock {
            files[path] = nil
            log.append((at, path, nil))
        }
    }

    func makeFolder(_ path: String) async throws(RemoteError) { _ = lock.withLock { folders.insert(path) } }
}

private let crashAll = ProcessInfo.processInfo.environment["LULUCAT_SYNC_CRASH_ALL"] == "1"

@Suite(.serialized) struct SyncCrashTests {
    /// Library A (on the simulated disk) has strokes of its own and pulls B's: a crash anywhere in
    /// A's round (while it applies, saves its pages, its base, uploads) leaves a disk that the next
    /// rounds finish, with every stroke of both on both, and `verify` clean.
    @Test(arguments: crashAll ? [EngineKind.snapshot, .journal] : [.snapshot])
    func aCrashAnywhereInTheApplyStepIsFinishedByTheNextRound(engine: EngineKind) async throws {
        try await crashAnywhere(engine: engine, bPublishes: true)
    }

    /// The same when only A changed: its round reads the document under its lock alone (no
    /// session) and writes its base, page states included, in one synced file before the head.
    @Test(arguments: crashAll ? [EngineKind.snapshot, .journal] : [.snapshot])
    func aCrashAnywhereInARoundThatOnlyPushesIsFinishedByTheNextRound(engine: EngineKind) async throws {
        try await crashAnywhere(engine: engine, bPublishes: false)
    }

    func crashAnywhere(engine: EngineKind, bPublishes: Bool) async throws {
        let remote = MemoryRemote()
        let diskA = SimulatedFileSystem()
        let libA = Library(root: "/lib", fileSystem: diskA)
        let libB = Library(root: temporaryFolder("crashB"))
        defer { try? FileManager.default.removeItem(atPath: libB.root) }
        var rng = TestRandom(seed: 900)
        let doc = try libA.createDocument(title: "Crash", engine: engine).id
        var strokes: [UUID] = []
        try await edit(libA, doc) { s in
            for _ in 0..<3 { let st = makeStroke(&rng); try await s.append(st, to: await s.pageIDs()[0]); strokes.append(st.id) }
            _ = try await s.addPage()
        }
        for _ in 0..<2 {
            _ = try await libA.sync(with: remote, options: testSyncOptions)
            _ = try await libB.sync(with: remote, options: testSyncOptions)
        }
        // B draws on both pages and publishes (or not); A draws on page 0, closed (not yet synced).
        if bPublishes {
            try await edit(libB, doc) { s in
                for p in await s.pageIDs() { let st = makeStroke(&rng); try await s.append(st, to: p); strokes.append(st.id) }
            }
            _ = try await libB.sync(with: remote, options: testSyncOptions)
        }
        try await edit(libA, doc) { s in
            let st = makeStroke(&rng); try await s.append(st, to: await s.pageIDs()[0]); strokes.append(st.id)
        }
        let bTree = try snapshotFolder(libB.root)
        remote.settle()

        // The traced round.
        diskA.startRecording()
        remote.clock = { diskA.recordedCount }
        var timed = testSyncOptions
        timed.timed = true
        let r = try await libA.sync(with: remote, options: timed)
        let steps = r.timings.map(\.step)
        if bPublishes {
            #expect(r.documentsMerged == 1, "\(r)")
            #expect(steps.contains("open session"), "\(steps)")
        } else {
            #expect(r.documentsPushed == 1 && r.documentsMerged == 0 && r.pagesPushed == 1, "\(r)")
            #expect(steps.contains("lock and read document.json") && !steps.contains("open session"), "\(steps)")
        }
        guard let trace = diskA.trace else { Issue.record("no trace"); return }
        #expect(trace.operations.count > 10, "the round wrote \(trace.operations.count) operations")

        // Every distinct crash state (the same disk may meet another remote: keyed by both); each
        // recovery takes four rounds, so the bounded form checks one state per crash point, and
        // LULUCAT_SYNC_CRASH_ALL=1 checks every one (about ten minutes here, both engines).
        var distinct: [CrashState] = []
        var seen = Set<String>()
        await CrashStates.enumerate(base: trace.base, operations: trace.operations, limits: .bounded) { state in
            let key = state.tree.fingerprint()
            let remoteWrites = remote.log.filter { $0.at <= state.prefix }.count
            if seen.insert("\(key.a)-\(key.b)-\(remoteWrites)").inserted { distinct.append(state) }
        }
        // Bounded: every crash point (prefix) once, in its last enumerated form (the most of its
        // unsynced writes persisted).
        var chosen = distinct
        if !crashAll {
            var lastByPrefix: [Int: Int] = [:]
            for (i, st) in distinct.enumerated() { lastByPrefix[st.prefix] = i }
            chosen = lastByPrefix.values.sorted().map { distinct[$0] }
        }
        var states = 0
        var failures: [String] = []
        for state in chosen {
            states += 1
            guard failures.count < 5 else { break }
            let disk = SimulatedFileSystem(tree: state.tree)
            let a = Library(root: "/lib", fileSystem: disk)
            let remoteThen = remote.asOf(state.prefix)
            let b = Library(root: temporaryFolder("crashB2"))
            defer { try? FileManager.default.removeItem(atPath: b.root) }
            do {
                try restoreFolder(bTree, to: b.root)
                for _ in 0..<2 {
                    let ra = try await a.sync(with: remoteThen, options: testSyncOptions)
                    let rb = try await b.sync(with: remoteThen, options: testSyncOptions)
                    for (lib, rep) in [("A", ra), ("B", rb)] where !rep.skipped.isEmpty || !rep.problems.isEmpty {
                        failures.append("state \(state.prefix) \(state.effects): \(lib): \(rep)")
                    }
                }
                let ca = try await contents(of: a), cb = try await contents(of: b)
                if ca != cb { failures.append("state \(state.prefix) \(state.effects): not converged\n\(ca)\n---\n\(cb)") }
                let held = ca.documents[doc]?.allElements ?? []
                let lost = Set(strokes).subtracting(held)
                if !lost.isEmpty { failures.append("state \(state.prefix) \(state.effects): \(lost.count) strokes lost") }
                for lib in [a, b] {
                    for e in try lib.list() {
                        let bad = DocumentVerifier(fileSystem: lib.fileSystem).verify(e.package).filter { $0.severity == .error }
                        if !bad.isEmpty { failures.append("state \(state.prefix): verify: \(bad)") }
                    }
                }
            } catch {
                failures.append("state \(state.prefix) \(state.effects): \(error)")
            }
        }
        #expect(distinct.count > 20 && states > 10, "crash states: \(distinct.count), checked: \(states)")
        #expect(failures.isEmpty, "\(failures.count) crash states not recovered:\n\(failures.joined(separator: "\n"))")
    }
}

/// A folder's files, relative path to bytes (directories as nil), to start each check from the same B.
private func snapshotFolder(_ root: String) throws -> [(String, [UInt8]?)] {
    let fm = FileManager.default
    var out: [(String, [UInt8]?)] = []
    guard let e = fm.enumerator(atPath: root) else { return [] }
    while let rel = e.nextObject() as? String {
        var isDir: ObjCBool = false
        fm.fileExists(atPath: root + "/" + rel, isDirectory: &isDir)
        out.append((rel, isDir.boolValue ? nil : Array(fm.contents(atPath: root + "/" + rel) ?? Data())))
    }
    return out
}

private func restoreFolder(_ files: [(String, [UInt8]?)], to root: String) throws {
    let fm = FileManager.default
    for (rel, bytes) in files.sorted(by: { $0.0.count < $1.0.count }) {
        let p = root + "/" + rel
        if let b = bytes {
            try fm.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            fm.createFile(atPath: p, contents: Data(b))
        } else {
            try fm.createDirectory(atPath: p, withIntermediateDirectories: true)
        }
    }
}
