// A journal examined from outside a session (benchmarks, `lnote info`), and a page read whichever
// engine stores it.

import Foundation
import LulucatInk

/// What a page's journal holds, read without a session and without changing a byte.
package struct JournalSummary: Sendable, Equatable {
    /// The journal generation, or nil when there is no journal or its header is unreadable.
    package var generation: UInt64?
    /// Valid frames applied on top of the snapshot (0 for a stale journal).
    package var frames: Int
    /// Bytes of those frames.
    package var frameBytes: Int
    /// The journal file's size (preallocated zeros included).
    package var fileSize: Int
    /// "missing", "current", "stale" or "damaged: ...".
    package var state: String
}

package enum JournalFile {
    /// Summarizes `pages/<page>.journal` of a package.
    package static func summary(_ package: DocumentPackage, page: UUID, fileSystem: any FileSystem = PosixFileSystem()) throws(StoreError) -> JournalSummary {
        let r = try JournalReplay.read(package, page: page, fileSystem: fileSystem)
        let state: String
        switch r.journal {
        case .missing: state = "missing"
        case .current: state = "current"
        case .stale: state = "stale"
        case .damaged(let why): state = "damaged: " + why
        }
        return JournalSummary(generation: r.header?.generation, frames: r.frameCount, frameBytes: r.frameBytes,
                              fileSize: r.fileSize, state: state)
    }

    /// The payload bytes one save of `changes` takes in a frame (for benchmarks), whether or not
    /// one frame holds them.
    package static func payloadCount(for changes: [PageChange], codec: SampleCodecID = .compact) throws(StoreError) -> Int {
        do { return try JournalChangeCodec(codec: codec).encodeSave(changes).payload.count } catch { throw .invalidArgument("\(error)") }
    }

    /// The bytes of the frame one save of `changes` appends (for benchmarks' plain-file floors).
    package static func frame(for changes: [PageChange], codec: SampleCodecID = .compact,
                             generation: UInt64 = 1, sequence: UInt64 = 0) throws(StoreError) -> [UInt8] {
        let encoded: (type: UInt8, payload: [UInt8])
        do { encoded = try JournalChangeCodec(codec: codec).encodeSave(changes) } catch { throw .invalidArgument("\(error)") }
        return JournalFormat.encodeFrame(type: encoded.type, payload: encoded.payload, generation: generation, sequence: sequence)
    }
}
