// Not a product: shared by LulucatSyncTests and lnote-dev.
// The other WebDAV servers people sync through, as ApacheServer runs Apache: nginx with its dav
// module and dav-ext (PROPFIND), lighttpd's mod_webdav and `rclone serve webdav`, each from a
// config in a temporary folder, on a free port on 127.0.0.1, stopped by its PID. A test that
// needs one is skipped where it is not installed (.ci/run installs nginx-light,
// libnginx-mod-http-dav-ext, lighttpd, lighttpd-mod-webdav and rclone).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebDAV server a test or the bench started: where it serves the collection `notes/`.
public protocol StartedWebDAVServer: AnyObject, Sendable {
    /// The collection the tests sync through (`notes/`, with a trailing slash).
    var url: URL { get }
    /// Its port on 127.0.0.1.
    var port: Int { get }
    /// Its temporary folder; it serves `root/` in it.
    var dir: String { get }
    /// Stops it (by its PID) and removes its folder.
    func stop()
}

extension ApacheServer: StartedWebDAVServer {}

extension StartedWebDAVServer {
    /// The files under the synced collection's `folder`, names to bytes (hidden names left out).
    public func files(_ folder: String) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let base = dir + "/root/notes/" + folder
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where !name.hasPrefix(".") {
            if let d = FileManager.default.contents(atPath: base + "/" + name) { out[name] = Array(d) }
        }
        return out
    }
}

/// A WebDAV server other than Apache, serving `<dir>/root` with the collection `notes/` in it.
public final class WebDAVServer: StartedWebDAVServer, @unchecked Sendable {
    /// The servers this launcher knows.
    public enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case nginx, lighttpd, rclone

        public var description: String {
            switch self {
            case .nginx: "nginx + dav-ext"
            case .lighttpd: "lighttpd mod_webdav"
            case .rclone: "rclone serve webdav"
            }
        }

        /// The program, and the files it needs beside it, when all are installed.
        var binary: String? {
            let fm = FileManager.default
            switch self {
            case .nginx:
                guard fm.fileExists(atPath: WebDAVServer.nginxDAVExt) else { return nil }
                return ["/usr/sbin/nginx"].first { fm.isExecutableFile(atPath: $0) }
            case .lighttpd:
                guard fm.fileExists(atPath: WebDAVServer.lighttpdModules + "/mod_webdav.so") else { return nil }
                return ["/usr/sbin/lighttpd"].first { fm.isExecutableFile(atPath: $0) }
            case .rclone:
                return ["/usr/bin/rclone", "/usr/local/bin/rclone"].first { fm.isExecutableFile(atPath: $0) }
            }
        }

        /// Whether the server can be started here.
        public var isAvailable: Bool { binary != nil }

        /// What to install where it is not.
        public var missing: String {
            switch self {
            case .nginx: "nginx with dav-ext is not installed (apt-get install nginx-light libnginx-mod-http-dav-ext)"
            case .lighttpd: "lighttpd with mod_webdav is not installed (apt-get install lighttpd lighttpd-mod-webdav)"
            case .rclone: "rclone is not installed (apt-get install rclone)"
            }
        }
    }

    static let nginxDAVExt = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
    static let lighttpdModules = "/usr/lib/lighttpd"

    /// Which server it is.
    public let kind: Kind
    /// Its temporary folder: the config, the logs and `root/` (the files it serves).
    public let dir: String
    /// Its port on 127.0.0.1.
    public private(set) var port = 0
    private var pid: pid_t = 0

    /// The collection the tests sync through.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/notes/")! }

    /// Starts one from a config in a new temporary folder, on a free port.
    /// - Throws: `TestFailure` when it is not installed or does not start.
    public init(_ kind: Kind) throws {
        guard let binary = kind.binary else { throw TestFailure(kind.missing) }
        self.kind = kind
        dir = NSTemporaryDirectory() + "lulucat-\(kind.rawValue)-" + UUID().uuidString.prefix(8)
        let fm = FileManager.default
        for sub in ["root/notes", "run", "logs", "tmp"] { try fm.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        chmod(dir, 0o755)
        if kind == .nginx && getuid() == 0 {
            // nginx's workers run as nobody (a master started by root): they must own what they write.
            for sub in ["root", "root/notes", "tmp"] { chown(dir + "/" + sub, 65534, 65534) }
        }
        // A free port can be taken by another test's server between finding it and binding it:
        // a start that fails is tried again on another port (bounded).
        var lastError: Error?
        for _ in 0..<5 {
            port = try ApacheServer.freePort()
            do { try start(binary); return } catch { lastError = error }
        }
        throw lastError ?? TestFailure("\(kind) did not start")
    }

    private func start(_ binary: String) throws {
        let log = dir + "/logs/error.log"
        switch kind {
        case .nginx:
            try nginxConfig().write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
            let status = try ApacheServer.run(binary, ["-p", dir, "-c", dir + "/nginx.conf", "-e", log])
            guard status == 0 else { throw TestFailure("nginx did not start (\(status)): \(self.log())") }
            try waitForPIDFile()
        case .lighttpd:
            try lighttpdConfig().write(toFile: dir + "/lighttpd.conf", atomically: true, encoding: .utf8)
            let status = try ApacheServer.run(binary, ["-f", dir + "/lighttpd.conf", "-m", WebDAVServer.lighttpdModules])
            guard status == 0 else { throw TestFailure("lighttpd did not start (\(status)): \(self.log())") }
            try waitForPIDFile()
        case .rclone:
            // In the foreground, its own child: stopped and reaped by PID.
            let child = try ApacheServer.spawn(binary, ["serve", "webdav", dir + "/root", "--addr", "127.0.0.1:\(port)",
                                                        "--config", dir + "/rclone.conf", "--cache-dir", dir + "/tmp"], output: log)
            // Up to 30 s: a loaded 2-core machine can be slow to start a server.
            for _ in 0..<600 {
                if ApacheServer.canConnect(port) { pid = child; return }
                var status: Int32 = 0
                if waitpid(child, &status, WNOHANG) == child { throw TestFailure("rclone exited (\(status)): \(self.log())") }
                usleep(50_000)
            }
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
            throw TestFailure("rclone did not answer on port \(port): \(self.log())")
        }
    }

    /// Bounded wait (30 s) for a daemon's PID file and its port.
    private func waitForPIDFile() throws {
        for _ in 0..<600 {
            if let s = try? String(contentsOfFile: dir + "/run/server.pid", encoding: .utf8),
               let n = Int32(s.trimmingCharacters(in: .whitespacesAndNewlines)), ApacheServer.canConnect(port) {
                pid = n
                return
            }
            usleep(50_000)
        }
        throw TestFailure("\(kind) did not answer on port \(port): \(log())")
    }

    func nginxConfig() -> String {
        """
        load_module \(WebDAVServer.nginxDAVExt);
        worker_processes 1;
        pid \(dir)/run/server.pid;
        error_log \(dir)/logs/error.log;
        \(getuid() == 0 ? "user nobody nogroup;" : "")
        events { worker_connections 256; }
        http {
          access_log \(dir)/logs/access.log;
          client_body_temp_path \(dir)/tmp;
          proxy_temp_path \(dir)/tmp;
          fastcgi_temp_path \(dir)/tmp;
          uwsgi_temp_path \(dir)/tmp;
          scgi_temp_path \(dir)/tmp;
          client_max_body_size 300m;
          keepalive_timeout 300s;
          keepalive_requests 100000;
          server {
            listen 127.0.0.1:\(port);
            root \(dir)/root;
            location / {
              dav_methods PUT DELETE MKCOL COPY MOVE;
              dav_ext_methods PROPFIND OPTIONS;
              create_full_put_path off;
              dav_access user:rw group:rw all:r;
            }
          }
        }
        """
    }

    func lighttpdConfig() -> String {
        """
        server.modules = ("mod_webdav", "mod_accesslog")
        server.document-root = "\(dir)/root"
        server.bind = "127.0.0.1"
        server.port = \(port)
        server.pid-file = "\(dir)/run/server.pid"
        server.errorlog = "\(dir)/logs/error.log"
        accesslog.filename = "\(dir)/logs/access.log"
        server.upload-dirs = ("\(dir)/tmp")
        server.max-request-size = 307200
        # Kept-alive connections stay open (lighttpd closes them after 5 s idle by default): on a
        # loaded machine a test's next request could go out on one just being closed.
        server.max-keep-alive-idle = 300
        server.max-keep-alive-requests = 100000
        webdav.activate = "enable"
        webdav.is-readonly = "disable"
        """
    }

    /// Its error log (rclone's output).
    public func log() -> String { (try? String(contentsOfFile: dir + "/logs/error.log", encoding: .utf8)) ?? "" }

    /// Stops the server (SIGTERM to its PID, a bounded wait) and removes its folder.
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        for _ in 0..<100 {
            if kind == .rclone {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { break }
            } else if ApacheServer.isGone(pid) {
                break
            }
            usleep(50_000)
        }
        pid = 0
        try? FileManager.default.removeItem(atPath: dir)
    }

    deinit { stop() }
}
