// A client crash during a sync round, at every point the crash model allows (docs/crash-model.md),
// shared by `SyncCrashTests` and `lnote-dev crashcheck`: the round runs on the crash harness's
// simulated disk, and each crash state, with the remote as it was at that moment, is recovered by
// the next rounds with nothing lost and everything converged.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatSync

public enum SyncCrashCheck {
    public struct Report: Sendable, CustomStringConvertible {
        public var engine: EngineKind
        public var othersPublish: Bool
        /// Disk operations of the traced round; documents it merged, pushed and pages pushed; its
        /// path to the document ("session", or "underLock" for the lock alone).
        public var operations = 0
        public var documentsMerged = 0
        public var documentsPushed = 0
        public var pagesPushed = 0
        public var path = ""
        /// Distinct crash states (disk and remote as they were), and how many were recovered and checked.
        public var distinctStates = 0
        public var statesChecked = 0
        /// Each state not recovered with nothing lost, converged and verify clean (at most `maxFailures`).
        public var failures: [String] = []
        public var description: String {
            "\(engine)\(othersPublish ? "" : " push only"): \(operations) operations, \(distinctStates) distinct crash states, \(statesChecked) checked, \(failures.count) failures"
        }
    }

    /// Library A (on the simulated disk) has strokes of its own and pulls B's: a crash anywhere in
    /// A's round (while it applies, saves its pages, its base, uploads) must leave a disk that the
    /// next rounds finish, with every stroke of both on both, and `verify` clean. With
    /// `othersPublish` false only A changed: its round reads the document under its lock alone (no
    /// session) and writes its base, page states included, in one synced file before the head. `everyState`
    /// checks every distinct state; otherwise every crash point once, in its last enumerated form
    /// (the most of its unsynced writes persisted), since each recovery takes four rounds.
    public static func run(engine: EngineKind, othersPublish: Bool = true, everyState: Bool,
                           maxFailures: Int = 5) async throws -> Report {
        var report = Report(engine: engine, othersPublish: othersPublish)
        let remote = MemoryRemote()
        let diskA = SimulatedFileSystem()
        let libA = Library(root: "/lib", fileSystem: diskA)
        let libB = Library(root: temporaryFolder("crashB"))
        defer { try? FileManager.default.removeItem(atPath: libB.root) }
        var rng = TestRandom(seed: 900)
        let doc = try await libA.createDocument(title: "Crash", engine: engine).id
        var strokes: [UUID] = []
        try await edit(libA, doc) { s in
            for _ in 0..<3 { let st = makeStroke(&rng); try await s.append(st, to: await s.pageIDs()[0]); strokes.append(st.id) }
            _ = try await s.addPage()
        }
        for _ in 0..<2 {
            _ = try await libA.sync(with: remote, options: testSyncOptions)
            _ = try await libB.sync(with: remote, options: testSyncOptions)
        }
        // B draws on both pages and inserts an image, and publishes (or not); A draws on page 0 and
        // inserts an image there, closed (not yet synced): the traced round uploads A's asset
        // and, when B published, writes B's through the simulated disk.
        var images: [(id: UUID, asset: UUID, bytes: Data)] = []
        func picture(_ seed: UInt8) -> Data {
            Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<300).map { UInt8(truncatingIfNeeded: Int($0) &* Int(seed)) })
        }
        let frame = QuantizedRect(x: 10, y: 20, width: 300, height: 200)
        if othersPublish {
            try await edit(libB, doc) { s in
                for p in await s.pageIDs() { let st = makeStroke(&rng); try await s.append(st, to: p); strokes.append(st.id) }
                let bytes = picture(7)
                let image = try await s.insertImage(bytes, fileExtension: "png", frame: frame, on: await s.pageIDs()[0])
                strokes.append(image.id)
                images.append((image.id, image.assetID, bytes))
            }
            _ = try await libB.sync(with: remote, options: testSyncOptions)
        }
        try await edit(libA, doc) { s in
            let st = makeStroke(&rng); try await s.append(st, to: await s.pageIDs()[0]); strokes.append(st.id)
            let bytes = picture(11)
            let image = try await s.insertImage(bytes, fileExtension: "png", frame: frame, on: await s.pageIDs()[0])
            strokes.append(image.id)
            images.append((image.id, image.assetID, bytes))
        }
        let bTree = try snapshotFolder(libB.root)
        remote.settle()

        // The traced round.
        diskA.startRecording()
        remote.clock = { diskA.recordedCount }
        let r = try await libA.sync(with: remote, options: testSyncOptions)
        report.documentsMerged = r.documentsMerged
        report.documentsPushed = r.documentsPushed
        report.pagesPushed = r.pagesPushed
        report.path = r.paths[doc].map { "\($0)" } ?? "none"
        guard let trace = diskA.trace else { report.failures.append("the round left no trace"); return report }
        report.operations = trace.operations.count

        // Every distinct crash state (the same disk may meet another remote: keyed by both).
        var distinct: [CrashState] = []
        var seen = Set<String>()
        await CrashStates.enumerate(base: trace.base, operations: trace.operations, limits: .bounded) { state in
            let key = state.tree.fingerprint()
            let remoteWrites = remote.log.filter { $0.at <= state.prefix }.count
            if seen.insert("\(key.a)-\(key.b)-\(remoteWrites)").inserted { distinct.append(state) }
        }
        report.distinctStates = distinct.count
        var chosen = distinct
        if !everyState {
            var lastByPrefix: [Int: Int] = [:]
            for (i, st) in distinct.enumerated() { lastByPrefix[st.prefix] = i }
            chosen = lastByPrefix.values.sorted().map { distinct[$0] }
        }
        for state in chosen {
            guard report.failures.count < maxFailures else { break }
            report.statesChecked += 1
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
                        report.failures.append("state \(state.prefix) \(state.effects): \(lib): \(rep)")
                    }
                }
                let ca = try await contents(of: a), cb = try await contents(of: b)
                if ca != cb { report.failures.append("state \(state.prefix) \(state.effects): not converged\n\(ca)\n---\n\(cb)") }
                let held = ca.documents[doc]?.allElements ?? []
                let lost = Set(strokes).subtracting(held)
                if !lost.isEmpty { report.failures.append("state \(state.prefix) \(state.effects): \(lost.count) strokes lost") }
                for lib in [a, b] {
                    // Every image's asset is there, byte for byte.
                    let package = lib.package(doc)
                    for image in images where (try? lib.fileSystem.readFile(package.assetPath(image.asset, ext: "png"))) != Array(image.bytes) {
                        report.failures.append("state \(state.prefix) \(state.effects): the asset of image \(image.id) is missing or wrong in \(lib.root)")
                    }
                    for e in try await lib.documents() {
                        let bad = DocumentVerifier(fileSystem: lib.fileSystem).verify(e.package).filter { $0.severity == .error }
                        if !bad.isEmpty { report.failures.append("state \(state.prefix): verify: \(bad)") }
                    }
                }
            } catch {
                report.failures.append("state \(state.prefix) \(state.effects): \(error)")
            }
        }
        return report
    }
}

/// A folder's files, relative path to bytes (directories as nil), to start each check from the same B.
private func snapshotFolder(_ root: String) throws -> [(String, [UInt8]?)] {
    let fm = FileManager.default
    var out: [(String, [UInt8]?)] = []
    guard let e = fm.enumerator(atPath: root) else { return [] }
    while let rel = e.nextObject() as? String {
        var isDir: ObjCBool = false
        _ = fm.fileExists(atPath: root + "/" + rel, isDirectory: &isDir)
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
            _ = fm.createFile(atPath: p, contents: Data(b))
        } else {
            try fm.createDirectory(atPath: p, withIntermediateDirectories: true)
        }
    }
}
