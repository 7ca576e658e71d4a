// A read-only place for tests: chmod does not stop root, a read-only bind mount does. Where
// mounting is not allowed, `available` is false and the tests that need it are skipped.

import Foundation

/// `mount --bind` a folder read-only elsewhere, when this process may (root with CAP_SYS_ADMIN).
public enum ReadOnlyMount {
    static func run(_ args: [String]) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    public static func mount(_ source: String, at target: String) -> Bool {
        try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        guard run(["mount", "--bind", source, target]) else { return false }
        guard run(["mount", "-o", "remount,bind,ro", target]) else { _ = run(["umount", target]); return false }
        // Really read-only, even for root?
        if FileManager.default.createFile(atPath: target + "/.probe", contents: Data()) {
            try? FileManager.default.removeItem(atPath: target + "/.probe")
            _ = run(["umount", target])
            return false
        }
        return true
    }

    public static func unmount(_ target: String) { _ = run(["umount", target]) }

    /// Whether a read-only bind mount can be made here (probed once).
    public static let available: Bool = {
        let base = NSTemporaryDirectory() + "lnote-ro-probe-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        try? FileManager.default.createDirectory(atPath: base + "/src", withIntermediateDirectories: true)
        guard mount(base + "/src", at: base + "/ro") else { return false }
        unmount(base + "/ro")
        return true
    }()
}

