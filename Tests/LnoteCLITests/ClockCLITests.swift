// With the system clock past year 9999, `lnote new` and `rename` refuse with a message and write
// nothing (before, they exited 0 and left a document.json no reader could parse). The clock is
// moved for the child process only, by libfaketime's `faketime` (skipped without it).

import Foundation
import Testing

private let faketime = ["/usr/bin/faketime", "/usr/local/bin/faketime"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// `lnote args` with the clock 8,000 years ahead (year 10000 and later).
private func lnoteInTheFuture(_ args: [String]) async throws -> Run {
    try await runProgram(URL(fileURLWithPath: faketime!), ["-f", "+8000y", try lnoteURL().path] + args)
}

@Suite struct ClockCLITests {
    @Test(.enabled(if: faketime != nil, "needs faketime (apt-get install faketime)"))
    func aClockPastYear9999IsRefusedAndNothingIsWritten() async throws {
        let tmp = TempDir()
        let lib = tmp.path + "/lib"
        let id = try await newDocument("Now", library: lib)
        let document = lib + "/" + id + ".lnote/document.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: document))

        let new = try await lnoteInTheFuture(["new", "Later", "--library", lib])
        #expect(new.status != 0, "\(new.stdout)")
        #expect(new.stderr.contains("system clock"), "\(new.stderr)")
        let rename = try await lnoteInTheFuture(["rename", id, "Later", "--library", lib])
        #expect(rename.status != 0)
        #expect(rename.stderr.contains("system clock"), "\(rename.stderr)")

        #expect(try Data(contentsOf: URL(fileURLWithPath: document)) == before)
        let list = try await lnote(["list", "--library", lib])
        #expect(list.status == 0 && list.stdout.contains("Now") && !list.stdout.contains("Later"), "\(list.stdout)")
        let verify = try await lnote(["verify", "--library", lib])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }
}
