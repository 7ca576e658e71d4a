// lnote-dev bench sync: the sync bench of issue 16, against a local Apache with mod_dav that it
// starts on 127.0.0.1 (LulucatSyncTestSupport). Release build:
//   swift build -c release --product lnote-dev
//   .build/release/lnote-dev bench sync [--rounds N] [--documents N] [--strokes N] [--samples N] [--pairs N] [--seed S]
//                                       [--only pages|many|rounds|link] [--server apache|nginx|lighttpd|rclone] [--trace] [--why]
//   --only link: the round over a real link, through a LinkRelay (BenchSyncLink.swift).
//   --server: the idle round (many) and the randomized rounds through that server (WebDAVServer).
//   --only many: the idle round at 100, 1,000, ... up to --documents (default 10,000) documents, against
//   one PROPFIND of the heads plus Library.list, taking turns (--pairs pairs, default 9), with memory.
//   .build/release/lnote-dev bench sync --encrypted [--runs N]: encrypted ÷ plain time (BenchSyncEncrypted.swift)

import Foundation
import LulucatHandwriting
import LulucatInk
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport
import LnoteCommandLine

enum SyncBench {
    /// The bench's own arguments (after `bench sync`), set once by `run`.
    nonisolated(unsafe) static var arguments: [String] = []

    /// SplitMix64, seeded (LulucatHandwriting's: the same sequence the bench always drew).
    typealias Rng = SeededRandom

    /// A smooth, evenly sampled stroke (what the compact codec is made for).
    static func stroke(_ rng: inout Rng, samples n: Int) -> Stroke {
        var x = Double(Int.random(in: 200...5800, using: &rng)), y = Double(Int.random(in: 200...7600, using: &rng))
        var angle = Double.random(in: 0..<(2 * .pi), using: &rng)
        var s: [Sample] = []
        s.reserveCapacity(n)
        for i in 0..<n {
            angle += Double.random(in: -0.15...0.15, using: &rng)
            x += cos(angle) * 6
            y += sin(angle) * 6
            s.append(Sample(x: Int32(x), y: Int32(y), radius: UInt16(10 + (i % 7)), pressure: UInt16(400 + (i % 50)), time: UInt32(i * 4)))
        }
        return Stroke(samples: s)
    }

    /// A line on stdout, unbuffered: a long run shows its figures as they come.
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func arg(_ name: String, _ def: Int) -> Int {
        let a = arguments
        if let i = a.firstIndex(of: "--" + name), i + 1 < a.count, let v = Int(a[i + 1]) { return v }
        return def
    }

    /// Every folder the bench made, removed when it ends.
    nonisolated(unsafe) static var madeFolders: [String] = []

    static func tempDir(_ label: String) -> String {
        let p = NSTemporaryDirectory() + "lulucat-syncbench-\(label)-" + UUID().uuidString.prefix(8)
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        madeFolders.append(p)
        return p
    }

    static func removeFolders() { for p in madeFolders { try? FileManager.default.removeItem(atPath: p) } }

    static let quiet = SessionOptions(autosaveDelay: nil, thumbnails: nil)
    /// No round deadline: a first round pushes up to 10,000 documents.
    static let options: SyncOptions = {
        var o = SyncOptions(trashLimit: 1000, session: quiet)
        o.roundDeadline = nil
        return o
    }()

    static func withSession<T>(_ lib: Library, _ id: UUID, _ body: (DocumentSession) async throws -> T) async throws -> T {
        let s = try await lib.open(id, options: quiet)
        do { let r = try await body(s); try await s.close(); return r } catch { await s.abandon(); throw error }
    }

    static func contents(_ lib: Library) async throws -> [UUID: (String, [UUID], [[UUID]])] {
        var out: [UUID: (String, [UUID], [[UUID]])] = [:]
        for e in try await lib.documents() {
            out[e.id] = try await withSession(lib, e.id) { s in
                var els: [[UUID]] = []
                for p in await s.pageIDs() { els.append(try await s.content(of: p).elements.map(\.id)) }
                return (await s.title, await s.pageIDs(), els)
            }
        }
        return out
    }

    static func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }

    // MARK: Randomized rounds with three libraries and faults

    struct Ledger { var added = Set<UUID>(); var erased = Set<UUID>(); var removedWithPage = Set<UUID>() }

    static func randomEdits(_ lib: Library, _ doc: UUID, _ rng: inout Rng, _ ledger: inout Ledger) async throws {
        var r = rng
        var l = ledger
        try await withSession(lib, doc) { s in
            for _ in 0..<Int.random(in: 0...3, using: &r) {
                let pages = await s.pageIDs()
                switch Int.random(in: 0..<10, using: &r) {
                case 0...4:
                    let st = stroke(&r, samples: 30)
                    try await s.append(st, to: pages.randomElement(using: &r)!)
                    l.added.insert(st.id)
                case 5, 6:
                    let p = pages.randomElement(using: &r)!
                    let els = try await s.content(of: p).strokes
                    guard let victim = els.randomElement(using: &r) else { continue }
                    let n = victim.samples.count
                    let pieces = try await s.erase(stroke: victim.id, keeping: [0..<min(n, n / 3), min(n, 2 * n / 3 + 1)..<n], on: p)
                    l.erased.insert(victim.id)
                    l.added.formUnion(pieces)
                case 7: _ = try await s.addPage(at: Int.random(in: 0...pages.count, using: &r))
                case 8 where pages.count > 2:
                    if Bool.random(using: &r) {
                        let p = pages.randomElement(using: &r)!
                        // Half the time a stroke is erased on the page first, in the same round:
                        // the erased stroke must not come back when another library's edit brings
                        // the page back (issue 31).
                        if Bool.random(using: &r), let victim = try await s.content(of: p).strokes.randomElement(using: &r) {
                            let n = victim.samples.count
                            l.added.formUnion(try await s.erase(stroke: victim.id, keeping: [0..<min(n, n / 2)], on: p))
                            l.erased.insert(victim.id)
                        }
                        l.removedWithPage.formUnion(try await s.content(of: p).elements.map(\.id))
                        try await s.removePage(p)
                    } else {
                        try await s.movePage(pages.randomElement(using: &r)!, to: Int.random(in: 0..<pages.count, using: &r))
                    }
                default: try await s.rename(to: "Title \(r.next() % 1000)")
                }
            }
        }
        rng = r
        ledger = l
    }

    static func randomizedRounds(_ server: any StartedWebDAVServer, rounds: Int, seed: UInt64) async throws {
        var rng = Rng(seed: seed)
        let libs = (0..<3).map { Library(root: tempDir("r\($0)")) }
        let proxies = try (0..<3).map { _ in try FaultProxy(upstreamPort: server.port) }
        defer { proxies.forEach { $0.stop() } }
        let faulty: [any Remote] = try proxies.map { try WebDAVRemote(url: $0.url, credentials: nil, timeout: 10) }
        let direct: [any Remote] = try (0..<3).map { _ in try WebDAVRemote(url: server.url, credentials: nil, timeout: 10) }
        let doc = try await libs[0].createDocument(title: "Shared").id
        for _ in 0..<2 { for i in 0..<3 { _ = try await libs[i].sync(with: direct[i], options: options) } }
        var ledger = Ledger()
        var faults = 0, skippedRounds = 0
        var reasons: [String: Int] = [:]
        var round = 0
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<rounds {
            for i in 0..<3 where (try? await libs[i].documents().contains { $0.id == doc }) == true {
                try await randomEdits(libs[i], doc, &rng, &ledger)
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let kinds: [FaultProxy.Fault] = [.cutUpload, .dropReplyAfterCommit, .redirect307]
                proxies[Int.random(in: 0..<3, using: &rng)].inject(kinds.randomElement(using: &rng)!, method: "PUT",
                                                                    pathContains: Bool.random(using: &rng) ? "/heads/" : "/blobs/")
                faults += 1
            }
            async let a = libs[0].sync(with: faulty[0], options: options)
            async let b = libs[1].sync(with: faulty[1], options: options)
            async let c = libs[2].sync(with: faulty[2], options: options)
            let rs = try await [a, b, c]
            if rs.contains(where: { !$0.skipped.isEmpty }) { skippedRounds += 1 }
            if arguments.contains("--trace") {
                for (i, r) in rs.enumerated() { for m in Array(r.skipped.values) + r.problems { say("round \(round) lib \(i) (\(libs[i].root.suffix(8))): \(m.prefix(200))") } }
            }
            round += 1
            for r in rs { for m in r.skipped.values.map({ String($0.prefix(160)) }) + r.problems.map({ String($0.prefix(160)) }) { reasons[m, default: 0] += 1 } }
            // Faults not met this round are dropped so that each round's faults stay its own.
            for p in proxies { while p.pendingFaults > 0 { p.clearFaults() } }
        }
        let elapsed = clock.now - start
        if arguments.contains("--why") {
            for (m, n) in reasons.sorted(by: { $0.value > $1.value }).prefix(8) { say("  \(n)x \(m)") }
        }
        for _ in 0..<3 { for i in 0..<3 { _ = try await libs[i].sync(with: direct[i], options: options) } }
        let c0 = try await contents(libs[0])
        var converged = true
        for l in libs.dropFirst() {
            let c = try await contents(l)
            if c.keys.sorted(by: { $0.uuidString < $1.uuidString }) != c0.keys.sorted(by: { $0.uuidString < $1.uuidString }) { converged = false; continue }
            for (k, v) in c where v.0 != c0[k]!.0 || v.1 != c0[k]!.1 || v.2 != c0[k]!.2 { converged = false }
        }
        let present = Set(c0.values.flatMap { $0.2.joined() })
        let lost = ledger.added.subtracting(ledger.erased).subtracting(ledger.removedWithPage).subtracting(present).count
        let resurrected = ledger.erased.intersection(present).count
        say("randomized rounds: \(rounds) rounds of 3 libraries syncing at once, \(faults) faults injected (\(skippedRounds) rounds met one): "
              + "\(ledger.added.count) strokes added, \(ledger.erased.count) erased; lost \(lost), resurrected \(resurrected), converged \(converged ? "yes" : "NO") "
              + "(\(String(format: "%.0f", ms(elapsed) / Double(max(rounds, 1)))) ms a round)")
    }

    // MARK: Requests in a round where nothing changed

    /// The idle round (nothing changed anywhere) at each library size up to `documents`, against
    /// its floor measured in the same run, taking turns: one `PROPFIND` of the heads folder plus
    /// `Library.documents()`. Memory: the resident set after each round (flat across rounds means the
    /// round keeps nothing), and the peak during the rounds over the resident set before them.
    static func noChangeRound(_ server: any StartedWebDAVServer, documents: Int) async throws {
        var sizes = [100, 1000, 10_000, 50_000].filter { $0 < documents }
        sizes.append(documents)
        let rounds = arg("pairs", 9)
        for n in sizes {
            let lib = Library(root: tempDir("many\(n)"))
            for i in 0..<n { try await lib.createDocument(title: "Doc \(i)") }
            let remote = try WebDAVRemote(url: server.url.appendingPathComponent("many\(n)/"), credentials: nil, timeout: 120)
            try await remote.makeFolder("")
            _ = try await lib.sync(with: remote, options: options)
            _ = try await lib.sync(with: remote, options: options)
            // A server that lists no ETag gives a head's change token once it is 2 s old
            // (docs/sync.md §9): wait for the tokens (bounded), then one round records them.
            for _ in 0..<100 where try await remote.list("heads").contains(where: { $0.etag == nil }) { try await Task.sleep(for: .milliseconds(100)) }
            _ = try await lib.sync(with: remote, options: options)
            let clock = ContinuousClock()
            var times: [Double] = [], floors: [Double] = [], ratios: [Double] = [], requests: [Int] = [], resident: [Int] = []
            var sent = 0
            let before = residentBytes(), peakBefore = peakResidentBytes()
            for k in 0..<rounds {
                // Taking turns: the round first in even pairs, the floor first in odd ones.
                var round = 0.0, floor = 0.0
                for first in [k % 2 == 0, k % 2 != 0] {
                    let t0 = clock.now
                    if first {
                        let r = try await lib.sync(with: remote, options: options)
                        round = ms(clock.now - t0)
                        requests.append(r.requests)
                        sent = r.bytesSent
                        resident.append(residentBytes())
                    } else {
                        _ = try await remote.list("heads")
                        _ = try await lib.documents()
                        floor = ms(clock.now - t0)
                    }
                }
                times.append(round); floors.append(floor); ratios.append(round / floor)
            }
            let peak = max(0, peakResidentBytes() - peakBefore)
            let mb = { (b: Int) in String(format: "%.1f", Double(b) / 1_048_576) }
            say("nothing changed, \(n) documents, \(rounds) rounds: requests \(requests.map(String.init).joined(separator: ", ")), \(sent) bytes sent a round; "
                  + "round \(spread(times)) ms, floor (PROPFIND + Library.list) \(spread(floors)) ms, median of the pairs' ratios \(spread(ratios, 2)); "
                  + "resident MB before \(mb(before)), after each round \(resident.map(mb).joined(separator: " ")), peak growth \(mb(peak))")
            try? FileManager.default.removeItem(atPath: lib.root)
        }
    }

    /// The q-quantile (0.25, 0.5, 0.75) by linear interpolation between the sorted values.
    static func quantile(_ v: [Double], _ q: Double) -> Double {
        let s = v.sorted()
        guard !s.isEmpty else { return 0 }
        let x = q * Double(s.count - 1)
        let i = Int(x.rounded(.down)), f = x - Double(i)
        return i + 1 < s.count ? s[i] + f * (s[i + 1] - s[i]) : s[i]
    }

    /// A median with its quartiles, as the figures print it.
    static func spread(_ v: [Double], _ digits: Int = 1) -> String {
        let f = "%.\(digits)f"
        return String(format: f, median(v)) + " (p25 " + String(format: f, quantile(v, 0.25)) + ", p75 " + String(format: f, quantile(v, 0.75)) + ")"
    }

    /// This process's resident set, from /proc/self/statm (0 where there is none).
    static func residentBytes() -> Int {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let f = s.split(separator: " ")
        return f.count > 1 ? (Int(f[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// The process's peak resident set so far (getrusage; kilobytes on Linux).
    static func peakResidentBytes() -> Int {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        return Int(u.ru_maxrss) * 1024
    }

    // MARK: Bytes and time for one edited page

    static func oneEditedPage(_ server: ApacheServer, pages: Int, strokes: Int, samples: Int, seed: UInt64) async throws {
        // The round against a plain PUT of the same bytes, paired. (The earlier forms of the round
        // that this bench once ran side by side were retired from the product; their figures are
        // in docs/sync.md §10.1 and §10.2.)
        let variants = ["current"]
        struct Run {
            var lib: Library
            var doc: UUID
            var remote: WebDAVRemote
            var options: SyncOptions
            var rng: Rng
            var ratios: [Double] = [], syncs: [Double] = [], puts: [Double] = []
            var last: (sent: Int, requests: Int, compact: Int) = (0, 0, 0)
            var lastFingerprinted = 0
        }
        var runs: [Run] = []
        for k in variants.indices {
            var rng = Rng(seed: seed)
            let lib = Library(root: tempDir("pages\(pages)-\(k)"))
            let doc = try await lib.createDocument(title: "\(pages) pages").id
            // The edited page is a full handwritten page; the others hold one stroke each (what they
            // hold changes nothing here but the first upload: the head names every page either way).
            try await withSession(lib, doc) { s in
                let first = await s.pageIDs()[0]
                for _ in 0..<strokes { try await s.append(stroke(&rng, samples: samples), to: first) }
                for _ in 1..<pages { let p = try await s.addPage(); try await s.append(stroke(&rng, samples: samples), to: p) }
            }
            let remote = try WebDAVRemote(url: server.url.appendingPathComponent("pages\(pages)-\(k)/"), credentials: nil, timeout: 120)
            try await remote.makeFolder("")
            let o = options
            _ = try await lib.sync(with: remote, options: o)
            runs.append(Run(lib: lib, doc: doc, remote: remote, options: o, rng: rng))
        }
        let plain = try WebDAVRemote(url: server.url, credentials: nil, timeout: 120)
        let clock = ContinuousClock()
        // Paired runs: each edits the page, syncs it, then PUTs as many random bytes as that sync
        // sent, to the same server; the figure is the median of the pairs' ratios (the machine is
        // shared, so one pair says little). The variants take turns, starting with a different one
        // each pair.
        for pair in 0..<arg("pairs", 9) {
            for j in 0..<runs.count {
                let k = (pair + j) % runs.count
                var run = runs[k]
                let compact = try await withSession(run.lib, run.doc) { s -> Int in
                    let p = await s.pageIDs()[0]
                    try await s.append(stroke(&run.rng, samples: samples), to: p)
                    return try PageFile.encode(try await s.content(of: p), codec: .compact).count
                }
                let t0 = clock.now
                let r = try await run.lib.sync(with: run.remote, options: run.options)
                let syncTime = clock.now - t0
                var bytes = [UInt8](repeating: 0, count: r.bytesSent)
                for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: run.rng.next()) }
                let t1 = clock.now
                try await plain.put("plain-\(pages)-\(k)-\(pair)", bytes)
                let putTime = clock.now - t1
                run.syncs.append(ms(syncTime))
                run.puts.append(ms(putTime))
                run.ratios.append(ms(syncTime) / ms(putTime))
                run.last = (r.bytesSent, r.requests, compact)
                run.lastFingerprinted = r.fingerprinted
                runs[k] = run
            }
        }
        for (k, run) in runs.enumerated() {
            let last = run.last
            say("one edited page of a \(pages)-page notebook (\(strokes) strokes of \(samples) samples), \(variants[k]): \(last.sent) bytes sent in \(last.requests) requests "
                  + "/ \(last.compact) bytes compact page = \(String(format: "%.3f", Double(last.sent) / Double(last.compact))); "
                  + "over \(run.ratios.count) paired runs (sync, then a PUT of the same bytes), median sync \(spread(run.syncs)) ms, median PUT "
                  + "\(spread(run.puts)) ms, median of the pairs' ratios \(spread(run.ratios, 2)); fingerprints computed in the last round \(run.lastFingerprinted) "
                  + "(ratios \(run.ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")))")
        }
    }


    // MARK: Main

    static let valued: Set<String> = ["--rounds", "--documents", "--strokes", "--samples", "--pairs", "--seed", "--runs", "--only", "--server",
                                      "--pages", "--small-strokes", "--delay-ms", "--mbit"]
    static let flags: Set<String> = ["--trace", "--why", "--encrypted", "--json"]

    /// Every argument is a known flag, and every count a whole number of at least 1 (a seed, of at least 0).
    static func validate(_ arguments: [String]) throws {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if flags.contains(a) { i += 1; continue }
            guard valued.contains(a) else { throw UsageError("bench sync: unknown argument '\(a)'") }
            guard i + 1 < arguments.count else { throw UsageError("bench sync: \(a) needs a value") }
            let v = arguments[i + 1]
            if a == "--server" {
                guard v == "apache" || WebDAVServer.Kind(rawValue: v) != nil else {
                    throw UsageError("bench sync: --server takes apache, nginx, lighttpd or rclone, not '\(v)'")
                }
            } else if a == "--only" {
                guard ["pages", "many", "rounds", "link"].contains(v) else { throw UsageError("bench sync: --only takes pages, many, rounds or link, not '\(v)'") }
            } else if a == "--seed" {
                guard UInt64(v) != nil else { throw UsageError("bench sync: --seed takes a whole number, not '\(v)'") }
            } else {
                guard let n = Int(v), n >= 1 else { throw UsageError("bench sync: \(a) must be a whole number of at least 1, not '\(v)'") }
            }
            i += 2
        }
    }

    static func run(arguments: [String]) async throws {
        try validate(arguments)
        SyncBench.arguments = arguments
        guard ApacheServer.isAvailable else {
            say("skipped: apache2 with mod_dav is not installed (apt-get install apache2-bin)")
            return
        }
        let server = try ApacheServer()
        defer {
            server.stop()
            removeFolders()
        }
        let seed = arguments.firstIndex(of: "--seed").flatMap { UInt64(arguments[$0 + 1]) } ?? 1
        if arguments.contains("--encrypted") {
            try await encryptedBench(server, runs: arg("runs", 5), strokes: arg("strokes", 1500), samples: arg("samples", 150), seed: seed)
            return
        }
        let only: String? = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        // Only when asked: it runs through a relay that stands for a real link (BenchSyncLink.swift).
        if only == "link" {
            try await linkBench(server, seed: seed)
            return
        }
        if only == nil || only == "pages" {
            try await oneEditedPage(server, pages: 2, strokes: arg("strokes", 1500), samples: arg("samples", 150), seed: seed)
            try await oneEditedPage(server, pages: 200, strokes: arg("strokes", 1500), samples: arg("samples", 150), seed: seed)
        }
        // --server: the idle round and the randomized rounds through another server (the pages
        // figures and the encrypted bench stay on Apache).
        var other: (any StartedWebDAVServer)?
        if let name = arguments.firstIndex(of: "--server").map({ arguments[$0 + 1] }), let kind = WebDAVServer.Kind(rawValue: name) {
            guard kind.isAvailable else { say("skipped: \(kind.missing)"); return }
            other = try WebDAVServer(kind)
            say("server: \(kind)")
        }
        defer { other?.stop() }
        if only == nil || only == "many" { try await noChangeRound(other ?? server, documents: arg("documents", 10_000)) }
        if only == nil || only == "rounds" { try await randomizedRounds(other ?? server, rounds: arg("rounds", 100), seed: seed) }
    }
}
