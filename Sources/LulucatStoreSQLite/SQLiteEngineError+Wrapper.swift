// The SQLite wrapper's errors in the store's terms: SQLiteEngineError and SQLiteFailure are
// LulucatStore's (they need no SQLite); this module makes them from LulucatSQLite's SQLiteError.

import Foundation
import LulucatSQLite
import LulucatStore

extension SQLiteFailure {
    /// The wrapper's error, as values.
    init(_ error: SQLiteError) {
        self.init(extendedCode: error.extendedCode, description: error.description)
    }
}

extension SQLiteEngineError {
    /// Classifies a wrapper error: damage and locks get their own cases, the rest stays as reported.
    init(_ error: SQLiteError, file: String) {
        switch error.code {
        case .notADatabase, .corrupt:
            self = .corrupt(file: file, detail: error.message)
        case .busy, .locked:
            self = .inUse(file: file)
        default:
            self = .database(file: file, SQLiteFailure(error))
        }
    }

    /// `.database` from the wrapper's error.
    static func database(file: String, _ error: SQLiteError) -> SQLiteEngineError {
        .database(file: file, SQLiteFailure(error))
    }
}
