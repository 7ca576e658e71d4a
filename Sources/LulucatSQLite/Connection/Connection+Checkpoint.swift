// WAL checkpoints, checked: a checkpoint that could not copy every frame is an error, because the
// callers run it precisely so that the database file alone holds everything.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// `wal_checkpoint` modes.
package enum CheckpointMode: String, Sendable {
    case passive = "PASSIVE"
    case full = "FULL"
    case restart = "RESTART"
    /// Like restart, then truncates the WAL file to zero bytes.
    case truncate = "TRUNCATE"
}

/// The row `PRAGMA wal_checkpoint` returns.
package struct CheckpointResult: Equatable, Sendable {
    /// 1 when the checkpoint was blocked by another connection (a reader or writer).
    package var busy: Int64
    /// Frames in the WAL (after TRUNCATE: 0), or -1 when the database is not in WAL mode.
    package var logFrames: Int64
    /// Frames copied back into the database file.
    package var checkpointedFrames: Int64

    /// Every frame of the WAL is in the database file.
    package var isComplete: Bool { busy == 0 && logFrames >= 0 && checkpointedFrames == logFrames }
}

extension Connection {
    /// Runs `PRAGMA wal_checkpoint(mode)` and returns its row, without judging it.
    package func walCheckpoint(_ mode: CheckpointMode) throws(SQLiteError) -> CheckpointResult {
        let sql = "PRAGMA wal_checkpoint(\(mode.rawValue))"
        let statement = try prepare(sql)
        guard try statement.step() else {
            throw SQLiteError(extendedCode: ResultCode.error.rawValue, message: "wal_checkpoint returned no row", sql: sql, path: path)
        }
        return CheckpointResult(busy: statement.int64(at: 0), logFrames: statement.int64(at: 1),
                                checkpointedFrames: statement.int64(at: 2))
    }

    /// Copies every WAL frame into the database file and (for `.truncate`) empties the WAL, so the
    /// database file alone holds all committed data.
    ///
    /// ```swift
    /// try db.checkpoint(.truncate)   // now copying db.path alone copies everything
    /// ```
    ///
    /// - Throws: `SQLiteError` with `.busy` when another connection kept the checkpoint from
    ///   finishing (the row says how many frames were copied), `.error` when not in WAL mode.
    @discardableResult
    package func checkpoint(_ mode: CheckpointMode = .truncate) throws(SQLiteError) -> CheckpointResult {
        let result = try walCheckpoint(mode)
        if result.logFrames < 0 {
            throw SQLiteError(extendedCode: ResultCode.error.rawValue, message: "the database is not in WAL mode",
                              sql: "PRAGMA wal_checkpoint(\(mode.rawValue))", path: path)
        }
        guard result.isComplete else {
            throw SQLiteError(extendedCode: ResultCode.busy.rawValue,
                              message: "checkpoint incomplete: \(result.checkpointedFrames) of \(result.logFrames) WAL frames copied (busy=\(result.busy)); another connection is reading or writing",
                              sql: "PRAGMA wal_checkpoint(\(mode.rawValue))", path: path)
        }
        return result
    }
}
