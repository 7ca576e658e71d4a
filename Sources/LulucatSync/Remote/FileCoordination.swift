// iCloud Drive's ubiquity container (and any folder other processes present) through
// NSFileCoordinator on Apple: every read, write and removal of FolderRemote is coordinated, so the
// iCloud daemon never sees half a write and hands over a file only once it is downloaded.
// Elsewhere a plain pass-through. Apple branch not compiled here (docs/platforms.md).

import Foundation

enum FileCoordination {
    enum Access { case reading, writing, deleting }

    /// Runs `body` on the path under coordination (Apple), or directly (elsewhere). A failure to
    /// coordinate is the remote's `.failed`.
    static func run<T>(_ path: String, _ access: Access, _ body: (String) throws(RemoteError) -> T) throws(RemoteError) -> T {
        #if canImport(Foundation) && (os(iOS) || os(macOS))
        var coordinationError: NSError?
        var result: Result<T, RemoteError> = .failure(.failed(path, "file coordination did not run"))
        let url = URL(fileURLWithPath: path)
        let coordinator = NSFileCoordinator(filePresenter: nil)
        switch access {
        case .reading:
            coordinator.coordinate(readingItemAt: url, options: [], error: &coordinationError) { u in
                result = Result { () throws(RemoteError) in try body(u.path) }
            }
        case .writing:
            coordinator.coordinate(writingItemAt: url, options: .forReplacing, error: &coordinationError) { u in
                result = Result { () throws(RemoteError) in try body(u.path) }
            }
        case .deleting:
            coordinator.coordinate(writingItemAt: url, options: .forDeleting, error: &coordinationError) { u in
                result = Result { () throws(RemoteError) in try body(u.path) }
            }
        }
        if let e = coordinationError { throw .failed(path, "file coordination: \(e.localizedDescription)") }
        return try result.get()
        #else
        return try body(path)
        #endif
    }
}
