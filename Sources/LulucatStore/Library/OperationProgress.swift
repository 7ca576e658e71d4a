// How far a long operation of the store is: import, export, copy, verify (migration has its own,
// `MigrationProgress`).

/// One report of a long operation's progress, handed to the `progress` callback the operation
/// takes. Reports of one run are monotonic (`completed` never goes down, `total` is fixed) and the
/// last one of a run that succeeds is `completed == total`. Units are the operation's steps: files
/// for an import of an archive, an export or a copy, traces for an import of InkML (each plus one
/// for the final step that makes the result appear), pages for a verification.
///
/// The callback runs on the calling thread, between steps; cancellation is checked at the same
/// places (a cancelled task throws `StoreError.cancelled` and leaves nothing behind).
public struct OperationProgress: Sendable, Equatable, CustomStringConvertible {
    public enum Operation: String, Sendable { case importing, exporting, copying, verifying }
    public var operation: Operation
    public var completed: Int
    public var total: Int

    public init(_ operation: Operation, completed: Int, total: Int) {
        self.operation = operation
        self.completed = completed
        self.total = total
    }

    /// 0 to 1; 1 for an operation with nothing to do.
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    public var description: String { "\(operation.rawValue) \(completed)/\(total)" }
}

/// Makes reports for a callback, never one lower than the last (an operation that starts a step
/// again, as a consistent read does when the files change under it, does not go backwards).
public struct ProgressReporter: Sendable {
    public let operation: OperationProgress.Operation
    public let total: Int
    public private(set) var reported = -1

    public init(_ operation: OperationProgress.Operation, total: Int) {
        self.operation = operation
        self.total = max(0, total)
    }

    /// Reports `completed` (at most `total`) unless it is not above the last report.
    public mutating func report(_ completed: Int, to callback: (OperationProgress) -> Void) {
        let c = min(completed, total)
        guard c > reported else { return }
        reported = c
        callback(OperationProgress(operation, completed: c, total: total))
    }

    /// Throws `.cancelled` when the current task is cancelled.
    public static func checkCancellation() throws(StoreError) {
        if Task.isCancelled { throw .cancelled }
    }
}
