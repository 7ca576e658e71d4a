// What can be wrong with an InkML file, with the line and column where the reader found it.

/// An InkML file that cannot be imported. `line` and `column` (1-based) point into the file when
/// the problem has a place; `description` is a sentence a person can act on.
public struct InkMLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, for an app to branch on (every kind has its sentence in
    /// `localizedDescription`).
    public enum Kind: String, Sendable, CaseIterable {
        /// Not well-formed XML (the XML parser's own message is in `detail`).
        case malformedXML
        /// Well-formed XML whose root is not `<ink>`.
        case notInkML
        /// Over a bound: file size, points, elements.
        case tooLarge
        /// Trace data that does not follow the InkML grammar or its trace format.
        case invalidTrace
        /// A `contextRef`, `traceFormatRef`, `brushRef` or `priorRef` to an id that is not defined.
        case invalidReference
        /// A feature the reader refuses (entity declarations, references to other files).
        case unsupported
        /// The reading task was cancelled (the reader checks between traces); nothing was made.
        case cancelled
    }

    /// What is wrong.
    public var kind: Kind
    /// The line (1-based) where the reader found it, when it has a place.
    public var line: Int?
    /// The column (1-based) on that line.
    public var column: Int?
    /// The reader's own account, for a log (never shown as the sentence).
    public var detail: String

    /// An error of `kind` at `line` and `column` when known, with the technical `detail`.
    public init(_ kind: Kind, line: Int? = nil, column: Int? = nil, _ detail: String) {
        self.kind = kind
        self.line = line
        self.column = column
        self.detail = detail
    }

    /// The problem for a log, with its line and column.
    public var description: String {
        switch (line, column) {
        case let (l?, c?): return "InkML, line \(l), column \(c): \(detail)"
        case let (l?, nil): return "InkML, line \(l): \(detail)"
        default: return "InkML: \(detail)"
        }
    }
}
