// lnote-dev bench save: saving one dirty page against the plain-file floor, by page size and by
// notebook length (BenchSaveScaling.swift); listing a large library; opening a large page.

import Foundation
import LulucatInk
import LulucatStore
import LulucatStoreTesting
import LulucatHandwriting
#if canImport(Glibc)
import Glibc
#endif

enum SaveBench {
    static let help = """
        lnote-dev bench save [OPTIONS]

        One new stroke, then save(), snapshot engine, against the plain-file floor (the same number
        of bytes written to a new file, synced, renamed over a file of the same size, the directory
        synced), the two taking turns in the same run; ratios are medians of the per-pair ratios.
        By page size (a 2-page notebook) and by notebook length; then listing a library and opening
        a page.
        \(SaveScaling.Options.help)
          --strokes N            strokes of the page opened by the open probe (default 2000)
          --documents N          documents of the listed library (default 1000; 0 skips the listing)
        """

    static func run(_ arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: SaveScaling.Options.valued.union(["strokes", "documents", "dir"]), flags: ["json"])
        let options = try SaveScaling.Options(args)
        let runs = options.runs
        let strokes = try args.int("strokes") ?? 2000
        let documents = try args.int("documents") ?? 1000
        guard strokes > 0, documents >= 0 else { throw UsageError("--strokes must be positive, --documents not negative") }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-save-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s) } }

        say("One stroke then save(), snapshot engine, against the floor, \(runs) pairs a document:")
        let (bySize, byLength) = try await SaveScaling.run(engine: .snapshot, floor: .rewrite, options: options, base: base + "/scaling", say: say)

        // Opening a page: read and decode, in a fresh process so its peak memory is its own.
        let generator = HandwritingGenerator(seed: 2026)
        let page = generator.page(strokes: strokes, canvas: .letter)
        let library = Library(root: base + "/library")
        let package = try await library.createDocument(title: "Open probe")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let probePage = await session.pageIDs()[0]
        try await session.append(page.elements, to: probePage)
        try await session.close()
        let probe = try openProbeInChild(package: package.path, page: probePage, runs: max(5, runs))

        var tList: [Double] = []
        var filesPerDocument = 0.0
        if documents > 0 {
            say("Creating a \(documents)-document library...")
            let listLibrary = Library(root: base + "/list")
            for i in 0..<documents { try await listLibrary.createDocument(title: "Document \(i)") }
            let counting = CountingFileSystem()
            let countedLibrary = Library(root: listLibrary.root, fileSystem: counting)
            for _ in 0..<max(5, runs / 2) {
                counting.reset()
                tList.append(try measure { _ = try countedLibrary.documents() })
            }
            filesPerDocument = Double(counting.readOpens.count) / Double(documents)
        }

        let worst = (bySize + byLength).map(\.ratio).max() ?? .nan
        let result: [String: Any] = [
            "runs": runs,
            "by_page_size": bySize.map(\.json),
            "by_notebook_length": byLength.map(\.json),
            "worst_save_vs_floor": r(worst, 3),
            "list_documents": documents,
            "list_ms": documents > 0 ? r(median(tList) * 1000) : NSNull(),
            "list_files_per_document": r(filesPerDocument),
            "open_page_strokes": strokes, "open_page_samples": page.sampleCount,
            "open_page_ms": r(probe.openMS),
            "open_page_cpu_ms": r(probe.cpuMS),
            "open_page_peak_rss_mb": r(probe.peakMB, 1),
            "open_page_rss_growth_mb": r(probe.growthMB, 1),
            "crc32c_hardware": CRC32C.usesHardware,
        ]
        if json { printJSON(result); return }
        print("")
        SaveScaling.report("By page size (2-page notebook), medians of \(runs); ratio = median of save/floor pairs (target <= 1.3):", bySize, say: say)
        SaveScaling.report("By notebook length (\(options.lengthStrokes)-stroke page):", byLength, say: say)
        print("""
          worst save_vs_floor            \(r(worst, 3))
        Listing a \(documents)-document library:
          list_ms                        \(documents > 0 ? "\(r(median(tList) * 1000)) ms" : "skipped")
          list_files_per_document        \(r(filesPerDocument))
        Opening a \(strokes)-stroke page (read + decode), in a fresh process:
          open_page_ms                   \(r(probe.openMS)) ms   (one 120 Hz frame is 8.3 ms; CPU \(r(probe.cpuMS)) ms)
          open_page_peak_rss_mb          \(r(probe.peakMB, 1)) MB (grew \(r(probe.growthMB, 1)) MB during the opens)
        """)
    }

    /// The floor: write bytes to a new file, fsync, rename over the target, fsync the directory.
    static func floorWrite(_ bytes: [UInt8], dir: String) throws {
        let temp = dir + "/floor.tmp", target = dir + "/floor.content"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError("open", path: temp, errno: errno) }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count, Syscalls.fullSync(fd) == 0 else { close(fd); throw FileError("write", path: temp, errno: errno) }
        close(fd)
        guard rename(temp, target) == 0 else { throw FileError("rename", path: temp, errno: errno) }
        let d = open(dir, O_RDONLY | O_DIRECTORY)
        guard d >= 0 else { throw FileError("open", path: dir, errno: errno) }
        _ = Syscalls.fullSync(d)
        close(d)
    }

    struct Probe { var openMS: Double; var peakMB: Double; var growthMB: Double; var cpuMS: Double }

    /// Runs `lnote-dev bench _open` in a child process and reads its figures.
    static func openProbeInChild(package: String, page: UUID, runs: Int) throws -> Probe {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0]
                              : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0])
        p.arguments = ["bench", "_open", package, page.uuidString, String(runs)]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard p.terminationStatus == 0, parts.count == 4 else { throw UsageError("the open probe failed") }
        return Probe(openMS: parts[0], peakMB: parts[1], growthMB: parts[2], cpuMS: parts[3])
    }

    /// `lnote-dev bench _open PACKAGE PAGE RUNS`: prints median open ms, peak RSS MB, RSS growth MB.
    static func openProbe(_ arguments: [String]) async throws {
        guard arguments.count == 3, let page = UUID(uuidString: arguments[1]), let runs = Int(arguments[2]) else {
            throw UsageError("_open PACKAGE PAGE RUNS")
        }
        let package = try DocumentPackage(path: arguments[0])
        let before = residentMemoryMB()?.peak ?? 0
        var times: [Double] = [], cpu: [Double] = []
        var elements = 0
        for _ in 0..<runs {
            let c0 = threadCPUSeconds()
            times.append(try measure { elements += try SnapshotEngine.readSnapshot(package.pagePath(page), page: page, fileSystem: PosixFileSystem()).elements.count })
            cpu.append(threadCPUSeconds() - c0)
        }
        let peak = residentMemoryMB()?.peak ?? 0
        print("\(median(times) * 1000) \(peak) \(peak - before) \(median(cpu) * 1000)")
        _ = elements
    }
}
