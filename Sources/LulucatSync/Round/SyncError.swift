// Why a round stopped.

import Foundation

public enum SyncError: Error, CustomStringConvertible {
    case massDeletion(count: Int, limit: Int, documents: [UUID])
    case remote(RemoteError)
    case local(String)

    public var description: String {
        switch self {
        case let .massDeletion(count, limit, _):
            return "this sync would move \(count) documents to the trash (more than \(limit)); nothing was changed. "
                + "If that is what you want, run it again with a larger limit (lnote sync --trash-limit N)"
        case .remote(let e): return e.description
        case .local(let m): return m
        }
    }
}
