// Not a product: shared by LulucatSyncTests and lnote-dev bench sync.
// A real WebDAV server for the tests: Apache httpd with mod_dav from a config in a temporary
// folder, on a free port on 127.0.0.1, stopped by its PID. Tests that need it are skipped when
// apache2 is not installed (.ci/run installs apache2-bin).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class ApacheServer: @unchecked Sendable {
    public static let binary: String? = ["/usr/sbin/apache2", "/usr/sbin/httpd", "/usr/local/sbin/httpd"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isAvailable: Bool { binary != nil && FileManager.default.fileExists(atPath: "/usr/lib/apache2/modules/mod_dav.so") }

    public let dir: String
    public private(set) var port: Int
    private var pid: pid_t = 0

    /// The collection the tests sync through.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/notes/")! }

    static let template = """
    ServerRoot "/usr/lib/apache2"
    PidFile @DIR@/run/httpd.pid
    ErrorLog @DIR@/logs/error.log
    Listen 127.0.0.1:@PORT@
    ServerName 127.0.0.1
    KeepAliveTimeout 300
    LoadModule mpm_event_module modules/mod_mpm_event.so
    LoadModule authz_core_module modules/mod_authz_core.so
    LoadModule dav_module modules/mod_dav.so
    LoadModule dav_fs_module modules/mod_dav_fs.so
    LoadModule mime_module modules/mod_mime.so
    LoadModule alias_module modules/mod_alias.so
    LoadModule auth_basic_module modules/mod_auth_basic.so
    LoadModule authn_core_module modules/mod_authn_core.so
    LoadModule authn_file_module modules/mod_authn_file.so
    LoadModule authz_user_module modules/mod_authz_user.so
    LogFormat "%h \\"%r\\" %>s %b" dav
    CustomLog @DIR@/logs/access.log dav
    TypesConfig /etc/mime.types
    DefaultRuntimeDir @DIR@/run
    Mutex file:@DIR@/run
    DavLockDB @DIR@/lock/DavLock
    DocumentRoot @DIR@/root
    Redirect 307 /moved/ http://127.0.0.1:@PORT@/notes/
    <Directory @DIR@/root>
      Dav On
      @ACCESS@
      Options None
      AllowOverride None
    </Directory>
    <IfDefine !NOTROOT>
    User nobody
    Group nogroup
    </IfDefine>
    """

    /// `basicAuth`: the one user and password HTTP Basic admits (every request needs them);
    /// nil: no authentication.
    public init(basicAuth: (user: String, password: String)? = nil) throws {
        guard let binary = ApacheServer.binary else { throw TestFailure("apache2 is not installed") }
        dir = NSTemporaryDirectory() + "lulucat-apache-" + UUID().uuidString.prefix(8)
        let fm = FileManager.default
        for sub in ["root/notes", "run", "logs", "lock"] { try fm.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        chmod(dir, 0o755)
        port = 0
        var access = "Require all granted"
        if let auth = basicAuth {
            // htpasswd's {SHA} form: base64 of the password's SHA-1.
            let line = auth.user + ":{SHA}" + Data(sha1(Array(auth.password.utf8))).base64EncodedString() + "\n"
            try line.write(toFile: dir + "/htpasswd", atomically: true, encoding: .utf8)
            chmod(dir + "/htpasswd", 0o644)
            access = "AuthType Basic\n  AuthName \"notes\"\n  AuthBasicProvider file\n  AuthUserFile \(dir)/htpasswd\n  Require valid-user"
        }
        if getuid() == 0 {
            // Workers run as nobody: they must own what they write.
            for sub in ["root", "root/notes", "lock"] { chown(dir + "/" + sub, 65534, 65534) }
        }
        // A free port can be taken by another test's server between finding it and binding it:
        // a start that fails is tried again on another port (bounded).
        var lastError: Error?
        for _ in 0..<5 {
            port = try ApacheServer.freePort()
            let conf = ApacheServer.template.replacingOccurrences(of: "@DIR@", with: dir).replacingOccurrences(of: "@PORT@", with: String(port))
                .replacingOccurrences(of: "@ACCESS@", with: access)
            try conf.write(toFile: dir + "/httpd.conf", atomically: true, encoding: .utf8)
            do { try start(binary); return } catch {
                // Only a server that did not start at all (it could not bind) is tried again.
                guard "\(error)".contains("did not start") else { throw error }
                lastError = error
            }
        }
        throw lastError ?? TestFailure("apache2 did not start")
    }

    private func start(_ binary: String) throws {
        let root = getuid() == 0
        let status = try ApacheServer.run(binary, ["-f", dir + "/httpd.conf", "-k", "start"] + (root ? [] : ["-D", "NOTROOT"]))
        guard status == 0 else { throw TestFailure("apache2 did not start (\(status)): \(log())") }
        // Bounded wait for the PID file and the port.
        for _ in 0..<100 {
            if let s = try? String(contentsOfFile: dir + "/run/httpd.pid", encoding: .utf8),
               let n = Int32(s.trimmingCharacters(in: .whitespacesAndNewlines)), ApacheServer.canConnect(port) {
                pid = n
                return
            }
            usleep(50_000)
        }
        throw TestFailure("apache2 did not answer on port \(port): \(log())")
    }

    public func log() -> String { (try? String(contentsOfFile: dir + "/logs/error.log", encoding: .utf8)) ?? "" }
    public func accessLog() -> [String] {
        ((try? String(contentsOfFile: dir + "/logs/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Kills the server at once (SIGKILL to its process group: the parent and every worker, in
    /// the middle of whatever they write), as a power cut or an OOM kill would. Bounded wait.
    public func kill() {
        guard pid > 0 else { return }
        signal(-pid, SIGKILL)
        signal(pid, SIGKILL)
        for _ in 0..<100 {
            if ApacheServer.isGone(pid) && !ApacheServer.canConnect(port) { break }
            usleep(50_000)
        }
        pid = 0
        try? FileManager.default.removeItem(atPath: dir + "/run/httpd.pid")
    }

    /// Starts the killed server again, on the same port with the same files.
    public func restart() throws {
        guard pid == 0, let binary = ApacheServer.binary else { return }
        // The port may linger a moment after the kill: bounded retries.
        var lastError: Error?
        for _ in 0..<20 {
            do { try start(binary); return } catch { lastError = error; usleep(250_000) }
        }
        throw lastError ?? TestFailure("apache2 did not restart")
    }

    public func stop() {
        guard pid > 0 else { return }
        signal(pid, SIGTERM)
        for _ in 0..<100 {
            if ApacheServer.isGone(pid) { break }
            usleep(50_000)
        }
        pid = 0
        try? FileManager.default.removeItem(atPath: dir)
    }

    deinit { stop() }

    /// Whether a process has ended: no longer there, or a zombie. Apache's parent is a daemon
    /// whose parent is pid 1, and where pid 1 does not reap (a container's), it stays a zombie
    /// after exiting, which `kill(pid, 0)` still finds: each stop then waited out its bound (5 s).
    static func isGone(_ pid: pid_t) -> Bool {
        if signal(pid, 0) != 0 { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // "pid (comm) S ...": the state is the first field after the command's closing parenthesis.
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// Runs a program to its end with an empty signal mask and default signal actions (a test
    /// runner's blocked or ignored signals would otherwise reach the server and keep SIGTERM out);
    /// its exit status. `output`: a file its stdout and stderr are appended to.
    static func run(_ path: String, _ args: [String], output: String? = nil) throws -> Int32 {
        let pid = try spawn(path, args, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status >> 8) & 0xFF
    }

    /// Starts a program as `run` does, without waiting: its PID (the caller reaps it). `output`: a
    /// file its stdout and stderr are appended to, stdin then /dev/null.
    static func spawn(_ path: String, _ args: [String], output: String? = nil) throws -> pid_t {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let output {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, environ)
        guard rc == 0 else { throw TestFailure("posix_spawn \(path): \(rc)") }
        return pid
    }

    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw TestFailure("bind failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// SHA-1 (FIPS 180-4), only for htpasswd's {SHA} form in the test server's config.
func sha1(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
    var m = message + [0x80]
    while m.count % 64 != 56 { m.append(0) }
    let bits = UInt64(message.count) * 8
    for i in (0..<8).reversed() { m.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
    var w = [UInt32](repeating: 0, count: 80)
    for chunk in stride(from: 0, to: m.count, by: 64) {
        for i in 0..<16 {
            w[i] = m[chunk + 4 * i..<chunk + 4 * i + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        for i in 16..<80 { let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]; w[i] = x << 1 | x >> 31 }
        var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
        for i in 0..<80 {
            let (f, k): (UInt32, UInt32) = switch i {
            case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (b ^ c ^ d, 0xCA62_C1D6)
            }
            let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
            (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
        }
        h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
    }
    return h.flatMap { v in (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> (UInt32($0) * 8)) } }
}

/// kill(2), under a name the server's own `kill()` does not hide.
@discardableResult
private func signal(_ pid: pid_t, _ sig: Int32) -> Int32 { kill(pid, sig) }

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
