// `lnote-dev bench crypto` is registered and refuses bad arguments with a usage error. Its figures
// come from a release build only (docs/encryption.md §7), so no run is timed here.

import Testing

@Suite struct BenchCryptoCLITests {
    @Test func usageErrors() async throws {
        let zero = try await lnoteDev(["bench", "crypto", "--rounds", "0"])
        #expect(zero.status == 64 && zero.stderr.contains("--rounds must be at least 1"))
        #expect(try await lnoteDev(["bench", "crypto", "extra"]).status == 64)
        let help = try await lnoteDev(["bench"])
        #expect(help.status == 64 && help.stderr.contains("crypto"))
    }
}
