// What can be wrong with the bytes of a page content file.

/// A page content file (or a fragment of one) that cannot be read, and where.
public enum PageFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before a field that needed `needed` more bytes.
    case truncated(offset: Int, needed: Int, available: Int)
    /// The file does not start with the page magic `LNPG`.
    case badMagic
    /// Written by a newer format version than this build reads.
    case unsupportedVersion(UInt16)
    /// A sample codec id this build does not know.
    case unknownCodec(UInt8)
    /// The CRC32C stored in the file does not match its bytes.
    case checksumMismatch(stored: UInt32, computed: UInt32)
    /// A field holds a value that cannot be right (a count beyond what the bytes can hold, ...).
    case invalidField(offset: Int, String)
    /// The model cannot be written as asked (a channel whose length differs from the samples, ...).
    case unencodable(String)

    public var description: String {
        switch self {
        case let .truncated(offset, needed, available):
            return "page content is truncated at byte \(offset): \(needed) more bytes needed, \(available) left"
        case .badMagic:
            return "not a page content file (the magic bytes are not LNPG)"
        case .unsupportedVersion(let v):
            return "page content format version \(v) is newer than this build reads (up to \(PageFile.version))"
        case .unknownCodec(let c):
            return "page content uses an unknown sample codec \(c)"
        case let .checksumMismatch(stored, computed):
            return "page content is corrupt: CRC32C is 0x\(String(computed, radix: 16)) but the file says 0x\(String(stored, radix: 16))"
        case let .invalidField(offset, what):
            return "page content is invalid at byte \(offset): \(what)"
        case .unencodable(let what):
            return "page cannot be encoded: \(what)"
        }
    }
}
