// lnote-dev bench import: what an import costs in memory and disk against the size of the document it
// produces (target <= 2x), for a realistic document and for the most compressible valid page.
// Each import runs in a child `lnote import`, so its peak resident memory is its own (VmHWM,
// sampled); the floor is the same child listing an empty library, measured side by side.

import Foundation
import LulucatInk
import LulucatHandwriting
import LulucatStore
import LulucatInterchange
#if canImport(Glibc)
import Glibc
#endif

enum ImportBench {
    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["pages", "strokes", "runs", "dir"], flags: ["json"])
        let pages = try args.int("pages") ?? 20
        let strokes = try args.int("strokes") ?? 1000
        let runs = try args.int("runs") ?? 3
        guard pages > 0, strokes > 0, runs > 0 else { throw UsageError("--pages, --strokes and --runs must be positive") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-import-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }
        // The child is `lnote` (lnote-dev has no import or list command), built beside lnote-dev:
        // swift build -c release --product lnote.
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("lnote").path
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            throw UsageError("bench import runs \(exe), which is not there: build it too (swift build -c release --product lnote)")
        }

        let source = Library(root: base + "/source")
        var cases: [(String, String)] = []
        // A realistic notebook: handwriting on every page and a 4 MB photo.
        do {
            let package = try await source.createDocument(title: "Import bench")
            let session = try await source.open(package.id, options: SessionOptions(autosaveDelay: nil, maxLoadedPages: 2, thumbnails: nil))
            var ids = await session.pageIDs()
            for _ in 1..<pages { ids.append(try await session.addPage()) }
            for (i, id) in ids.enumerated() {
                try await session.append(HandwritingGenerator(seed: 7 + UInt64(i)).page(strokes: strokes, canvas: .letter).elements, to: id)
                try await session.save()
            }
            var photo = [UInt8](repeating: 0, count: 4 << 20)
            var rng = SeededRandom(seed: 99)
            for i in photo.indices { photo[i] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = try await session.insertImage(Data(photo), fileExtension: "jpg", frame: QuantizedRect(x: 0, y: 0, width: 1000, height: 800), on: ids[0])
            try await session.close()
            let zip = base + "/notebook.zip"
            try await DocumentTransfer.exportArchive(package.id, from: source, to: zip)
            cases.append(("notebook (\(pages) pages x \(strokes) strokes, 4 MB image)", zip))
        }
        // The most compressible valid page: fixed16 samples that never move (~1000:1 deflated).
        do {
            let package = try await source.createDocument(title: "Still", codec: .fixed16)
            let session = try await source.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
            let page = await session.pageIDs()[0]
            let still = Sample(x: 500, y: 500, radius: 10, pressure: 500, time: 0)
            try await session.append((0..<40).map { _ in .stroke(Stroke(samples: Array(repeating: still, count: 50_000))) }, to: page)
            try await session.close()
            let zip = base + "/still.zip"
            try await DocumentTransfer.exportArchive(package.id, from: source, to: zip)
            cases.append(("one page of 2,000,000 still samples (fixed16)", zip))
        }

        var rows: [[String: Any]] = []
        for (name, zip) in cases {
            var memory: [Double] = [], disk: [Double] = [], floors: [Double] = [], docs: [Double] = [], peaks: [Double] = []
            for run in 0..<runs {
                let root = base + "/target-\(rows.count)-\(run)"
                let empty = base + "/empty-\(rows.count)-\(run)"
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
                let floor = try spawnMeasuring(exe, ["list", "--library", empty], watching: empty)
                let measured = try spawnMeasuring(exe, ["import", zip, "--library", root], watching: root)
                guard measured.status == 0 else { throw StoreError.invalidArgument("lnote import \(zip) failed (status \(measured.status))") }
                let docBytes = Double(folderBytes(root))
                floors.append(floor.maxRSS)
                peaks.append(measured.maxRSS)
                memory.append(max(0, measured.maxRSS - floor.maxRSS) / docBytes)
                disk.append(Double(measured.peakDisk) / docBytes)
                docs.append(docBytes)
                try? FileManager.default.removeItem(atPath: root)
            }
            let zipBytes = (try? FileManager.default.attributesOfItem(atPath: zip))?[.size] as? Int ?? 0
            let row: [String: Any] = [
                "case": name, "zip_bytes": zipBytes, "document_bytes": Int(median(docs)),
                "import_peak_rss_mb": r(median(peaks) / 1e6, 1), "floor_rss_mb": r(median(floors) / 1e6, 1),
                "memory_over_floor_vs_document": r(median(memory), 3), "peak_disk_vs_document": r(median(disk), 3),
                "runs": runs,
            ]
            rows.append(row)
            say("""
            \(name): zip \(zipBytes) bytes, document \(Int(median(docs))) bytes
              peak resident memory  \(r(median(peaks) / 1e6, 1)) MB; floor (lnote list, empty library) \(r(median(floors) / 1e6, 1)) MB
              memory above the floor / document  \(r(median(memory), 3))   (target <= 2)
              peak disk / document               \(r(median(disk), 3))   (target <= 2)
            """)
        }
        if json { printJSON(["cases": rows]) } else { say("medians of \(runs) runs each; release build: swift build -c release") }
    }

    /// Bytes of the regular files under `path` (links not followed).
    static func folderBytes(_ path: String) -> Int {
        var total = 0
        let e = FileManager.default.enumerator(atPath: path)
        while let name = e?.nextObject() as? String {
            var st = stat()
            if lstat(path + "/" + name, &st) == 0, st.st_mode & S_IFMT == S_IFREG { total += Int(st.st_size) }
        }
        return total
    }

    /// Runs `exe args` to the end, polling the bytes under `watching` every 2 ms for their peak.
    /// Returns the exit status, the child's peak resident memory in bytes and the peak disk.
    static func spawnMeasuring(_ exe: String, _ args: [String], watching: String) throws -> (status: Int32, maxRSS: Double, peakDisk: Int) {
        let argv: [UnsafeMutablePointer<CChar>?] = ([exe] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, exe, &actions, nil, argv, environ)
        guard rc == 0 else { throw StoreError.invalidArgument("cannot run \(exe): \(String(cString: strerror(rc)))") }
        let peak = PeakCounter()
        let memory = PeakCounter()
        let child = pid
        let watcher = Thread {
            while !peak.stopped {
                peak.observe(folderBytes(watching))
                if let hwm = highWaterMark(child) { memory.observe(hwm) }
                usleep(2000)
            }
        }
        watcher.start()
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        peak.observe(folderBytes(watching))
        peak.stop()
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        _ = usage
        return (exit, Double(memory.value), peak.value)
    }

    /// The child's peak resident memory so far (VmHWM, bytes). Not wait4's ru_maxrss: Linux keeps
    /// that across exec, so a child spawned from this (large) process would report our peak.
    /// VmHWM belongs to the child's own address space; sampled every 2 ms until it exits.
    static func highWaterMark(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = line.split(separator: " ").compactMap({ Int($0) }).first else { return nil }
        return kb * 1024
    }
}

/// The largest value seen, shared with the polling thread.
final class PeakCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var done = false
    var value: Int { lock.withLock { peak } }
    var stopped: Bool { lock.withLock { done } }
    func observe(_ v: Int) { lock.withLock { peak = max(peak, v) } }
    func stop() { lock.withLock { done = true } }
}
