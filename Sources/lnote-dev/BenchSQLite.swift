// `lnote-dev bench sqlite`: the seed's SQLite workload (100 strokes written in one transaction, then
// read back) against the plain floor (the same bytes in one file + fsync), measured in one run.

import Foundation
import LulucatInk
import LulucatSQLite
import LulucatStore
import LulucatStoreSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SQLite engine benchmark. `BenchCommand` dispatches `lnote-dev bench sqlite ...` here.
struct SQLiteBench {
    static let usage = """
        lnote-dev bench sqlite [--json] [--repetitions N] [--strokes N] [--samples N] [--dir PATH] [--page-size BYTES] [--cache-kib N] [--mmap-mib N] [--explore] [--only VARIANT,...] [--wal-buffer-kib N]

        Writes 100 strokes of 3,400 samples (5,440,000 bytes of fixed16 BLOBs) and of 2,550 samples
        (4,080,000 bytes) in one transaction, with synchronous FULL and NORMAL, and reads them back.
        full/normal: the steady state of an open document (the connection has saved before, its
        WAL exists and is reused); full_fresh_db/normal_fresh_db: the first save into a new
        database; *_unbuffered: the same without the WAL write buffer. The floor is the same
        bytes written to one new file (one write a BLOB) and fsynced, and read back from it; also
        overwritten in place and fsynced, and written to a new file with one writev. Each commit
        is also divided by the write+fsync floor of the bytes it actually wrote (write(2) bytes,
        /proc/self/io), measured right after it: the median of those ratios. Medians of N
        repetitions (default 7), alternated.
        --strokes and --samples change the workload (one stroke size instead of both).
        --explore also measures other page sizes and a rollback journal.
        --wal-buffer-kib sets the WAL write buffer of the buffered variants (0: off).
        --only A,B,... measures the floor and those variants only (for profiling; the summary
        keys of the others are then absent).

        """ + SQLiteAppendBench.usage

    struct Options {
        var json = false
        var repetitions = 7
        var strokes = 100
        var directory: String?
        var pageSize = SQLiteContentStore.Configuration().pageSize
        var explore = false
        /// Only this stroke size instead of the seed's two.
        var samples: Int?
        var cacheKiB = SQLiteContentStore.Configuration().cacheSizeKiB
        var mmapMiB = Int(SQLiteContentStore.Configuration().memoryMapBytes >> 20)
        var only: String?
        var walBufferKiB = SQLiteContentStore.Configuration().walWriteBufferBytes >> 10
    }

    static func parse(_ arguments: [String]) throws -> Options {
        let args = try Arguments(arguments, valued: ["repetitions", "strokes", "samples", "dir", "page-size", "cache-kib", "mmap-mib", "only", "wal-buffer-kib"], flags: ["json", "explore"])
        guard args.positionals.isEmpty else { throw UsageError("unexpected argument '\(args.positionals[0])'") }
        var o = Options()
        o.json = args.flag("json")
        o.explore = args.flag("explore")
        o.repetitions = try args.int("repetitions") ?? o.repetitions
        o.strokes = try args.int("strokes") ?? o.strokes
        o.pageSize = try args.int("page-size") ?? o.pageSize
        o.samples = try args.int("samples")
        o.cacheKiB = try args.int("cache-kib") ?? o.cacheKiB
        o.mmapMiB = try args.int("mmap-mib") ?? o.mmapMiB
        guard (0...4_096).contains(o.mmapMiB) else { throw UsageError("--mmap-mib must be 0...4096") }
        guard (64...1_048_576).contains(o.cacheKiB) else { throw UsageError("--cache-kib must be 64...1048576") }
        if let n = o.samples, !(0...PageFile.maxSamplesPerStroke).contains(n) {
            throw UsageError("--samples must be 0...\(PageFile.maxSamplesPerStroke)")
        }
        o.directory = args.value("dir")
        o.only = args.value("only")
        o.walBufferKiB = try args.int("wal-buffer-kib") ?? o.walBufferKiB
        guard (0...64).contains(o.walBufferKiB) else { throw UsageError("--wal-buffer-kib must be 0...64") }
        guard (1...1_000).contains(o.repetitions) else { throw UsageError("--repetitions must be 1...1000") }
        guard (1...10_000).contains(o.strokes) else { throw UsageError("--strokes must be 1...10000") }
        guard [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536].contains(o.pageSize) else {
            throw UsageError("--page-size must be a power of two from 512 to 65536")
        }
        return o
    }

    static func run(arguments: [String]) async throws {
        if arguments.contains("--by-page-size") { try await SQLiteAppendBench.run(arguments); return }
        if arguments.contains("--help") || arguments.contains("-h") { print(usage); return }
        let options = try parse(arguments)
        let root = try makeRoot(options.directory)
        defer { try? FileManager.default.removeItem(atPath: root) }

        var report: [String: Any] = [
            "sqlite_version": Connection.libraryVersion,
            "repetitions": options.repetitions,
            "strokes": options.strokes,
            "page_size": options.pageSize,
            "cache_kib": options.cacheKiB,
            "mmap_mib": options.mmapMiB,
            "wal_buffer_kib": options.walBufferKiB,
            "directory": root,
        ]
        var variants: [[String: Any]] = []
        for samples in options.samples.map({ [$0] }) ?? [3_400, 2_550] {
            let workload = Workload(strokes: options.strokes, samplesPerStroke: samples)
            // "full"/"normal": the app's steady state (an open store whose WAL already exists and is
            // reused); "..._fresh_db": the first save into a brand-new database and WAL.
            var configs: [(String, SQLiteContentStore.Configuration)] = [
                ("full", config(.full, options.pageSize, options)), ("normal", config(.normal, options.pageSize, options)),
                ("full_fresh_db", config(.full, options.pageSize, options)),
                ("normal_fresh_db", config(.normal, options.pageSize, options)),
                // The same without the WAL write buffer (docs/sqlite-engine.md §6.1), side by side.
                ("full_unbuffered", unbuffered(config(.full, options.pageSize, options))),
                ("full_fresh_db_unbuffered", unbuffered(config(.full, options.pageSize, options))),
                // The same with the WAL's early writeback (off by default; docs/sqlite-engine.md §6.2).
                ("full_writeback", writeback(config(.full, options.pageSize, options))),
                ("full_fresh_db_writeback", writeback(config(.full, options.pageSize, options))),
            ]
            if options.explore {
                configs.append(("full_wal_growing", config(.full, options.pageSize, options)))
                configs.append(("full_after_checkpoint", config(.full, options.pageSize, options)))
                for size in [4_096, 16_384, 32_768, 65_536] where size != options.pageSize {
                    configs.append(("full_page\(size)", config(.full, size, options)))
                }
                var rollback = config(.full, options.pageSize, options)
                rollback.journalMode = .delete
                configs.append(("full_rollback_journal", rollback))
            }
            if let only = options.only {
                let all = configs
                configs = try only.split(separator: ",").map { name in
                    guard let c = all.first(where: { $0.0 == name }) else {
                        throw UsageError("--only: no variant '\(name)' (\(all.map(\.0).joined(separator: ", ")); more with --explore)")
                    }
                    return c
                }
            }
            let result = try measure(workload, configs: configs, repetitions: options.repetitions, root: root)
            variants.append(result)
            if variants.count == 1 {  // the top-level keys are the first (the seed's 3,400-sample) variant
                for key in ["commit_vs_floor_full", "commit_vs_floor_normal", "read_vs_floor",
                            "commit_vs_written_floor_full", "commit_vs_written_floor_full_fresh_db", "written_bytes_full",
                            "commit_vs_written_floor_full_writeback", "commit_vs_written_floor_full_fresh_db_writeback",
                            "load_page_vs_floor", "commit_full_ms", "commit_normal_ms",
                            "commit_vs_floor_full_fresh_db", "commit_vs_floor_normal_fresh_db",
                            "commit_vs_floor_full_unbuffered", "commit_vs_floor_full_fresh_db_unbuffered",
                            "commit_full_vs_floor_overwrite", "floor_overwrite_ms",
                            "floor_write_ms", "read_ms", "load_page_ms", "floor_read_ms",
                            "floor_writev_ms", "commit_full_fresh_db_vs_floor_writev"] {
                    report[key] = result[key]
                }
            }
        }
        report["variants"] = variants

        if options.json {
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            printTable(report, variants: variants)
        }
    }

    static func config(_ sync: SynchronousLevel, _ pageSize: Int, _ options: Options) -> SQLiteContentStore.Configuration {
        var c = SQLiteContentStore.Configuration()
        c.cacheSizeKiB = options.cacheKiB
        c.memoryMapBytes = Int64(options.mmapMiB) << 20
        c.synchronous = sync
        c.pageSize = pageSize
        c.walWriteBufferBytes = options.walBufferKiB << 10
        // The commit and the read-back measure the fixed16 BLOBs a save writes; recoding them at
        // close (docs/sqlite-engine.md §3.3) would change what the read measures.
        c.compactsAtClose = false
        return c
    }

    static func writeback(_ c: SQLiteContentStore.Configuration) -> SQLiteContentStore.Configuration {
        var c = c
        c.walWritebackBytes = 256 << 10
        return c
    }

    static func unbuffered(_ c: SQLiteContentStore.Configuration) -> SQLiteContentStore.Configuration {
        var c = c
        c.walWriteBufferBytes = 0
        return c
    }

    static func makeRoot(_ directory: String?) throws -> String {
        let base = directory ?? FileManager.default.temporaryDirectory.path
        let root = (base as NSString).appendingPathComponent("lnote-bench-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }

    // MARK: The workload

    /// The strokes of one run, and the same bytes as the BLOBs hold.
    struct Workload {
        let elements: [Element]
        let blobs: [[UInt8]]
        let samplesPerStroke: Int
        var bytes: Int { blobs.reduce(0) { $0 + $1.count } }

        init(strokes: Int, samplesPerStroke: Int) {
            self.samplesPerStroke = samplesPerStroke
            var elements: [Element] = []
            var blobs: [[UInt8]] = []
            var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
            func next() -> Int32 {  // xorshift: jitter so the samples are not all alike
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
                return Int32(truncatingIfNeeded: seed % 7) - 3
            }
            for k in 0..<strokes {
                var x = Int32(200 + 40 * (k % 100)), y = Int32(300 + 60 * (k / 10 % 100))
                let samples = (0..<samplesPerStroke).map { i -> Sample in
                    x += 3 + next(); y += (i / 40 % 2 == 0 ? 2 : -2) + next()
                    return Sample(x: x, y: y, radius: UInt16(12 + (i % 9)), pressure: UInt16(300 + (i * 7) % 600), time: UInt32(i * 4))
                }
                let stroke = Stroke(samples: samples)
                var writer = ByteWriter(capacity: samplesPerStroke * 16)
                SampleCodecID.fixed16.encodeSamples(stroke, into: &writer)
                elements.append(.stroke(stroke))
                blobs.append(writer.bytes)
            }
            self.elements = elements
            self.blobs = blobs
        }
    }

    // MARK: Measuring

    /// Wall-clock milliseconds of `body`; the CPU time this thread spent in it is added to `cpu`.
    static func milliseconds(cpu: inout [Double], _ body: () throws -> Void) rethrows -> Double {
        let before = threadCPUms()
        let wall = try milliseconds(body)
        cpu.append(threadCPUms() - before)
        return wall
    }

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let d = try clock.measure(body)
        return Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15
    }

    static func threadCPUms() -> Double { threadCPUSeconds() * 1_000 }

    static func measure(_ w: Workload, configs: [(String, SQLiteContentStore.Configuration)], repetitions: Int,
                        root: String) throws -> [String: Any] {
        var floorWrite: [Double] = [], floorRead: [Double] = [], floorOverwrite: [Double] = [], floorWritev: [Double] = []
        var commits = [String: [Double]](), reads: [Double] = [], loads: [Double] = []
        var floorCPU: [Double] = [], commitCPU = [String: [Double]]()
        var walBytes = [String: Int]()
        var breakdown = [String: [String: [Double]]]()
        // Per commit: the bytes it handed to write(2) (the WAL's frames and headers, b-tree pages
        // included), and its time over the write+fsync floor of exactly that many bytes, measured
        // right after it in the same folder.
        var writtenBytes = [String: [Int]](), writtenFloorRatios = [String: [Double]]()
        var run = 0
        for rep in 0..<repetitions {
            // Alternate the order so neither side always runs on a disk the other just flushed.
            var steps: [String] = ["floor"] + configs.map(\.0)
            steps = Array(steps[(rep % steps.count)...] + steps[..<(rep % steps.count)])
            for step in steps {
                run += 1
                let dir = (root as NSString).appendingPathComponent("run\(run)")
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                if step == "floor" {
                    let file = (dir as NSString).appendingPathComponent("floor.bin")
                    floorWrite.append(try milliseconds(cpu: &floorCPU) { try PlainFile.writeAndSync(w.blobs, to: file) })
                    floorRead.append(try milliseconds { _ = try PlainFile.readAll(file) })
                    // The same bytes over the blocks of that existing file, as a reused WAL is.
                    floorOverwrite.append(try milliseconds { try PlainFile.writeAndSync(w.blobs, to: file, overwrite: true) })
                    // All the BLOBs handed to the kernel in one writev: the fewest system calls.
                    let gathered = (dir as NSString).appendingPathComponent("floor-writev.bin")
                    floorWritev.append(try milliseconds { try PlainFile.writevAndSync(w.blobs, to: gathered) })
                    continue
                }
                let configuration = configs.first { $0.0 == step }!.1
                let store = try SQLiteContentStore(path: (dir as NSString).appendingPathComponent(SQLiteContentStore.fileName),
                                                   configuration: configuration)
                let page = UUID()
                try store.replacePage(page, with: PageContent())  // the page row exists before the save
                if !step.contains("_fresh_db"), step != "full_after_checkpoint" {
                    // The steady state of an open document: the connection has saved before (its
                    // page cache is allocated) and its WAL already exists. For "full"/"normal" an
                    // idle checkpoint then a one-stroke save restarted the WAL (paying the restart's
                    // header sync, as the first save after idle does), so the measured save
                    // overwrites WAL blocks the file already has; "full_wal_growing" appends after
                    // the earlier save's frames instead (the file grows, no checkpoint in between).
                    try store.replacePage(UUID(), with: PageContent(elements: w.elements.map(renewed)))
                    if step != "full_wal_growing", configuration.journalMode == .wal {
                        try store.checkpointIdle()
                        try store.replacePage(UUID(), with: PageContent(elements: [renewed(w.elements[0])]))
                    }
                }
                if step == "full_after_checkpoint" {
                    // The first save after an idle checkpoint: the WAL file is allocated already,
                    // but the save restarts it and syncs its header too (two syncs, not one).
                    let earlier = UUID()
                    try store.replacePage(earlier, with: PageContent(elements: w.elements.map(renewed)))
                    try store.checkpointIdle()
                }
                let cpuBefore = threadCPUms()
                let vfsBefore = store.walStatistics()
                let writtenBefore = BytesWritten.sinceStart()
                let commit = try milliseconds {
                    try store.applyChanges(to: page, [.append(w.elements)])
                }
                commits[step, default: []].append(commit)
                // Where the commit's time went: our side (statements, validation and checksums),
                // SQLite's inserts, its COMMIT; and, through the VFS shim (FULL only), the WAL's
                // write(2) calls and syncs and any write of the database file (a checkpoint).
                let b = store.lastSave
                var parts: [String: Double] = [
                    "prepare": Double(b.prepare) / 1e6, "validate_checksum": Double(b.validateAndChecksum) / 1e6,
                    "insert": Double(b.insert) / 1e6, "commit": Double(b.commit) / 1e6,
                ]
                if let v0 = vfsBefore, let v1 = store.walStatistics() {
                    parts["wal_write_syscalls"] = Double(v1.writeNanoseconds - v0.writeNanoseconds) / 1e6
                    parts["wal_sync"] = Double(v1.syncNanoseconds - v0.syncNanoseconds) / 1e6
                    parts["wal_syncs"] = Double(v1.syncs - v0.syncs)
                    parts["wal_frames"] = Double(v1.writeCalls - v0.writeCalls) / 2
                    parts["db_file_writes"] = Double(v1.databaseWrites - v0.databaseWrites)
                    parts["db_file_io"] = Double(v1.databaseNanoseconds - v0.databaseNanoseconds) / 1e6
                    parts["writebacks"] = Double(v1.writebacks - v0.writebacks)
                }
                for (k, v) in parts { breakdown[step, default: [:]][k, default: []].append(v) }
                commitCPU[step, default: []].append(threadCPUms() - cpuBefore)
                if let before = writtenBefore, let after = BytesWritten.sinceStart(), after > before {
                    let written = after - before
                    writtenBytes[step, default: []].append(written)
                    let file = (dir as NSString).appendingPathComponent("floor-written.bin")
                    let floor = try milliseconds { try PlainFile.writeAndSync(PlainFile.chunks(w.blobs, total: written), to: file) }
                    writtenFloorRatios[step, default: []].append(commit / floor)
                }
                walBytes[step] = (try? FileManager.default.attributesOfItem(atPath: store.path + "-wal"))?[.size] as? Int ?? 0
                try store.close()
                if step == "full_fresh_db" {
                    // Reads come from a freshly opened store: nothing in SQLite's cache, the
                    // operating system's cache warm, as for the floor's file.
                    let reader = try SQLiteContentStore(path: store.path, mode: .openExisting, configuration: configuration)
                    reads.append(try milliseconds { _ = try BlobReader.readAll(reader, page: page, expectedBytes: w.bytes) })
                    try reader.close()
                    let loader = try SQLiteContentStore(path: store.path, mode: .openExisting, configuration: configuration)
                    var loaded = PageContent()
                    loads.append(try milliseconds { loaded = try loader.loadPage(page) })
                    guard loaded.elements == w.elements else { throw BenchFailure("the page read back differs from the page written") }
                    try loader.close()
                }
            }
        }
        let floorW = median(floorWrite), floorR = median(floorRead), floorO = median(floorOverwrite)
        var out: [String: Any] = [
            "samples_per_stroke": w.samplesPerStroke,
            "blob_bytes": w.bytes,
            "floor_write_ms": round3(floorW),
            "floor_write_cpu_ms": round3(median(floorCPU)),
            "floor_read_ms": round3(floorR),
            "floor_overwrite_ms": round3(floorO),
            "floor_writev_ms": round3(median(floorWritev)),
        ]
        if !reads.isEmpty {
            out["read_ms"] = round3(median(reads))
            out["load_page_ms"] = round3(median(loads))
            out["read_vs_floor"] = round3(median(reads) / floorR)
            out["load_page_vs_floor"] = round3(median(loads) / floorR)
        }
        for (name, _) in configs {
            let m = median(commits[name]!)
            out["commit_\(name)_ms"] = round3(m)
            out["commit_vs_floor_\(name)"] = round3(m / floorW)
            out["commit_\(name)_cpu_ms"] = round3(median(commitCPU[name]!))
            out["wal_bytes_\(name)"] = walBytes[name]
            if let parts = breakdown[name] {
                out["breakdown_\(name)"] = parts.mapValues { round3(median($0)) }
            }
            if let written = writtenBytes[name], let ratios = writtenFloorRatios[name] {
                out["written_bytes_\(name)"] = written.sorted()[written.count / 2]
                out["commit_vs_written_floor_\(name)"] = round3(median(ratios))
                // The spread of those ratios (quartiles): on a noisy machine the median alone hides it.
                let sorted = ratios.sorted()
                out["commit_vs_written_floor_\(name)_p25"] = round3(sorted[sorted.count / 4])
                out["commit_vs_written_floor_\(name)_p75"] = round3(sorted[(sorted.count * 3) / 4])
            }
        }
        if let full = commits["full"] { out["commit_full_vs_floor_overwrite"] = round3(median(full) / floorO) }
        if let fresh = commits["full_fresh_db"] { out["commit_full_fresh_db_vs_floor_writev"] = round3(median(fresh) / median(floorWritev)) }
        return out
    }

    /// The same element under a new id (for the throwaway saves before a measured one).
    static func renewed(_ element: Element) -> Element {
        guard case .stroke(var s) = element else { return element }
        s.id = UUID()
        return .stroke(s)
    }

    static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    static func printTable(_ report: [String: Any], variants: [[String: Any]]) {
        print("SQLite \(report["sqlite_version"]!), page size \(report["page_size"]!), cache \(report["cache_kib"]!) KiB, mmap \(report["mmap_mib"]!) MiB, WAL buffer \(report["wal_buffer_kib"]!) KiB, medians of \(report["repetitions"]!) runs")
        for v in variants {
            print("\n\(report["strokes"]!) strokes x \(v["samples_per_stroke"]!) samples = \(v["blob_bytes"]!) bytes of BLOBs")
            print("  floor: write+fsync \(v["floor_write_ms"]!) ms (CPU \(v["floor_write_cpu_ms"]!) ms), read \(v["floor_read_ms"]!) ms; overwrite+fsync \(v["floor_overwrite_ms"]!) ms (full steady = \(v["commit_full_vs_floor_overwrite"] ?? "-") x); one writev+fsync \(v["floor_writev_ms"]!) ms (full fresh db = \(v["commit_full_fresh_db_vs_floor_writev"] ?? "-") x)")
            for key in v.keys.sorted() where key.hasPrefix("commit_vs_floor_") {
                let name = String(key.dropFirst("commit_vs_floor_".count))
                print("  commit \(name): \(v["commit_\(name)_ms"]!) ms = \(v[key]!) x floor (CPU \(v["commit_\(name)_cpu_ms"]!) ms)"
                      + (v["commit_vs_written_floor_\(name)"].map { "; wrote \(v["written_bytes_\(name)"]!) bytes: \($0) x the write+fsync floor of those bytes (median of ratios; quartiles \(v["commit_vs_written_floor_\(name)_p25"]!)-\(v["commit_vs_written_floor_\(name)_p75"]!))" } ?? ""))
                if let parts = v["breakdown_\(name)"] as? [String: Double] {
                    let order = ["prepare", "validate_checksum", "insert", "commit", "wal_write_syscalls", "wal_sync", "wal_syncs", "wal_frames", "writebacks", "db_file_writes", "db_file_io"]
                    print("    breakdown (medians; ms unless a count): " + order.compactMap { k in parts[k].map { "\(k) \($0)" } }.joined(separator: ", "))
                }
            }
            if v["read_ms"] != nil { print("  read BLOBs: \(v["read_ms"]!) ms = \(v["read_vs_floor"]!) x floor; loadPage: \(v["load_page_ms"]!) ms = \(v["load_page_vs_floor"]!) x floor") }
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Bytes this process has handed to write(2) and its kind so far (`wchar` of /proc/self/io); nil
/// where the kernel does not say (then the bench reports the floor of the BLOB bytes alone).
enum BytesWritten {
    static func sinceStart() -> Int? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
        }
        #endif
        return nil
    }
}

/// The floor: the same bytes in one plain file, written and fsynced, then read back.
enum PlainFile {
    /// `total` bytes as chunks: the BLOBs first (cut short, or followed by one chunk of filler).
    static func chunks(_ blobs: [[UInt8]], total: Int) -> [[UInt8]] {
        var out: [[UInt8]] = [], left = total
        for blob in blobs where left > 0 {
            out.append(blob.count <= left ? blob : Array(blob.prefix(left)))
            left -= min(blob.count, left)
        }
        if left > 0 { out.append([UInt8](repeating: 0xA5, count: left)) }
        return out
    }

    static func writeAndSync(_ chunks: [[UInt8]], to path: String, overwrite: Bool = false) throws {
        let fd = overwrite ? open(path, O_WRONLY) : open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw BenchFailure("cannot create \(path): errno \(errno)") }
        defer { close(fd) }
        for chunk in chunks {
            try chunk.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 { if errno == EINTR { continue }; throw BenchFailure("write \(path): errno \(errno)") }
                    offset += n
                }
            }
        }
        guard Syscalls.fullSync(fd) == 0 else { throw BenchFailure("fsync \(path): errno \(errno)") }
    }

    /// The same bytes handed over by `writev` (128 BLOBs a call: the seed's 100 in one) to a new
    /// file, then fsync.
    static func writevAndSync(_ chunks: [[UInt8]], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw BenchFailure("cannot create \(path): errno \(errno)") }
        defer { close(fd) }
        // Each BLOB's address is only valid inside its withUnsafeBytes: nest them, 128 deep at most.
        func gather(_ k: Int, end: Int, _ vectors: inout [iovec]) throws {
            guard k < end else {
                let expected = vectors.reduce(0) { $0 + $1.iov_len }
                let n = writev(fd, vectors, Int32(vectors.count))
                guard n == expected else { throw BenchFailure("writev \(path): wrote \(n) of \(expected), errno \(errno)") }
                return
            }
            try chunks[k].withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count))
                try gather(k + 1, end: end, &vectors)
            }
        }
        for start in stride(from: 0, to: chunks.count, by: 128) {
            var vectors: [iovec] = []
            try gather(start, end: min(chunks.count, start + 128), &vectors)
        }
        guard Syscalls.fullSync(fd) == 0 else { throw BenchFailure("fsync \(path): errno \(errno)") }
    }

    static func readAll(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchFailure("cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw BenchFailure("fstat \(path): errno \(errno)") }
        let size = Int(st.st_size)
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var offset = 0
            while offset < size {
                let n = read(fd, buffer.baseAddress! + offset, size - offset)
                if n < 0 { if errno == EINTR { continue }; throw BenchFailure("read \(path): errno \(errno)") }
                if n == 0 { break }
                offset += n
            }
            count = offset
        }
    }
}

/// Reads every stroke BLOB of a page into memory, as the floor reads its file into memory.
enum BlobReader {
    static func readAll(_ store: SQLiteContentStore, page: UUID, expectedBytes: Int) throws -> [[UInt8]] {
        var blobs: [[UInt8]] = []
        var total = 0
        try store.forEachStrokeBlob(page) { raw in
            // One memcpy, as the floor's read(2) is one copy into its buffer.
            blobs.append([UInt8](unsafeUninitializedCapacity: raw.count) { dst, n in
                if let src = raw.baseAddress { UnsafeMutableRawPointer(dst.baseAddress!).copyMemory(from: src, byteCount: raw.count) }
                n = raw.count
            })
            total += raw.count
        }
        guard total == expectedBytes else { throw BenchFailure("read \(total) bytes of BLOBs, expected \(expectedBytes)") }
        return blobs
    }
}
