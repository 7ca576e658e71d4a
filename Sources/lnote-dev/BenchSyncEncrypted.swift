// lnote-dev bench sync --encrypted: encrypted ÷ plain sync time (issue 17, docs/encryption.md §8):
// the one-page round and a full first sync of a 1,000-page library, each against Apache mod_dav,
// medians of alternating runs.
//
//   lnote-dev bench sync --encrypted [--runs N] [--strokes N] [--samples N] [--seed S]

import Foundation
import LulucatCrypto
import LulucatInk
import LulucatStore
import LulucatSync
import LulucatSyncTestSupport

extension SyncBench {
    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// A small PBKDF2 count: the KDF runs once at set-up, not in a round (its cost is `bench crypto`'s).
    static let benchCost = KeyDerivationCost(iterations: 1_000, minimum: 1)

    static func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }

    /// A plain or an encrypted round of `lib` with the collection `folder`.
    struct Side {
        let lib: Library
        let remote: any Remote
        let encrypted: Bool

        static func make(_ server: ApacheServer, _ label: String, encrypted: Bool, library: Library) async throws -> Side {
            let remote = try WebDAVRemote(url: server.url.appendingPathComponent(label + "/"), credentials: nil, timeout: 300)
            try await remote.makeFolder("")
            if encrypted { try await RemoteEncryption.setUp(library: library, remote: remote, passphrase: "bench passphrase", cost: benchCost) }
            return Side(lib: library, remote: remote, encrypted: encrypted)
        }

        func sync() async throws -> SyncReport {
            let r = try await lib.sync(with: remote, options: options)
            guard r.problems.isEmpty, r.skipped.isEmpty else { throw BenchRoundFailure(description: "bench round: \(r.problems) \(r.skipped)") }
            return r
        }
    }

    static func copyLibrary(_ from: String, _ label: String) throws -> Library {
        let to = tempDir(label)
        try FileManager.default.removeItem(atPath: to)
        try FileManager.default.copyItem(atPath: from, toPath: to)
        try? FileManager.default.removeItem(atPath: to + "/.sync")
        return Library(root: to)
    }

    static func encryptedBench(_ server: ApacheServer, runs: Int, strokes: Int, samples: Int, seed: UInt64) async throws {
        let clock = ContinuousClock()
        say("encrypted ÷ plain sync time against Apache mod_dav on 127.0.0.1 (\(CryptoBackend.name)), medians of \(runs) alternating runs")

        // The one-page round: a 2-page notebook whose first page holds `strokes` strokes; each run
        // adds one stroke to it and syncs.
        var rng = Rng(seed: seed)
        let source = Library(root: tempDir("enc-one"))
        let doc = try await source.createDocument(title: "One page").id
        try await withSession(source, doc) { s in
            let first = await s.pageIDs()[0]
            for _ in 0..<strokes { try await s.append(stroke(&rng, samples: samples), to: first) }
            let p = try await s.addPage()
            try await s.append(stroke(&rng, samples: samples), to: p)
        }
        let plain = try await Side.make(server, "one-plain", encrypted: false, library: try copyLibrary(source.root, "one-p"))
        let sealed = try await Side.make(server, "one-sealed", encrypted: true, library: try copyLibrary(source.root, "one-s"))
        for side in [plain, sealed] { _ = try await side.sync() }
        var times: [Bool: [Double]] = [false: [], true: []]
        var bytes: [Bool: Int] = [:]
        for run in 0..<(2 * runs) {
            let side = run % 2 == 0 ? (run % 4 == 0 ? plain : sealed) : (run % 4 == 1 ? sealed : plain)
            let st = stroke(&rng, samples: samples)
            try await withSession(side.lib, doc) { s in try await s.append(st, to: await s.pageIDs()[0]) }
            let t0 = clock.now
            let r = try await side.sync()
            times[side.encrypted]!.append(ms(clock.now - t0))
            bytes[side.encrypted] = r.bytesSent
        }
        let onePlain = median(times[false]!), oneSealed = median(times[true]!)
        say("one edited page (\(strokes) strokes of \(samples) samples, 2-page notebook): plain \(f(onePlain)) ms, encrypted \(f(oneSealed)) ms, "
            + "ratio \(f(oneSealed / onePlain, 3)); bytes sent \(bytes[false]!) / \(bytes[true]!)")

        // A full first sync of a 1,000-page library: 10 notebooks of 100 pages, 5 strokes of
        // `samples` samples a page.
        let big = Library(root: tempDir("enc-big"))
        for d in 0..<10 {
            let id = try await big.createDocument(title: "Notebook \(d)").id
            try await withSession(big, id) { s in
                for p in 0..<100 {
                    let page = p == 0 ? await s.pageIDs()[0] : try await s.addPage()
                    for _ in 0..<5 { try await s.append(stroke(&rng, samples: samples), to: page) }
                }
            }
        }
        var first: [Bool: [Double]] = [false: [], true: []]
        var firstBytes: [Bool: Int] = [:]
        for run in 0..<(2 * runs) {
            let encrypted = run % 4 == 1 || run % 4 == 2
            let side = try await Side.make(server, "big-\(run)", encrypted: encrypted, library: try copyLibrary(big.root, "big-\(run)"))
            let t0 = clock.now
            let r = try await side.sync()
            first[encrypted]!.append(ms(clock.now - t0))
            firstBytes[encrypted] = r.bytesSent
            try? FileManager.default.removeItem(atPath: side.lib.root)
        }
        let bigPlain = median(first[false]!), bigSealed = median(first[true]!)
        say("first sync of a 1,000-page library (10 × 100 pages, 5 strokes a page): plain \(f(bigPlain)) ms, encrypted \(f(bigSealed)) ms, "
            + "ratio \(f(bigSealed / bigPlain, 3)); bytes sent \(firstBytes[false]!) / \(firstBytes[true]!)")
        say("runs (ms): one page plain \(times[false]!.map { f($0) }), encrypted \(times[true]!.map { f($0) }); "
            + "first sync plain \(first[false]!.map { f($0, 0) }), encrypted \(first[true]!.map { f($0, 0) })")
    }

}

/// A bench round that met problems or skipped a document (the bench wants clean rounds only).
struct BenchRoundFailure: Error, CustomStringConvertible {
    let description: String
}
