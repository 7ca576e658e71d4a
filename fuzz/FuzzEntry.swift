// The libFuzzer entry point of `fuzz/run.sh`: one binary, the target chosen by LNOTE_FUZZ_TARGET
// (page, document, manifest). Compiled into the LulucatStore module so it reaches the internal decoders.

import Foundation
import LulucatInk

#if canImport(Glibc)
import Glibc
#endif

/// Which decoder this process fuzzes, read once in `LLVMFuzzerInitialize`.
nonisolated(unsafe) private var fuzzTarget = "page"

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>) -> CInt {
    if let t = ProcessInfo.processInfo.environment["LNOTE_FUZZ_TARGET"] { fuzzTarget = t }
    guard ["page", "document", "manifest"].contains(fuzzTarget) else {
        FileHandle.standardError.write(Data("unknown LNOTE_FUZZ_TARGET '\(fuzzTarget)' (page, document, manifest)\n".utf8))
        exit(64)
    }
    // Seeds are real files of a package the store itself writes, so the fuzzer starts from valid input.
    if let dir = ProcessInfo.processInfo.environment["LNOTE_FUZZ_SEED_DIR"] {
        for (name, bytes) in FuzzSeeds.files(for: fuzzTarget) {
            FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(bytes))
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count))
    switch fuzzTarget {
    case "page": FuzzTargets.page(bytes)
    case "document": FuzzTargets.document(bytes)
    default: FuzzTargets.manifest(bytes)
    }
    return 0
}
