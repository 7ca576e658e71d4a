// `lnote-dev bench sync` is registered, refuses bad arguments before it starts a server, and with
// Apache mod_dav installed runs its small forms to the end with the figures it promises. Its
// timings come from a release build only (docs/sync.md §10), so none is checked here.

import Foundation
import Testing

@Suite struct BenchSyncCLITests {
    static let apache = ["/usr/sbin/apache2", "/usr/sbin/httpd"].contains { FileManager.default.isExecutableFile(atPath: $0) }
        && FileManager.default.fileExists(atPath: "/usr/lib/apache2/modules/mod_dav.so")
    static let nginx = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
        && FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so")

    @Test func usageErrors() async throws {
        let unknown = try await lnoteDev(["bench", "sync", "--nope"])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown argument '--nope'"), "\(unknown.stderr)")
        let only = try await lnoteDev(["bench", "sync", "--only", "everything"])
        #expect(only.status == 64 && only.stderr.contains("--only takes pages, many, rounds or link"), "\(only.stderr)")
        let zero = try await lnoteDev(["bench", "sync", "--rounds", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--rounds must be a whole number of at least 1"), "\(zero.stderr)")
        #expect(try await lnoteDev(["bench", "sync", "--pairs"]).status == 64)
        #expect(try await lnoteDev(["bench", "sync", "--seed", "-1"]).status == 64)
        let server = try await lnoteDev(["bench", "sync", "--server", "iis"])
        #expect(server.status == 64 && server.stderr.contains("--server takes apache, nginx, lighttpd or rclone"), "\(server.stderr)")
        let help = try await lnoteDev(["bench"])
        #expect(help.status == 64 && help.stderr.contains("sync"))
    }

    @Test("a round where nothing changed costs one request", .enabled(if: apache, "needs apache2-bin with mod_dav"))
    func nothingChanged() async throws {
        let r = try await lnoteDev(["bench", "sync", "--only", "many", "--documents", "3", "--pairs", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("nothing changed, 3 documents, 5 rounds: requests 1, 1, 1, 1, 1, 166 bytes sent a round; round "), "\(r.stdout)")
        #expect(r.stdout.contains("floor (PROPFIND + Library.list)") && r.stdout.contains("median of the pairs' ratios"), "\(r.stdout)")
    }

    @Test("randomized rounds with faults lose nothing and converge", .enabled(if: apache, "needs apache2-bin with mod_dav"))
    func randomizedRounds() async throws {
        let r = try await lnoteDev(["bench", "sync", "--only", "rounds", "--rounds", "4", "--seed", "3"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("randomized rounds: 4 rounds of 3 libraries"), "\(r.stdout)")
        #expect(r.stdout.contains("lost 0, resurrected 0, converged yes"), "\(r.stdout)")
    }

    @Test("the idle round through nginx (no ETag in its listing) is one request too",
          .enabled(if: nginx, "needs nginx-light and libnginx-mod-http-dav-ext"))
    func nothingChangedThroughNginx() async throws {
        let r = try await lnoteDev(["bench", "sync", "--only", "many", "--documents", "3", "--pairs", "3", "--server", "nginx"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("server: nginx + dav-ext"), "\(r.stdout)")
        #expect(r.stdout.contains("nothing changed, 3 documents, 3 rounds: requests 1, 1, 1, 166 bytes sent a round; round "), "\(r.stdout)")
    }

    static let rclone = ["/usr/bin/rclone", "/usr/local/bin/rclone"].contains { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("the round over a slow link: each figure against its floor, and rclone beside it", .enabled(if: apache, "needs apache2-bin with mod_dav"))
    func link() async throws {
        let r = try await lnoteDev(["bench", "sync", "--only", "link", "--pages", "3", "--strokes", "40", "--small-strokes", "3", "--samples", "20",
                                    "--pairs", "2", "--delay-ms", "3", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("link: 3 ms each way, 50 Mbit/s each direction") == true, "\(r.stdout)")
        for prefix in ["first sync, ours: ", "first pull on a new device, ours: ", "one page edited (small, a ", "one page edited (large, a ", "bytes sent, one small page edited: ",
                       "nothing changed: round (cold) "] {
            #expect(lines.contains { $0.hasPrefix(prefix) }, "\(prefix) in \(r.stdout)")
        }
        #expect(lines.contains { $0.hasPrefix("nothing changed: ") && $0.contains("requests a round 1 (target 1)") }, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("against rclone sync") } == Self.rclone, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("first pull on a new device, rclone copy: ") } == Self.rclone, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("first pull on a new device, ours: ") && $0.hasSuffix(", 3 pages") }, "\(r.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any])
        let pages = try #require(json["onePage"] as? [[String: Any]])
        #expect(pages.map { $0["page"] as? String } == ["small", "large"])
        for p in pages {
            let small = p["page"] as? String == "small"
            #expect(p["target"] as? Double == (small ? 1.6 : 1.4))
            for key in ["ratioCold", "ratioWarm", "ratioColdUnnamed", "roundColdMs", "putMs"] {
                let v = try #require(p[key] as? Double)
                #expect(v > 0 && v.isFinite, "\(key) \(v)")
            }
            // The floor is one PUT on one new connection, of the page file's bytes.
            let put = try #require(p["lastPut"] as? [String: Any])
            #expect(put["connections"] as? Int == 1 && put["bodyBytesSent"] as? Int == p["pageFileBytes"] as? Int, "\(put)")
            // A one-page round sends the page's blob and the head: more bytes than the page file.
            let cold = try #require(p["lastCold"] as? [String: Any])
            #expect((cold["bodyBytesSent"] as? Int ?? 0) > (p["pageFileBytes"] as? Int ?? .max) / 2, "\(cold)")
            #expect((cold["requests"] as? Int ?? 0) >= 3, "\(cold)")
        }
        let pageSizes = pages.compactMap { $0["pageFileBytes"] as? Int }
        #expect(pageSizes.count == 2 && pageSizes[0] < pageSizes[1], "\(pageSizes)")
        let idle = try #require(json["nothingChanged"] as? [String: Any])
        #expect(idle["requests"] as? Int == 1, "\(idle)")
        let bytes = try #require(json["bytes"] as? [String: Any])
        #expect((bytes["headBytes"] as? Int ?? 0) > 0 && (bytes["ratio"] as? Double ?? 0) > 0.5, "\(bytes)")
        #expect((json["rclone"] != nil) == Self.rclone)
    }
}
