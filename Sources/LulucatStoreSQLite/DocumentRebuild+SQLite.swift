// Rebuilding a SQLite document's document.json (repair, when document.json is corrupt): its pages
// are the database's, in the order they were first stored, each with what reads of it.
// docs/sqlite-engine.md §5.6.

import Foundation
import LulucatInk
import LulucatStore

extension SQLiteContentStore {
    /// Every page of the database at `package` with the content that reads and checks, in the
    /// order the pages were first stored (`pages.key`). A damaged page gives what salvage keeps
    /// (its rows that check; what the raw pass finds when SQLite cannot reach them). A database
    /// SQLite cannot open at all gives the pages the raw pass over its bytes finds (their canvas
    /// US Letter when the page's row is lost). Nothing is written: the damaged database itself is
    /// rebuilt afterwards by `SQLiteDatabaseRepair.rebuildDamagedDatabase`.
    ///
    /// - Throws: `.contentDatabase` when the file cannot be read, or holds no page at all.
    static func pagesForRebuild(_ package: DocumentPackage, fileSystem fs: any FileSystem) throws(StoreError) -> [(UUID, PageContent)] {
        let path = package.contentDatabasePath
        // Per page: its elements with their z, and whether it read whole.
        var out: [(id: UUID, canvas: QuantizedSize?, rows: [(z: Int64, element: Element)], whole: Bool)] = []
        var incomplete = false
        do throws(SQLiteEngineError) {
            let store = try SQLiteContentStore(path: path, mode: .openExisting, fileSystem: fs)
            defer { store.closeWithoutCheckpoint() }
            let ids: [UUID]
            do { ids = try store.pageIDs() } catch {
                guard isDamage(error) else { throw error }
                ids = []
                incomplete = true
            }
            for id in ids {
                do {
                    let s = try store.salvagePage(id)
                    if !s.isWhole { incomplete = true }
                    out.append((id, s.pageRowDamaged ? nil : s.content.canvasSize, Array(zip(s.zOrder, s.content.elements)).map { (z: $0.0, element: $0.1) }, s.isWhole))
                } catch {
                    guard isDamage(error) else { throw error }
                    incomplete = true
                    out.append((id, nil, [], false))
                }
            }
            if (try? store.integrityProblems())?.isEmpty != true { incomplete = true }
        } catch {
            guard isDamage(error) else { throw .contentDatabase(error) }
            incomplete = true
        }
        if incomplete {
            // What SQLite could not reach, or a file it cannot open: the rows in the file's bytes,
            // merged in z-order into the pages that did not read whole.
            let bytes = try StoreError.io { () throws(FileError) in try fs.readFile(path) }
            let raw = SQLiteFileSalvage(bytes: bytes, knownPages: out.map(\.id))
            for i in out.indices where !out[i].whole {
                guard let found = raw.pages[out[i].id] else { continue }
                var have = Set(out[i].rows.map(\.element.id))
                for row in found.elements where have.insert(row.element.id).inserted { out[i].rows.append(row) }
                out[i].rows.sort { $0.z < $1.z }
                if out[i].canvas == nil { out[i].canvas = found.canvas }
            }
            for id in raw.pages.keys.sortedByUUIDString() where !out.contains(where: { $0.id == id }) {
                let found = raw.pages[id]!
                out.append((id, found.canvas, found.elements.sorted { $0.z < $1.z }, false))
            }
        }
        guard !out.isEmpty else {
            throw .corruptFile(path: path, reason: "no page can be read from the database")
        }
        return out.map { ($0.id, PageContent(canvasSize: $0.canvas ?? PageContent().canvasSize, elements: $0.rows.map(\.element))) }
    }
}
