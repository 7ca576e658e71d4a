// lnote-dev bench library: what library operations cost as the library grows (issue 34).
//
//   lnote-dev bench library [--sizes 100,1000,10000,50000] [--runs N] [--list-runs N] [--dir DIR] [--json]
//
// At each size, side by side and taking turns:
// - createDocument against the floor: the same files made by hand in the same folder (mkdir, each
//   file written to a temporary file, fsynced, renamed, its folder fsynced; the package fsynced,
//   renamed into place, the root fsynced), as createDocument makes them. Reported: the median
//   create at each size divided by the median at the first size (target at 50k / 100: <= 1.2).
// - Library.list against the floor: the root listed, each manifest read whole and parsed by a
//   minimal JSON parser (strings and numbers built, like a script's json.loads) (target at 10k:
//   <= 1.5).
// - `lnote list --json` run as a child (the lnote built beside lnote-dev), its output thrown away:
//   its peak resident memory from /usr/bin/time (wait4's rusage without it, an upper bound: see
//   childRun) (target at 50k: <= 64 MB).
// The library is grown between sizes on a cheap path, not through createDocument: one document
// made by createDocument, then its files copied under new ids (the id and the modification time
// replaced in its JSON files, same length), written without fsync.

import Foundation
import LulucatStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum LibraryBench {
    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["sizes", "runs", "list-runs", "dir"], flags: ["json"])
        let sizes = try (args.value("sizes") ?? "100,1000,10000,50000").split(separator: ",").map { part -> Int in
            guard let n = Int(part), n > 0 else { throw UsageError("--sizes takes positive counts separated by commas, not '\(part)'") }
            return n
        }
        guard sizes == sizes.sorted(), Set(sizes).count == sizes.count else { throw UsageError("--sizes must grow") }
        let runs = try args.int("runs") ?? 21
        let listRuns = try args.int("list-runs") ?? 5
        guard runs > 0, listRuns > 0 else { throw UsageError("--runs and --list-runs must be positive") }
        let json = args.flag("json")
        func say(_ s: String) { if !json { print(s); fflush(nil) } }
        let base = (args.value("dir") ?? NSTemporaryDirectory()) + "/lnote-bench-library-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let lnote = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("lnote").path
        let haveLnote = FileManager.default.isExecutableFile(atPath: lnote)
        if !haveLnote { say("No lnote beside lnote-dev (\(lnote)): the list --json memory is not measured (swift build -c release --product lnote).") }

        let template = try Template(base: base)
        let root = base + "/library"
        let library = Library(root: root)
        try library.prepare()  // the library's open: its one listing (staging folders), before any timing
        var count = 0
        var rows: [[String: Any]] = []
        var firstCreate: Double?, firstCreateCPU: Double?
        for size in sizes {
            say("Growing the library to \(size) documents (copies of one package, no fsync)...")
            let grow = try measure { while count < size { try template.copy(into: root, modified: count); count += 1 } }
            say("  \(r(grow, 2)) s")

            // Creating: createDocument and the floor, taking turns; what they made is removed after.
            var tCreate: [Double] = [], tFloor: [Double] = [], cCreate: [Double] = [], cFloor: [Double] = [], made: [String] = []
            for _ in 0..<runs {
                var package: DocumentPackage?
                var c0 = threadCPUSeconds()
                tCreate.append(try measure { package = try library.createDocument(title: "Bench document") })
                cCreate.append(threadCPUSeconds() - c0)
                made.append(package!.path)
                c0 = threadCPUSeconds()
                tFloor.append(try measure { made.append(try template.createByHand(in: root)) })
                cFloor.append(threadCPUSeconds() - c0)
            }
            for path in made { try FileManager.default.removeItem(atPath: path) }
            let create = median(tCreate), floor = median(tFloor)
            let createCPU = median(cCreate), floorCPU = median(cFloor)
            if firstCreate == nil { firstCreate = create; firstCreateCPU = createCPU }
            // The open's listing (stale staging folders), once per process: what it costs at this size.
            let tOpen = measure { _ = library.removeStaleStagingFolders() }

            // Listing: Library.list and the plain read of the manifests, taking turns.
            // Wall time and this thread's CPU time (the machine is shared: CPU time is what the
            // listing itself costs, wall time adds waiting for the other processes).
            var tList: [Double] = [], tPlain: [Double] = [], cList: [Double] = [], cPlain: [Double] = []
            var listed = 0, plain = 0
            for _ in 0..<listRuns {
                var c0 = threadCPUSeconds()
                tList.append(try measure { listed = try library.documents().count })
                cList.append(threadCPUSeconds() - c0)
                c0 = threadCPUSeconds()
                tPlain.append(try measure { plain = try plainManifestRead(root) })
                cPlain.append(threadCPUSeconds() - c0)
            }
            guard listed == size, plain == size else { throw UsageError("listed \(listed), read \(plain) manifests; expected \(size)") }
            let list = median(tList), plainRead = median(tPlain)
            let listCPU = median(cList), plainCPU = median(cPlain)

            var row: [String: Any] = [
                "documents": size,
                "create_ms": r(create * 1000), "create_floor_ms": r(floor * 1000),
                "create_vs_first_size": r(create / firstCreate!), "create_vs_floor": r(create / floor),
                "create_cpu_ms": r(createCPU * 1000), "create_floor_cpu_ms": r(floorCPU * 1000),
                "create_cpu_vs_first_size": r(createCPU / firstCreateCPU!),
                "open_staging_clean_ms": r(tOpen * 1000),
                "list_ms": r(list * 1000), "plain_manifest_read_ms": r(plainRead * 1000),
                "list_vs_plain_read": r(list / plainRead), "list_us_per_document": r(list / Double(size) * 1e6, 2),
                "list_cpu_ms": r(listCPU * 1000), "plain_manifest_read_cpu_ms": r(plainCPU * 1000),
                "list_cpu_vs_plain_read_cpu": r(listCPU / plainCPU),
            ]
            say("""
              createDocument           \(r(create * 1000)) ms   (floor, same files by hand: \(r(floor * 1000)) ms; x\(r(create / floor)))
                CPU                    \(r(createCPU * 1000)) ms   (floor \(r(floorCPU * 1000)) ms)
              create / create at \(sizes[0])     \(r(create / firstCreate!))   (CPU: \(r(createCPU / firstCreateCPU!)))
              open's staging clean     \(r(tOpen * 1000)) ms (once per process)
              Library.list             \(r(list * 1000)) ms   (\(r(list / Double(size) * 1e6, 2)) us per document; CPU \(r(listCPU * 1000)) ms)
              plain manifest read      \(r(plainRead * 1000)) ms   (CPU \(r(plainCPU * 1000)) ms)
              list / plain read        \(r(list / plainRead))   (CPU: \(r(listCPU / plainCPU)))
            """)
            if haveLnote {
                let child = try childRun(lnote, ["list", "--json", "--library", root])
                guard child.status == 0 else { throw UsageError("lnote list --json failed (status \(child.status))") }
                row["list_json_peak_rss_mb"] = r(child.peakMB, 1)
                row["list_json_seconds"] = r(child.seconds)
                say("  lnote list --json        peak RSS \(r(child.peakMB, 1)) MB, \(r(child.seconds)) s")
            }
            rows.append(row)
        }
        if json {
            printJSON(["runs": runs, "list_runs": listRuns, "sizes": rows,
                       "targets": ["create_50000_vs_100": 1.2, "list_vs_plain_read_10000": 1.5, "list_json_peak_rss_mb_50000": 64]])
            return
        }
        print("\nMedians of \(runs) creates and \(listRuns) listings per size. Targets: create at 50000 / at 100 <= 1.2; list / plain read at 10000 <= 1.5; list --json peak at 50000 <= 64 MB.")
    }

    /// One package made by createDocument, kept as files to copy under new ids.
    struct Template {
        var folders: [String]
        /// Relative path and bytes; the JSON files hold `id` and `modified` as text to replace.
        var files: [(String, [UInt8])]
        var id: [UInt8]
        var modified: [UInt8]

        init(base: String) throws {
            let lib = Library(root: base + "/template")
            let package = try lib.createDocument(title: "Bench document")
            let fm = FileManager.default
            folders = []
            files = []
            for relative in try fm.subpathsOfDirectory(atPath: package.path).sorted() {
                let path = package.path + "/" + relative
                var isFolder: ObjCBool = false
                guard fm.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
                if isFolder.boolValue { folders.append(relative) } else { files.append((relative, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))) }
            }
            // Page files first, then document.json, then manifest.json: the order createDocument writes.
            files.sort { a, b in
                func rank(_ p: String) -> Int { p == "manifest.json" ? 2 : p == "document.json" ? 1 : 0 }
                return (rank(a.0), a.0) < (rank(b.0), b.0)
            }
            id = Array(package.id.uuidString.utf8)
            let manifest = String(decoding: files.first { $0.0 == "manifest.json" }!.1, as: UTF8.self)
            guard let key = manifest.range(of: #""modified""#), let open = manifest[key.upperBound...].firstIndex(of: "\""),
                  let time = ISO8601Text.parse(String(manifest[manifest.index(after: open)...].prefix(24))) else {
                throw UsageError("the template manifest has no modified time")
            }
            modified = Array(time.utf8)
        }

        /// The template's files with its id and modification time replaced (same lengths).
        func bytes(_ file: [UInt8], id newID: [UInt8], modified newTime: [UInt8]) -> [UInt8] {
            var out = file
            for (old, new) in [(id, newID), (modified, newTime)] {
                var i = 0
                while i + old.count <= out.count {
                    if out[i] == old[0], Array(out[i..<i + old.count]) == old { out.replaceSubrange(i..<i + old.count, with: new); i += old.count } else { i += 1 }
                }
            }
            return out
        }

        /// A time 1 ms apart per document (2026-06-01 plus k ms, within a day for k < 86,400,000),
        /// so the listing sorts real times.
        static func time(_ k: Int) -> [UInt8] {
            let ms = k % 1000, s = k / 1000
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            let frac = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
            return Array("2026-06-01T\(two(s / 3600 % 24)):\(two(s / 60 % 60)):\(two(s % 60)).\(frac)Z".utf8)
        }

        /// The cheap copy: folders made, files written without fsync.
        func copy(into root: String, modified k: Int) throws {
            let newID = UUID()
            let path = root + "/" + newID.uuidString + ".lnote"
            try makeFolder(path)
            for f in folders { try makeFolder(path + "/" + f) }
            let time = Template.time(k)
            for (relative, content) in files {
                try writeFile(path + "/" + relative, relative.hasSuffix(".json") ? bytes(content, id: Array(newID.uuidString.utf8), modified: time) : content, sync: false)
            }
        }

        /// The floor of createDocument: the same files made durably by hand, as it makes them.
        func createByHand(in root: String) throws -> String {
            let newID = UUID()
            let staging = root + "/.floor-" + newID.uuidString
            let final = root + "/" + newID.uuidString + ".lnote"
            try makeFolder(staging)
            for f in folders { try makeFolder(staging + "/" + f) }
            let time = Template.time(0)
            for (relative, content) in files {
                let target = staging + "/" + relative
                let temp = (target as NSString).deletingLastPathComponent + "/.tmp-" + (relative as NSString).lastPathComponent
                try writeFile(temp, relative.hasSuffix(".json") ? bytes(content, id: Array(newID.uuidString.utf8), modified: time) : content, sync: true)
                guard rename(temp, target) == 0 else { throw UsageError("rename: errno \(errno)") }
                try syncFolder((target as NSString).deletingLastPathComponent)
            }
            try syncFolder(staging)
            guard rename(staging, final) == 0 else { throw UsageError("rename: errno \(errno)") }
            try syncFolder(root)
            return final
        }
    }

    static func makeFolder(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else { throw UsageError("mkdir \(path): errno \(errno)") }
    }

    static func writeFile(_ path: String, _ bytes: [UInt8], sync: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw UsageError("open \(path): errno \(errno)") }
        defer { close(fd) }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { throw UsageError("write \(path): errno \(errno)") }
        if sync { guard fsync(fd) == 0 else { throw UsageError("fsync \(path): errno \(errno)") } }
    }

    static func syncFolder(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError("open \(path): errno \(errno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw UsageError("fsync \(path): errno \(errno)") }
    }

    /// The template's time as written: `YYYY-MM-DDTHH:MM:SS.mmmZ`, 24 characters.
    enum ISO8601Text {
        static func parse(_ s: String) -> String? {
            let u = Array(s.utf8)
            return u.count == 24 && u[10] == 0x54 && u[23] == 0x5A ? s : nil
        }
    }

    // MARK: The listing's floor

    /// The plain read: the root listed, every `*.lnote/manifest.json` read whole and parsed by a
    /// minimal JSON parser. Returns how many manifests parsed as objects.
    static func plainManifestRead(_ root: String) throws -> Int {
        guard let dir = opendir(root) else { throw UsageError("opendir \(root): errno \(errno)") }
        defer { closedir(dir) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var parsed = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name.hasSuffix(".lnote"), !name.hasPrefix(".") else { continue }
            let fd = open(root + "/" + name + "/manifest.json", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var size = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + size, $0.count - size) }
                if n <= 0 { break }
                size += n
                if size == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            }
            close(fd)
            var parser = MinimalJSON(bytes: buffer, end: size)
            if case .object? = parser.value() { parsed += 1 }
        }
        return parsed
    }

    /// A minimal JSON parser: values built (strings decoded, numbers converted), no checks beyond
    /// what parsing needs; an object is its pairs in order.
    enum JSONValue {
        case string(String), number(Double), bool(Bool), null
        case array([JSONValue]), object([(String, JSONValue)])
    }

    struct MinimalJSON {
        let bytes: [UInt8]
        let end: Int
        var i = 0
        init(bytes: [UInt8], end: Int) { self.bytes = bytes; self.end = end }

        mutating func space() { while i < end, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 } }

        mutating func value() -> JSONValue? {
            space()
            guard i < end else { return nil }
            switch bytes[i] {
            case 0x7B:
                i += 1
                var pairs: [(String, JSONValue)] = []
                space()
                if i < end, bytes[i] == 0x7D { i += 1; return .object(pairs) }
                while true {
                    space()
                    guard case .string(let key)? = value() else { return nil }
                    space()
                    guard i < end, bytes[i] == 0x3A else { return nil }
                    i += 1
                    guard let v = value() else { return nil }
                    pairs.append((key, v))
                    space()
                    guard i < end else { return nil }
                    if bytes[i] == 0x2C { i += 1; continue }
                    guard bytes[i] == 0x7D else { return nil }
                    i += 1
                    return .object(pairs)
                }
            case 0x5B:
                i += 1
                var items: [JSONValue] = []
                space()
                if i < end, bytes[i] == 0x5D { i += 1; return .array(items) }
                while true {
                    guard let v = value() else { return nil }
                    items.append(v)
                    space()
                    guard i < end else { return nil }
                    if bytes[i] == 0x2C { i += 1; continue }
                    guard bytes[i] == 0x5D else { return nil }
                    i += 1
                    return .array(items)
                }
            case 0x22:
                i += 1
                let start = i
                var escaped = false
                while i < end, bytes[i] != 0x22 {
                    if bytes[i] == 0x5C { escaped = true; i += 1 }
                    i += 1
                }
                guard i < end else { return nil }
                var s = String(decoding: bytes[start..<i], as: UTF8.self)
                if escaped { s = s.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\") }
                i += 1
                return .string(s)
            case 0x74: i += 4; return .bool(true)
            case 0x66: i += 5; return .bool(false)
            case 0x6E: i += 4; return .null
            default:
                let start = i
                while i < end, (bytes[i] >= 0x30 && bytes[i] <= 0x39) || bytes[i] == 0x2D || bytes[i] == 0x2E || bytes[i] == 0x65 || bytes[i] == 0x45 || bytes[i] == 0x2B { i += 1 }
                guard i > start, let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
                return .number(d)
            }
        }
    }

    // MARK: A child's peak memory

    /// Runs `exe` with its standard output thrown away; its peak resident memory (MB) and its
    /// wall time. The peak is /usr/bin/time's (%M), where there is one: the rusage of a child
    /// this process spawns directly counts this process's own peak too (posix_spawn's child
    /// shares this process's memory until its exec, and Linux keeps that memory's high-water
    /// mark as the child's), while /usr/bin/time's child is forked from a small process. Without
    /// /usr/bin/time, wait4's figure is given: an upper bound.
    static func childRun(_ exe: String, _ arguments: [String]) throws -> (peakMB: Double, seconds: Double, status: Int32) {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { return try spawnRun(exe, arguments, stderrTo: nil) }
        let report = NSTemporaryDirectory() + "/lnote-bench-library-time-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: report) }
        let run = try spawnRun(time, ["-f", "%M", "-o", report, exe] + arguments, stderrTo: nil)
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        guard let kb = text.split(separator: "\n").compactMap({ Double($0.trimmingCharacters(in: .whitespaces)) }).last else {
            throw UsageError("/usr/bin/time reported no peak: \(text)")
        }
        return (kb / 1024, run.seconds, run.status)
    }

    /// posix_spawn and wait4: the rusage's peak (see `childRun`), the wall time, the exit status.
    static func spawnRun(_ exe: String, _ arguments: [String], stderrTo: String?) throws -> (peakMB: Double, seconds: Double, status: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let stderrTo { posix_spawn_file_actions_addopen(&actions, 2, stderrTo, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([exe] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        var status: Int32 = 0
        var usage = rusage()
        let seconds = try measure {
            let rc = posix_spawn(&pid, exe, &actions, nil, argv, environ)
            guard rc == 0 else { throw UsageError("posix_spawn \(exe): error \(rc)") }
            while wait4(pid, &status, 0, &usage) == -1 {
                guard errno == EINTR else { throw UsageError("wait4: errno \(errno)") }
            }
        }
        #if canImport(Darwin)
        let peak = Double(usage.ru_maxrss) / 1_048_576  // bytes on Darwin
        #else
        let peak = Double(usage.ru_maxrss) / 1024  // kilobytes on Linux
        #endif
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (peak, seconds, exit)
    }
}
