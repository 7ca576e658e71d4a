// When the journal engine compacts and how it preallocates its journals.

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

    public init(compactAfterBytes: Int = 4 << 20, compactAfterFrames: Int = 4096,
                preallocationChunk: Int = 256 << 10, compactOnClose: Bool = true) {
        self.compactAfterBytes = max(1, compactAfterBytes)
        self.compactAfterFrames = max(1, compactAfterFrames)
        self.preallocationChunk = max(0, preallocationChunk)
        self.compactOnClose = compactOnClose
    }
}
