// `lnote-dev bench crypto`: seal and open throughput of the encrypted object format against a
// plain copy of the same bytes, blob naming, and the PBKDF2 count calibrated on this machine.

import Foundation
import LulucatCrypto

/// For each object size, in rounds that run every measurement side by side: a plain copy into a
/// fresh buffer (the floor: what handing the bytes over costs without encryption), `seal`, `open`
/// and `blobName`. Prints medians in MB/s and the time ratios encrypted ÷ plain, so the sync bench
/// can report the same ratio for whole rounds.
struct CryptoBench {
    static let usage = "lnote-dev bench crypto [--rounds N] [--json]"
    static let sizes = [4 << 10, 64 << 10, 1 << 20, 16 << 20]

    struct Figures {
        var size: Int
        var copyMBps, sealMBps, openMBps, nameMBps: Double
        var sealRatio: Double { copyMBps / sealMBps }
        var openRatio: Double { copyMBps / openMBps }
    }

    static func run(arguments: [String]) async throws {
        let args = try Arguments(arguments, valued: ["rounds"], flags: ["json"])
        guard args.positionals.isEmpty else { throw UsageError("bench crypto takes no positional arguments") }
        let rounds = try args.int("rounds") ?? 9
        guard rounds >= 1 else { throw UsageError("--rounds must be at least 1") }

        let key = try LibraryKey.generate()
        let document = UUID()
        var figures: [Figures] = []
        for size in sizes {
            let plaintext = try CryptoBackend.randomBytes(size)
            let name = try key.blobName(document: document, content: plaintext)
            let sealed = try key.seal(kind: .blob, document: document, name: name, plaintext: plaintext)
            // Each timed step handles about 32 MiB, so small objects are timed over many calls.
            let repeats = max(1, (32 << 20) / size)
            var copy: [Double] = [], seal: [Double] = [], open: [Double] = [], naming: [Double] = []
            var sink = 0
            for _ in 0..<rounds {
                copy.append(measure {
                    for _ in 0..<repeats {
                        let out = [UInt8](unsafeUninitializedCapacity: size + EncryptedObject.overhead) { buffer, n in
                            plaintext.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
                            n = size + EncryptedObject.overhead
                        }
                        sink &+= Int(out[size / 2])
                    }
                })
                seal.append(try measure {
                    for _ in 0..<repeats {
                        sink &+= try key.seal(kind: .blob, document: document, name: name, plaintext: plaintext).count
                    }
                })
                open.append(try measure {
                    for _ in 0..<repeats {
                        sink &+= try key.open(kind: .blob, document: document, name: name, sealed: sealed).count
                    }
                })
                naming.append(try measure {
                    for _ in 0..<repeats { sink &+= try key.blobName(document: document, content: plaintext).utf8.count }
                })
            }
            if sink == 42 { print("") }  // keeps the work from being optimized away
            let megabytes = Double(size * repeats) / 1_000_000
            figures.append(Figures(size: size, copyMBps: megabytes / median(copy), sealMBps: megabytes / median(seal),
                                   openMBps: megabytes / median(open), nameMBps: megabytes / median(naming)))
        }

        let iterations = try RemoteKeys.calibratedIterations()
        let passphrase = "bench passphrase"
        let (settings, _) = try RemoteKeys.create(passphrase: passphrase)
        var unlocks: [Double] = []
        for _ in 0..<3 { unlocks.append(try measure { _ = try settings.unlock(passphrase: passphrase) }) }
        let unlockMs = median(unlocks) * 1000

        if args.flag("json") {
            let rows = figures.map { f in
                "{\"bytes\": \(f.size), \"copy_mb_per_s\": \(r(f.copyMBps, 1)), \"seal_mb_per_s\": \(r(f.sealMBps, 1)), "
                    + "\"open_mb_per_s\": \(r(f.openMBps, 1)), \"blob_name_mb_per_s\": \(r(f.nameMBps, 1)), "
                    + "\"seal_vs_copy\": \(r(f.sealRatio, 2)), \"open_vs_copy\": \(r(f.openRatio, 2))}"
            }
            print("{\"backend\": \"\(CryptoBackend.name)\", \"rounds\": \(rounds), \"objects\": [\(rows.joined(separator: ", "))], "
                  + "\"pbkdf2_iterations\": \(iterations), \"pbkdf2_floor\": \(RemoteKeys.iterationFloor), "
                  + "\"unlock_ms\": \(r(unlockMs, 1))}")
        } else {
            print("crypto bench: \(CryptoBackend.name), ChaCha20-Poly1305 objects, median of \(rounds) rounds")
            print("  size       copy MB/s   seal MB/s   open MB/s   name MB/s   seal÷copy   open÷copy")
            for f in figures {
                let label = f.size >= 1 << 20 ? "\(f.size >> 20) MiB" : "\(f.size >> 10) KiB"
                print("  " + [label.padding(toLength: 9, withPad: " ", startingAt: 0),
                              String(format: "%9.0f", f.copyMBps), String(format: "%11.0f", f.sealMBps),
                              String(format: "%11.0f", f.openMBps), String(format: "%11.0f", f.nameMBps),
                              String(format: "%11.1f", f.sealRatio), String(format: "%11.1f", f.openRatio)].joined(separator: " "))
            }
            print("  PBKDF2-HMAC-SHA256 calibrated to \(RemoteKeys.calibrationTarget): \(iterations) iterations (floor \(RemoteKeys.iterationFloor)); unlock \(String(format: "%.1f", unlockMs)) ms")
        }
    }
}
