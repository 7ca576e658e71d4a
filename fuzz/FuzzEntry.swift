// The libFuzzer entry point of `fuzz/run.sh`: one binary, the target chosen by LNOTE_FUZZ_TARGET
// (page, document, manifest, journal, inkml, zip). Built as its own module over LulucatStore and
// LulucatInterchange compiled with -enable-testing, so it reaches their internal decoders.

import Foundation
// LulucatInterchange reads XML through FoundationXML; its static library does not make the
// linker take it, this import does.
#if canImport(FoundationXML)
import FoundationXML
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Which decoder this process fuzzes, read once in `LLVMFuzzerInitialize`.
nonisolated(unsafe) private var fuzzTarget = "page"

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>) -> CInt {
    if let t = ProcessInfo.processInfo.environment["LNOTE_FUZZ_TARGET"] { fuzzTarget = t }
    guard FuzzTargets.names.contains(fuzzTarget) else {
        FileHandle.standardError.write(Data("unknown LNOTE_FUZZ_TARGET '\(fuzzTarget)' (\(FuzzTargets.names.joined(separator: ", ")))\n".utf8))
        exit(64)
    }
    // Seeds are real files the project's own writers make, so the fuzzer starts from valid input.
    if let dir = ProcessInfo.processInfo.environment["LNOTE_FUZZ_SEED_DIR"] {
        let extra = ProcessInfo.processInfo.environment["LNOTE_FUZZ_SHARED_INK"]
        for (name, bytes) in FuzzSeeds.files(for: fuzzTarget, sharedInk: extra) {
            _ = FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(bytes))
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
    case "manifest": FuzzTargets.manifest(bytes)
    case "journal": FuzzTargets.journal(bytes)
    case "inkml": FuzzTargets.inkml(bytes)
    default: FuzzTargets.zip(bytes)
    }
    return 0
}
