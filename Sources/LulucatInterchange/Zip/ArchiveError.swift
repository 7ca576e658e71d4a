// What can be wrong with a zip archive we write or read, naming the entry when there is one.

/// A zip archive that cannot be written or read safely. `kind` says what went wrong, `entry` names
/// the archive member when the problem belongs to one, and `description` is a sentence a person
/// can act on.
public struct ArchiveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, for an app to branch on (every kind has its sentence in
    /// `localizedDescription`).
    public enum Kind: String, Sendable, CaseIterable {
        /// No end-of-central-directory record: the bytes are not a zip archive (or lost their end).
        case notAnArchive
        /// A record or an entry's data runs past the end of the bytes, or its offsets do not fit.
        case truncated
        /// A structure is inconsistent (local header disagrees with the central directory, ...).
        case malformed
        /// A name that could escape the destination or is not portable (absolute, `..`, `\`, ...).
        case unsafeName
        /// An entry whose attributes say it is a symbolic link.
        case symlink
        /// An entry whose attributes say it is a device, fifo or socket.
        case specialFile
        /// Two entries with the same name, or names equal on a case-insensitive file system.
        case duplicateName
        /// An encrypted entry.
        case encrypted
        /// A compression method other than stored (0) and deflate (8).
        case unsupportedMethod
        /// Zip64, multi-disk archives and other features this reader refuses.
        case unsupportedFeature
        /// A name the caller's layout does not allow.
        case outsideLayout
        /// The data does not inflate to exactly the declared size.
        case sizeMismatch
        /// The CRC-32 of the data does not match the declared one.
        case checksumMismatch
        /// Entry count, total size or compression ratio beyond the reader's limits (zip bombs).
        case limitExceeded
        /// Too big for a zip archive without zip64 (4 GiB, 65,535 entries).
        case tooLarge
        /// zlib failed or the writer's output sink threw.
        case io
    }

    /// What went wrong.
    public var kind: Kind
    /// The entry's name as the archive gives it, if the problem belongs to one entry.
    public var entry: String?
    /// The reader's or writer's own account, for a log (never shown as the sentence).
    public var detail: String

    /// An error of `kind`, about `entry` when it belongs to one, with the technical `detail`.
    public init(_ kind: Kind, entry: String? = nil, _ detail: String) {
        self.kind = kind
        self.entry = entry
        self.detail = detail
    }

    /// The problem for a log, naming the entry.
    public var description: String {
        if let entry { return "zip archive entry \"\(entry)\": \(detail)" }
        return "zip archive: \(detail)"
    }
}
