// lnote-dev bench sync --only link: the sync over a real link (issue 31), through a LinkRelay (20 ms
// each way, 50 Mbit/s, a round trip per new connection) in front of the test Apache. Release build:
//   .build/release/lnote-dev bench sync --only link [--pages N] [--strokes N] [--small-strokes N] [--samples N]
//                                       [--pairs N] [--delay-ms N] [--mbit N] [--seed S] [--json]
// A library holding one notebook of --pages pages (default 200): page 1 a full page of --strokes
// strokes (1,500 of 150 samples: about 254 KB), every other page --small-strokes strokes (23: about
// 3.9 KB). Each figure is the median of the pairs' ratios over --pairs pairs (default 9), the
// round and its floor taking turns (which goes first alternates):
// - one page edited (a stroke added to the small page and its oldest deleted, then the same on the
//   large one): the round, with a new remote (a first connection, as `lnote sync` run once makes
//   it: "cold"; and the same with `.sync/server` removed first, as before it was kept) and with one
//   remote kept across rounds (its connections reused, as an app keeps it: "warm"), ÷ one plain
//   `PUT` of the page file's bytes by a new remote through the same relay;
// - nothing changed: the round ÷ one `PROPFIND` of the heads (cold ÷ a new remote's, warm ÷ the
//   kept remote's), requests and bytes;
// - bytes sent by the one-page round ÷ the page file's size, and the head's size;
// - with rclone installed, `rclone sync` of the same library folder to another folder of the
//   server through the relay: the first sync, one page edited, nothing changed, beside ours.
// - a new device's first pull of the library, beside `rclone copy` of rclone's copy to a new folder.

import Foundation
import LulucatInk
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport

extension SyncBench {
    /// One timed request or round through the relay.
    struct LinkSample {
        var ms: Double
        var requests = 0
        var sent = 0
        var connections = 0
        var wireUp = 0
        var wireDown = 0
    }

    static let rclone: String? = ["/usr/bin/rclone", "/usr/local/bin/rclone"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func linkBench(_ server: ApacheServer, seed: UInt64) async throws {
        let pages = arg("pages", 200), strokes = arg("strokes", 1500), small = arg("small-strokes", 23), samples = arg("samples", 150)
        let pairs = arg("pairs", 9)
        let link = LinkRelay.Link(delay: .milliseconds(arg("delay-ms", 20)), bitsPerSecond: arg("mbit", 50) * 1_000_000)
        let relay = try LinkRelay(upstreamPort: server.port, link: link)
        defer { relay.stop() }
        var json: [String: Any] = ["delayMs": arg("delay-ms", 20), "mbit": arg("mbit", 50), "pages": pages, "pairs": pairs]
        say("link: \(arg("delay-ms", 20)) ms each way, \(arg("mbit", 50)) Mbit/s each direction, a round trip per new connection "
              + "(LinkRelay in front of Apache); a \(pages)-page notebook, \(pairs) pairs")

        // The library: page 0 a full page, the others small.
        var rng = Rng(seed: seed)
        let lib = Library(root: tempDir("link"))
        let doc = try await lib.createDocument(title: "\(pages) pages").id
        try await withSession(lib, doc) { s in
            let first = await s.pageIDs()[0]
            for _ in 0..<strokes { try await s.append(stroke(&rng, samples: samples), to: first) }
            for _ in 1..<max(pages, 2) {
                let p = try await s.addPage()
                for _ in 0..<small { try await s.append(stroke(&rng, samples: samples), to: p) }
            }
        }
        let direct = try WebDAVRemote(url: server.url, credentials: nil, timeout: 120)
        try await direct.makeFolder("link")
        try await direct.makeFolder("floor")
        let folder = "/notes/link/"
        func remote() throws -> WebDAVRemote { try WebDAVRemote(url: relay.url(folder), credentials: nil, timeout: 120) }
        let clock = ContinuousClock()

        func round(_ remote: WebDAVRemote) async throws -> LinkSample {
            relay.resetCounters()
            let t0 = clock.now
            let r = try await lib.sync(with: remote, options: options)
            let t = ms(clock.now - t0)
            guard r.skipped.isEmpty else { throw UsageError("bench sync: the round skipped a document: \(r.skipped)") }
            let c = relay.counters
            return LinkSample(ms: t, requests: r.requests, sent: r.bytesSent, connections: c.connections, wireUp: c.bytesUp, wireDown: c.bytesDown)
        }
        func timedRelay(_ body: () async throws -> Void) async throws -> LinkSample {
            relay.resetCounters()
            let t0 = clock.now
            try await body()
            let t = ms(clock.now - t0)
            let c = relay.counters
            return LinkSample(ms: t, requests: 1, connections: c.connections, wireUp: c.bytesUp, wireDown: c.bytesDown)
        }
        /// `rclone sync` of the library folder (its `.sync/` left out) to /notes/rclone/ through the relay.
        let rcloneFolder = "/notes/rclone/"
        func rcloneSync() throws -> LinkSample {
            try runRclone(["sync", lib.root, ":webdav:", "--webdav-url=" + relay.url(rcloneFolder).absoluteString, "--webdav-vendor=other",
                           "--exclude", "/.sync/**", "--config", "/dev/null", "-q"])
        }
        /// rclone run with `arguments`, timed, its requests counted by the server and its bytes by the relay.
        func runRclone(_ arguments: [String]) throws -> LinkSample {
            let before = server.accessLog().count
            relay.resetCounters()
            let t0 = clock.now
            let p = Process()
            p.executableURL = URL(fileURLWithPath: rclone!)
            p.arguments = arguments
            p.standardOutput = FileHandle.nullDevice
            let err = Pipe()
            p.standardError = err
            try p.run()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let t = ms(clock.now - t0)
            guard p.terminationStatus == 0 else {
                throw UsageError("bench sync: rclone \(arguments[0]) failed (\(p.terminationStatus)): \(String(decoding: errors.prefix(400), as: UTF8.self))")
            }
            let c = relay.counters
            return LinkSample(ms: t, requests: server.accessLog().count - before, connections: c.connections, wireUp: c.bytesUp, wireDown: c.bytesDown)
        }
        func describe(_ s: LinkSample) -> String {
            "\(String(format: "%.1f", s.ms)) ms, \(s.requests) requests, \(s.connections) connections, \(s.wireUp) bytes up"
                + (s.sent > 0 ? " (\(s.sent) in bodies)" : "") + ", \(s.wireDown) down"
        }
        func sampleJSON(_ s: LinkSample) -> [String: Any] {
            ["ms": s.ms, "requests": s.requests, "bodyBytesSent": s.sent, "connections": s.connections, "wireUp": s.wireUp, "wireDown": s.wireDown]
        }

        // The first sync, once each.
        let first = try await round(try remote())
        say("first sync, ours: \(describe(first))")
        json["firstOurs"] = sampleJSON(first)
        var rcloneFirst: LinkSample?
        if rclone != nil {
            try await direct.makeFolder("rclone")
            rcloneFirst = try rcloneSync()
            say("first sync, rclone sync: \(describe(rcloneFirst!))")
            json["firstRclone"] = sampleJSON(rcloneFirst!)
        } else {
            say("rclone is not installed: no rclone figures (apt-get install rclone)")
        }
        // A new device's first pull of the same library (its pages come down four at a time),
        // beside `rclone copy` of rclone's copy back to a new folder through the same relay.
        let newDevice = Library(root: tempDir("link-new-device"))
        relay.resetCounters()
        let pullStart = clock.now
        let pulled = try await newDevice.sync(with: try remote(), options: options)
        let pull = LinkSample(ms: ms(clock.now - pullStart), requests: pulled.requests, sent: pulled.bytesSent,
                              connections: relay.counters.connections, wireUp: relay.counters.bytesUp, wireDown: relay.counters.bytesDown)
        guard pulled.skipped.isEmpty, pulled.pagesPulled >= pages else {
            throw UsageError("bench sync: the new device's pull skipped a document or missed pages: \(pulled)")
        }
        try? FileManager.default.removeItem(atPath: newDevice.root)
        say("first pull on a new device, ours: \(describe(pull)), \(pulled.pagesPulled) pages")
        json["firstPullOurs"] = sampleJSON(pull)
        if rclone != nil {
            let target = tempDir("link-rclone-copy")
            let copy = try runRclone(["copy", ":webdav:", target, "--webdav-url=" + relay.url(rcloneFolder).absoluteString, "--webdav-vendor=other",
                                      "--config", "/dev/null", "-q"])
            try? FileManager.default.removeItem(atPath: target)
            say("first pull on a new device, rclone copy: \(describe(copy))")
            json["firstPullRclone"] = sampleJSON(copy)
        }

        let warm = try remote()
        _ = try await round(warm)

        // One page edited: the small page (index 1), then the large one (index 0).
        let pageIDs = try await withSession(lib, doc) { s in await s.pageIDs() }
        var pageFigures: [[String: Any]] = []
        var lastPageBytes = 0, lastPageRound = LinkSample(ms: 0)
        var rcloneOnePage: [LinkSample] = []
        var ourOnePage: [Double] = []
        for (label, index, target) in [("small", min(1, pageIDs.count - 1), 1.6), ("large", 0, 1.4)] {
            let page = pageIDs[index]
            var cold: [LinkSample] = [], unnamed: [LinkSample] = [], warmRounds: [LinkSample] = [], floors: [LinkSample] = []
            var coldRatios: [Double] = [], unnamedRatios: [Double] = [], warmRatios: [Double] = []
            var pageBytes = 0
            // A stroke added and the oldest one deleted: the page keeps its size across the pairs.
            func edit() async throws -> [UInt8] {
                try await withSession(lib, doc) { s in
                    let oldest = try await s.content(of: page).strokes.first?.id
                    try await s.append(stroke(&rng, samples: samples), to: page)
                    if let oldest { try await s.delete([oldest], from: page) }
                    return try PageFile.encode(try await s.content(of: page), codec: .compact)
                }
            }
            for k in 0..<pairs {
                var c = LinkSample(ms: 0), u = LinkSample(ms: 0), w = LinkSample(ms: 0), f = LinkSample(ms: 0)
                var steps = ["cold", "floor", "warm", "unnamed"]
                steps = Array(steps[(k % 4)...] + steps[..<(k % 4)])
                for step in steps {
                    switch step {
                    case "cold":
                        let bytes = try await edit()
                        pageBytes = bytes.count
                        c = try await round(try remote())
                    case "unnamed":
                        // The same without the server's name recorded by the last round (.sync/server,
                        // docs/sync.md §6): the round before it was kept, side by side.
                        pageBytes = try await edit().count
                        try? FileManager.default.removeItem(atPath: lib.root + "/.sync/server")
                        u = try await round(try remote())
                    case "warm":
                        pageBytes = try await edit().count
                        w = try await round(warm)
                    default:
                        // The floor: the page file's bytes (as they are now), one PUT by a new remote.
                        let bytes = try await withSession(lib, doc) { s in try PageFile.encode(try await s.content(of: page), codec: .compact) }
                        let plain = try WebDAVRemote(url: relay.url("/notes/floor/"), credentials: nil, timeout: 120)
                        f = try await timedRelay { try await plain.put("\(label)-\(k)", bytes) }
                        f.sent = bytes.count
                    }
                }
                cold.append(c); unnamed.append(u); warmRounds.append(w); floors.append(f)
                coldRatios.append(c.ms / f.ms); unnamedRatios.append(u.ms / f.ms); warmRatios.append(w.ms / f.ms)
                if rclone != nil {
                    rcloneOnePage.append(try rcloneSync())
                    ourOnePage.append(c.ms)
                }
            }
            let lastCold = cold.last!
            // The page file as the last floor sent it (edits keep its size within a stroke).
            pageBytes = floors.last!.sent
            say("one page edited (\(label), a \(pageBytes)-byte page file): round (cold) \(spread(cold.map(\.ms))) ms ÷ one PUT of the page's bytes "
                  + "\(spread(floors.map(\.ms))) ms: median of the pairs' ratios \(spread(coldRatios, 2)) (target ≤ \(target)); "
                  + "the round kept its connections (warm) \(spread(warmRounds.map(\.ms))) ms, ratio \(spread(warmRatios, 2)); "
                  + "cold without the server's name recorded \(spread(unnamed.map(\.ms))) ms, ratio \(spread(unnamedRatios, 2)); "
                  + "last cold round: \(describe(lastCold)); last warm round: \(describe(warmRounds.last!)); last PUT: \(describe(floors.last!))")
            pageFigures.append(["page": label, "pageFileBytes": pageBytes, "roundColdMs": median(cold.map(\.ms)), "roundWarmMs": median(warmRounds.map(\.ms)),
                                "putMs": median(floors.map(\.ms)), "ratioCold": median(coldRatios), "ratioWarm": median(warmRatios), "target": target,
                                "roundColdUnnamedMs": median(unnamed.map(\.ms)), "ratioColdUnnamed": median(unnamedRatios), "lastColdUnnamed": sampleJSON(unnamed.last!),
                                "lastCold": sampleJSON(lastCold), "lastWarm": sampleJSON(warmRounds.last!), "lastPut": sampleJSON(floors.last!)])
            if label == "small" { (lastPageBytes, lastPageRound) = (pageBytes, lastCold) }
        }
        json["onePage"] = pageFigures

        // Bytes sent by a one-page round (the small page) ÷ its page file; the head's size.
        let headSize = try await direct.list("link/heads").first { !$0.isFolder }?.size ?? 0
        let bytesRatio = Double(lastPageRound.sent) / Double(max(lastPageBytes, 1))
        say("bytes sent, one small page edited: \(lastPageRound.sent) bytes in bodies (\(lastPageRound.wireUp) on the wire) ÷ a \(lastPageBytes)-byte page file "
              + "= \(String(format: "%.2f", bytesRatio)) (target ≤ 1.1); the head is \(headSize) bytes")
        json["bytes"] = ["sent": lastPageRound.sent, "wireUp": lastPageRound.wireUp, "pageFileBytes": lastPageBytes, "ratio": bytesRatio, "target": 1.1,
                         "headBytes": headSize] as [String: Any]

        // Nothing changed.
        var coldIdle: [LinkSample] = [], warmIdle: [LinkSample] = [], coldList: [LinkSample] = [], warmList: [LinkSample] = []
        var coldIdleRatios: [Double] = [], warmIdleRatios: [Double] = []
        var rcloneIdle: [LinkSample] = []
        _ = try await round(warm)
        for k in 0..<pairs {
            var taken: [String: LinkSample] = [:]
            var steps = ["cold", "coldFloor", "warm", "warmFloor"]
            steps = Array(steps[(k % 4)...] + steps[..<(k % 4)])
            for step in steps {
                switch step {
                case "cold": taken[step] = try await round(try remote())
                case "warm": taken[step] = try await round(warm)
                case "coldFloor":
                    let fresh = try remote()
                    taken[step] = try await timedRelay { _ = try await fresh.list("heads") }
                default: taken[step] = try await timedRelay { _ = try await warm.list("heads") }
                }
            }
            coldIdle.append(taken["cold"]!); warmIdle.append(taken["warm"]!)
            coldList.append(taken["coldFloor"]!); warmList.append(taken["warmFloor"]!)
            coldIdleRatios.append(taken["cold"]!.ms / taken["coldFloor"]!.ms)
            warmIdleRatios.append(taken["warm"]!.ms / taken["warmFloor"]!.ms)
            if rclone != nil { rcloneIdle.append(try rcloneSync()) }
        }
        let requests = (coldIdle + warmIdle).map(\.requests)
        say("nothing changed: round (cold) \(spread(coldIdle.map(\.ms))) ms ÷ one PROPFIND by a new remote \(spread(coldList.map(\.ms))) ms: "
              + "median of the pairs' ratios \(spread(coldIdleRatios, 2)) (target ≤ 1.1); warm \(spread(warmIdle.map(\.ms))) ms ÷ the kept remote's "
              + "PROPFIND \(spread(warmList.map(\.ms))) ms: \(spread(warmIdleRatios, 2)); requests a round \(Set(requests).sorted().map(String.init).joined(separator: ", ")) "
              + "(target 1); last cold round: \(describe(coldIdle.last!))")
        json["nothingChanged"] = ["roundColdMs": median(coldIdle.map(\.ms)), "propfindColdMs": median(coldList.map(\.ms)), "ratioCold": median(coldIdleRatios),
                                  "roundWarmMs": median(warmIdle.map(\.ms)), "propfindWarmMs": median(warmList.map(\.ms)), "ratioWarm": median(warmIdleRatios),
                                  "requests": requests.max() ?? 0, "target": 1.1, "lastCold": sampleJSON(coldIdle.last!)] as [String: Any]

        if let rf = rcloneFirst {
            let onePage = median(rcloneOnePage.map(\.ms)), idle = median(rcloneIdle.map(\.ms))
            let ourIdle = median(coldIdle.map(\.ms)), ourPage = median(ourOnePage)
            say("against rclone sync (cold rounds, side by side): first \(String(format: "%.1f", first.ms)) ms, \(first.requests) requests against "
                  + "\(String(format: "%.1f", rf.ms)) ms, \(rf.requests) requests; one page edited \(String(format: "%.1f", ourPage)) ms against "
                  + "\(String(format: "%.1f", onePage)) ms, \(rcloneOnePage.last!.requests) requests, \(rcloneOnePage.last!.wireUp) bytes up; nothing changed "
                  + "\(String(format: "%.1f", ourIdle)) ms, \(coldIdle.last!.requests) request against \(String(format: "%.1f", idle)) ms, "
                  + "\(rcloneIdle.last!.requests) requests")
            json["rclone"] = ["first": sampleJSON(rf), "onePageMs": onePage, "onePageLast": sampleJSON(rcloneOnePage.last!), "nothingChangedMs": idle,
                              "nothingChangedLast": sampleJSON(rcloneIdle.last!), "oursFirstMs": first.ms, "oursOnePageMs": ourPage, "oursNothingChangedMs": ourIdle] as [String: Any]
        }
        if arguments.contains("--json") {
            let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
            say(String(decoding: data, as: UTF8.self))
        }
    }
}
