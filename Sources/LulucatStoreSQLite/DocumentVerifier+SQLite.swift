// The checks of a SQLite document's database: present, a database, sound by `quick_check`, and
// holding no page document.json does not list. Every finding names content.sqlite.

import Foundation
import LulucatInk
import LulucatStore

extension DocumentVerifier {
    /// Checks `content.sqlite`; returns whether it can be opened (its pages are read only then).
    ///
    /// Opened as a reader opens it (`readOnly`): an older schema is checked in an in-memory copy,
    /// never upgraded in the file. When SQLite closes the last connection to a database whose WAL a
    /// crash left behind, it may copy that WAL in (the committed content is unchanged).
    func verifyContentDatabase(_ package: DocumentPackage, _ doc: DocumentMetadata,
                               _ add: (Finding.Severity, String, String) -> Void) -> Bool {
        let path = package.contentDatabasePath
        let store: SQLiteContentStore
        do { store = try SQLiteContentStore(path: path, mode: .openExisting, fileSystem: fileSystem, readOnly: true) } catch {
            switch error {
            case .missing: add(.error, path, "the document uses the SQLite engine but its content database is missing")
            default: add(.error, path, "\(error)")
            }
            return false
        }
        defer { store.closeWithoutCheckpoint() }
        do {
            let problems = try store.integrityProblems()
            if !problems.isEmpty {
                let shown = problems.prefix(5).joined(separator: "; ")
                add(.error, path, "the content database is damaged (quick_check found \(problems.count) problem\(problems.count == 1 ? "" : "s"): \(shown)); restore the document from a backup or an export")
                return false
            }
            let listed = Set(doc.pages.map(\.id))
            for id in try store.pageIDs() where !listed.contains(id) {
                add(.warning, path, "holds page \(id), which document.json does not list")
            }
        } catch {
            add(.error, path, "\(error)")
            return false
        }
        if let scan = try? PackageReader.scanPages(package, fileSystem: fileSystem) {
            for id in scan.pageFiles.union(scan.journalFiles).sortedByUUIDString() {
                add(.warning, package.pagesPath + "/" + id.uuidString, "page files beside content.sqlite: left by another engine (an interrupted migration); the database is the document's content")
            }
        }
        return true
    }
}
