// When the journal engine compacts, how it preallocates its journals, how it codes their strokes.

import LulucatInk

/// Options of the journal engine (`SessionOptions.journal`).
public struct JournalOptions: Sendable, Equatable {
    /// Compact a page once its journal holds this many bytes of frames.
    public var compactAfterBytes: Int
    /// Compact a page once its journal holds this many frames.
    public var compactAfterFrames: Int
    /// The journal grows by this many zero bytes at a time, written and synced once, so that most
    /// appends overwrite allocated blocks and `fdatasync` has no file size to commit. 0 appends
    /// at the end of the file instead (every append then changes the file's size).
    public var preallocationChunk: Int
    /// Merge every edited page's journal into its snapshot when the session closes.
    public var compactOnClose: Bool
    /// The sample codec of strokes in journal frames; nil uses the document's codec. fixed16 by
    /// default: the journal is written for append latency and merged away, the snapshot for size.
    /// A stroke's frame stays within one 4 KiB block either way, so the sync costs the same, while
    /// coding it is a copy instead of the compact codec's search (measured: the engine's append
    /// 1.01 x the plain floor with fixed16 frames, 1.19 x with compact ones; replaying 1,000
    /// frames 1.3 ms against 5.7 ms).
    public var frameCodec: SampleCodecID?
    /// The largest frame payload a save writes (`JournalFormat.maxPayload`, 64 MiB); a save whose
    /// frame would be larger is written as a compaction. Lowered only by tests, so that they need
    /// no 64 MiB of changes.
    package var maxFramePayload = JournalFormat.maxPayload

    /// Options with the given thresholds; out-of-range values are clamped (at least 1 byte and 1
    /// frame before a compaction, a preallocation of 0 or more bytes).
    ///
    /// - Parameters:
    ///   - compactAfterBytes: bytes of frames in a page's journal that trigger its compaction
    ///     (4 MiB by default).
    ///   - compactAfterFrames: frames in a page's journal that trigger its compaction (4,096).
    ///   - preallocationChunk: bytes of zeros the journal grows by at a time (256 KiB; 0: none).
    ///   - compactOnClose: whether `close()` merges every edited page's journal into its snapshot.
    ///   - frameCodec: the sample codec of strokes in frames; nil uses the document's codec.
    public init(compactAfterBytes: Int = 4 << 20, compactAfterFrames: Int = 4096,
                preallocationChunk: Int = 256 << 10, compactOnClose: Bool = true,
                frameCodec: SampleCodecID? = .fixed16) {
        self.compactAfterBytes = max(1, compactAfterBytes)
        self.compactAfterFrames = max(1, compactAfterFrames)
        self.preallocationChunk = max(0, preallocationChunk)
        self.compactOnClose = compactOnClose
        self.frameCodec = frameCodec
    }
}
