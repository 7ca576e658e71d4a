// Not a product: shared by LulucatSyncTests and lnote-dev.
// A real S3 endpoint for the tests: OpenStack Swift (Debian's swift-proxy, swift-account,
// swift-container, swift-object) with its s3api middleware and tempauth, and a memcached, all on
// free ports of 127.0.0.1, from configs written into a temporary folder, run as this user, each
// server one process started and stopped by its PID. Nothing is read from /etc/swift: the servers
// are run by a few lines of Python that point Swift at our swift.conf. Tests that need it are
// skipped when the packages are not installed (.ci/run installs them; never python3-swiftclient,
// whose /usr/bin/swift would shadow the Swift toolchain).
//
// What it is known to do (docs/sync.md §9.3): SigV4, path-style only, region us-east-1; PUTs with
// If-None-Match or If-Match answer 501; DeleteObjects needs Content-MD5; Last-Modified is rounded
// up to the next second; ETags are the hex MD5 of the object.

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LulucatSync

public final class SwiftS3Server: @unchecked Sendable {
    /// The Python that Debian's python3-swift is installed for (the servers' shebang).
    static let python: String? = {
        guard let text = try? String(contentsOfFile: "/usr/bin/swift-proxy-server", encoding: .utf8),
              let first = text.split(separator: "\n").first, first.hasPrefix("#!") else { return nil }
        let words = first.dropFirst(2).split(separator: " ").map(String.init)
        let py = words.first == "/usr/bin/env" ? words.dropFirst().first.map { "/usr/bin/" + $0 } : words.first
        return py.flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
    }()
    static let memcached: String? = ["/usr/bin/memcached", "/usr/local/bin/memcached"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether Swift's four servers, its s3api and memcached are installed.
    public static var isAvailable: Bool {
        guard python != nil, memcached != nil else { return false }
        let fm = FileManager.default
        for s in ["proxy", "account", "container", "object"] where !fm.fileExists(atPath: "/usr/bin/swift-\(s)-server") { return false }
        return fm.fileExists(atPath: "/usr/lib/python3/dist-packages/swift/common/middleware/s3api/s3api.py")
    }

    /// Why the tests that need it are skipped.
    public static let notInstalled = "OpenStack Swift with s3api is not installed "
        + "(apt-get install --no-install-recommends swift-proxy swift-account swift-container swift-object memcached)"

    /// tempauth's account and user (the S3 access key is `account:user`) and the secret key.
    public static let accessKey = "test:tester"
    public static let secretKey = "testing"
    public static let region = "us-east-1"
    public static var credentials: S3Credentials { S3Credentials(accessKey: accessKey, secretKey: secretKey) }

    public let dir: String
    /// The proxy's port: the S3 endpoint.
    public private(set) var proxyPort = 0
    private var pids: [(name: String, pid: pid_t)] = []
    private let lock = NSLock()

    /// `http://127.0.0.1:PORT`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(proxyPort)")! }

    /// A location in `bucket` (path-style) under `prefix`.
    public func location(bucket: String, prefix: String = "") -> S3Location {
        S3Location(endpoint: endpoint, bucket: bucket, prefix: prefix, region: SwiftS3Server.region, addressing: .path)
    }

    /// Starts every server and waits (at most `timeout` seconds) until the proxy answers a signed
    /// request: the creation of a probe bucket, which goes through the proxy, s3api, tempauth and
    /// the account and container servers.
    public init(timeout: Duration = .seconds(90)) async throws {
        guard SwiftS3Server.isAvailable, let python = SwiftS3Server.python, let memcached = SwiftS3Server.memcached else {
            throw TestFailure(SwiftS3Server.notInstalled)
        }
        dir = NSTemporaryDirectory() + "lulucat-s3-" + UUID().uuidString.prefix(8)
        let fm = FileManager.default
        for sub in ["etc", "srv/d1", "log"] { try fm.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        let deadline = ContinuousClock.now + timeout
        do {
            try await start(python: python, memcached: memcached, deadline: deadline)
        } catch {
            let logs = log()
            stop()
            throw TestFailure("Swift s3api did not start: \(error)\n\(logs)")
        }
    }

    private func start(python: String, memcached: String, deadline: ContinuousClock.Instant) async throws {
        var ports: [Int] = []
        while ports.count < 5 {
            let p = try ApacheServer.freePort()
            if !ports.contains(p) { ports.append(p) }
        }
        let (proxy, account, container, object, cache) = (ports[0], ports[1], ports[2], ports[3], ports[4])
        proxyPort = proxy
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        try write("swift.conf", SwiftS3Server.swiftConf)
        for (name, port) in [("account", account), ("container", container), ("object", object)] {
            try write("\(name)-server.conf", SwiftS3Server.storageConf(name, port: port, dir: dir, user: user))
        }
        try write("proxy-server.conf", SwiftS3Server.proxyConf(port: proxy, memcachePort: cache, dir: dir, user: user))
        let status = try ApacheServer.run(python, ["-c", SwiftS3Server.ringScript, dir + "/etc", String(account), String(container), String(object)],
                                          output: dir + "/log/rings.log")
        guard status == 0 else { throw TestFailure("building the rings failed (\(status))") }

        // memcached, then the servers, each with the inherited descriptors closed (a server must
        // not keep the test runner's pipes open) and its output in log/NAME.log.
        let mc = try ApacheServer.spawn(python, ["-c", SwiftS3Server.execScript, memcached, "-l", "127.0.0.1", "-p", String(cache), "-U", "0",
                                                 "-m", "64", "-u", user], output: dir + "/log/memcached.log")
        lock.withLock { pids.append(("memcached", mc)) }
        for s in ["account", "container", "object", "proxy"] {
            let pid = try ApacheServer.spawn(python, ["-c", SwiftS3Server.serveScript, dir + "/etc/swift.conf", "\(s)-server", dir + "/etc/\(s)-server.conf"],
                                             output: dir + "/log/\(s)-server.log")
            lock.withLock { pids.append(("\(s)-server", pid)) }
        }
        // Bounded wait for every port, watching that no server exited.
        var waiting = [cache, account, container, object, proxy]
        while let port = waiting.first {
            if let gone = exited() { throw TestFailure("\(gone) exited during start-up") }
            guard ContinuousClock.now < deadline else { throw TestFailure("port \(port) never answered") }
            if ApacheServer.canConnect(port) { waiting.removeFirst() } else { try await Task.sleep(for: .milliseconds(100)) }
        }
        // Then a signed request, until the whole chain answers it.
        let probe = S3Remote(location: location(bucket: "probe"), credentials: SwiftS3Server.credentials, timeout: 10)
        while true {
            do throws(RemoteError) {
                try await probe.createBucket()
                return
            } catch {
                if let gone = exited() { throw TestFailure("\(gone) exited during start-up") }
                guard ContinuousClock.now < deadline else { throw TestFailure("the probe bucket could not be made: \(error)") }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Makes an empty bucket (named for the test) and returns its location.
    public func makeBucket(_ name: String = "b-" + UUID().uuidString.prefix(12).lowercased(), prefix: String = "") async throws -> S3Location {
        let l = location(bucket: name, prefix: prefix)
        try await S3Remote(location: l, credentials: SwiftS3Server.credentials, timeout: 10).createBucket()
        return l
    }

    /// The name of a server that has exited (reaped), if any.
    private func exited() -> String? {
        lock.withLock {
            for (name, pid) in pids {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { return name }
            }
            return nil
        }
    }

    private func write(_ name: String, _ text: String) throws {
        try text.write(toFile: dir + "/etc/" + name, atomically: true, encoding: .utf8)
    }

    /// The last lines of every log.
    public func log() -> String {
        var out = ""
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/log")) ?? []).sorted() {
            let text = (try? String(contentsOfFile: dir + "/log/" + name, encoding: .utf8)) ?? ""
            out += "--- \(name)\n" + text.split(separator: "\n").suffix(15).joined(separator: "\n") + "\n"
        }
        return out
    }

    /// SIGTERM to each server, reaped with a bounded wait (SIGKILL after 5 s), then the folder removed.
    public func stop() {
        let all = lock.withLock { defer { pids = [] }; return pids }
        for (_, pid) in all { kill(pid, SIGTERM) }
        for (_, pid) in all {
            var status: Int32 = 0
            var reaped = false
            for _ in 0..<100 {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid || (r == -1 && errno == ECHILD) { reaped = true; break }
                usleep(50_000)
            }
            if !reaped {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            }
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    deinit { stop() }

    // MARK: One server for a whole test run

    /// The server the tests of this process share (each in buckets of its own), started on first
    /// use (one start, not one per test: it takes seconds and about 250 MB) and stopped by its
    /// PIDs when the process exits (`atexit`). A start that failed is not tried again.
    public static func shared() async throws -> SwiftS3Server { try await SharedServer.instance.get() }

    // MARK: Configuration (our own files, in dir/etc)

    static let swiftConf = """
    [swift-hash]
    swift_hash_path_prefix = lulucat-test-prefix
    swift_hash_path_suffix = lulucat-test-suffix

    [storage-policy:0]
    name = Policy-0
    default = yes

    """

    /// What every server's [DEFAULT] says: loopback, one process (workers = 0, stopped by its
    /// PID), our folder for rings and swift.conf, `extra` lines, its name in the logs.
    static func defaults(_ name: String, port: Int, dir: String, user: String, extra: String = "") -> String {
        """
        [DEFAULT]
        bind_ip = 127.0.0.1
        bind_port = \(port)
        workers = 0
        user = \(user)
        swift_dir = \(dir)/etc
        \(extra)log_name = \(name)-server
        log_level = INFO
        """
    }

    /// An account, container or object server, data on a plain folder (no mount check).
    static func storageConf(_ name: String, port: Int, dir: String, user: String) -> String {
        """
        \(defaults(name, port: port, dir: dir, user: user, extra: "devices = \(dir)/srv\nmount_check = false\ndisable_fallocate = true\n"))

        [pipeline:main]
        pipeline = \(name)-server

        [app:\(name)-server]
        use = egg:swift#\(name)

        """
    }

    /// The proxy: s3api (SigV4 with `region`), tempauth with the one test user, memcache.
    static func proxyConf(port: Int, memcachePort: Int, dir: String, user: String) -> String {
        let account = accessKey.split(separator: ":")[0], name = accessKey.split(separator: ":")[1]
        // The middlewares without settings (a section's name is the pipeline's; the egg's has "_").
        let plain = ["catch_errors", "gatekeeper", "healthcheck", "proxy-logging", "listing_formats", "bulk", "copy", "slo", "dlo",
                     "versioned_writes", "symlink"]
        let filters = plain.map { "[filter:\($0)]\nuse = egg:swift#\($0.replacingOccurrences(of: "-", with: "_"))\n" }.joined()
        return """
        \(defaults("proxy", port: port, dir: dir, user: user))

        [pipeline:main]
        pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server

        [app:proxy-server]
        use = egg:swift#proxy
        account_autocreate = true
        allow_account_management = true

        [filter:s3api]
        use = egg:swift#s3api
        location = \(region)
        s3_acl = false
        dns_compliant_bucket_names = true

        [filter:tempauth]
        use = egg:swift#tempauth
        user_\(account)_\(name) = \(secretKey) .admin

        [filter:cache]
        use = egg:swift#memcache
        memcache_servers = 127.0.0.1:\(memcachePort)

        \(filters)

        """
    }

    /// Builds the three rings (one device, one replica, 2^4 partitions) with Swift's RingBuilder,
    /// in one process (`swift-ring-builder` takes seconds a call). Arguments: ETC ACCOUNT CONTAINER OBJECT ports.
    static let ringScript = """
    import sys
    from swift.common.ring import RingBuilder
    etc = sys.argv[1]
    for name, port in zip(("account", "container", "object"), sys.argv[2:5]):
        builder = RingBuilder(4, 1, 1)
        builder.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": int(port),
                         "device": "d1", "weight": 1.0, "meta": ""})
        builder.rebalance()
        builder.get_ring().save(etc + "/" + name + ".ring.gz")
    """

    /// Runs one Swift server in this process, reading our swift.conf instead of /etc/swift's.
    /// Arguments: SWIFT_CONF SECTION CONF.
    static let serveScript = """
    import os, sys
    os.closerange(3, 65536)
    import swift.common.utils as utils
    utils.SWIFT_CONF_FILE = sys.argv[1]
    from swift.common.wsgi import run_wsgi
    sys.exit(run_wsgi(sys.argv[3], sys.argv[2], verbose=True))
    """

    /// Runs a program with the inherited descriptors above 2 closed. Arguments: PROGRAM ARGS...
    static let execScript = """
    import os, sys
    os.closerange(3, 65536)
    os.execv(sys.argv[1], sys.argv[1:])
    """
}

/// Starts the shared server once and stops it at exit.
private actor SharedServer {
    static let instance = SharedServer()
    private var start: Task<SwiftS3Server, Error>?

    func get() async throws -> SwiftS3Server {
        if let start { return try await start.value }
        let t = Task { () async throws -> SwiftS3Server in
            let clock = ContinuousClock(), start = clock.now
            let server = try await SwiftS3Server()
            let took = clock.now - start
            print("Swift s3api started for this test run in \(took.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))) "
                  + "(endpoint \(server.endpoint.absoluteString), \(server.dir))")
            SharedServer.running.withLock { $0 = server }
            atexit { SharedServer.running.withLock { $0?.stop(); $0 = nil } }
            return server
        }
        start = t
        return try await t.value
    }

    /// The started server, for the exit handler (a C function cannot capture it).
    static let running = LockedValue<SwiftS3Server?>(nil)
}

/// A value behind a lock (the exit handler reads it from outside any actor).
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
