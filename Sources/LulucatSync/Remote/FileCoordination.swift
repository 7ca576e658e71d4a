// iCloud Drive's ubiquity container (and any folder other processes present) through
// NSFileCoordinator on Apple: every read, write and removal of FolderRemote is coordinated, so the
// iCloud daemon never sees half a write and hands over a file only once it is downloaded.
// Elsewhere a plain pass-through. Apple branch not compiled here (docs/platforms.md).

import Foundation

enum FileCoordination {
    enum Access { case reading, writing, deleting }

    /// Runs `body` on the path under coordination (Apple), or directly (elsewhere).
    static func run<T>(_ path: String, _ access: Access, _ body: (String) throws -> T) throws -> T {
        #if canImport(Foundation) && (os(iOS) || os(macOS))
        var coordinationError: NSError?
        var result: Result<T, Error> = .failure(CocoaError(.fileReadUnknown))
        let url = URL(fileURLWithPath: path)
        let coordinator = NSFileCoordinator(filePresenter: nil)
        switch access {
        case .reading:
            coordinator.coordinate(readingItemAt: url, options: [], error: &coordinationError) { u in
                result = Result { try body(u.path) }
            }
        case .writing:
            coordinator.coordinate(writingItemAt: url, options: .forReplacing, error: &coordinationError) { u in
                result = Result { try body(u.path) }
            }
        case .deleting:
            coordinator.coordinate(writingItemAt: url, options: .forDeleting, error: &coordinationError) { u in
                result = Result { try body(u.path) }
            }
        }
        if let e = coordinationError { throw e }
        return try result.get()
        #else
        return try body(path)
        #endif
    }
}
