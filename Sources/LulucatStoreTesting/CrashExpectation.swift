// What a library must hold after a step of a crash-check flow, and the check of a disk state
// against it with the real code: list, open (with its repair), read every page, close, verify.

import Foundation
import LulucatStore
import LulucatInk

/// One document as a flow expects it on disk.
public struct ExpectedDocument: Sendable, Equatable {
    public var id: UUID
    public var title: String
    /// Pages in order, with their whole content.
    public var pages: [(id: UUID, content: PageContent)]
    /// Asset files the pages' images show, with their exact bytes.
    public var assets: [UUID: [UInt8]]
    /// Files that must survive byte for byte in `pages/` or `recovered/` (a page file repair moves
    /// aside, a damaged page's original bytes kept by salvage), under any name.
    public var keptBytes: [[UInt8]] = []
    /// Set by a step that must leave the document whole as one version or the other (a
    /// transaction): every crash state then equals one candidate in title, page order and every
    /// page's content together, not page by page.
    public var allOrNone = false

    public init(id: UUID, title: String, pages: [(id: UUID, content: PageContent)] = [], assets: [UUID: [UInt8]] = [:]) {
        self.id = id
        self.title = title
        self.pages = pages
        self.assets = assets
    }

    public static func == (a: ExpectedDocument, b: ExpectedDocument) -> Bool {
        a.id == b.id && a.title == b.title && a.assets == b.assets
            && a.pages.map(\.id) == b.pages.map(\.id) && a.pages.map(\.content) == b.pages.map(\.content)
    }

    public func content(of page: UUID) -> PageContent? { pages.first { $0.id == page }?.content }

    public mutating func setContent(_ content: PageContent, of page: UUID) {
        guard let i = pages.firstIndex(where: { $0.id == page }) else { return }
        pages[i].content = content
    }
}

/// The documents a library must hold, in its root and in its trash.
public struct ExpectedLibrary: Sendable, Equatable {
    public var documents: [UUID: ExpectedDocument] = [:]
    public var trash: [UUID: ExpectedDocument] = [:]
    public init() {}
}

/// Checks one disk state against the last acknowledged expectation and the one the step in flight
/// would reach.
public enum CrashChecker {
    public static let libraryRoot = "/notes-parent/notes"

    /// - Parameters:
    ///   - acknowledged: what every returned call promised.
    ///   - next: what the step in flight would leave, when known; each page may be either version.
    ///   - strictOrder: the page list must be exactly one of the two versions (crash states); off
    ///     for the state after an I/O error, where a step that threw may have created pages whose
    ///     ids it never returned (they must then be empty pages).
    public static func check(_ tree: SimulatedTree, acknowledged: ExpectedLibrary, next: ExpectedLibrary?,
                             strictOrder: Bool) async -> [String] {
        await check(SimulatedFileSystem(tree: tree), acknowledged: acknowledged, next: next, strictOrder: strictOrder)
    }

    /// The same check on a given file system (one that records, to trace the recovery itself).
    public static func check(_ fs: SimulatedFileSystem, acknowledged: ExpectedLibrary, next: ExpectedLibrary?,
                             strictOrder: Bool) async -> [String] {
        let library = Library(root: libraryRoot, fileSystem: fs)
        var problems: [String] = []
        let listed: [LibraryEntry], trashed: [LibraryEntry]
        do {
            listed = try await library.documents()
            trashed = try await library.trashedDocuments()
        } catch {
            return ["the library cannot be listed: \(error)"]
        }
        for entry in listed + trashed where entry.problem != nil && entry.title == "(unreadable)" {
            problems.append("document \(entry.id) is listed but unreadable: \(entry.problem!)")
        }
        let next = next ?? acknowledged
        let ids = Set(acknowledged.documents.keys).union(acknowledged.trash.keys).union(next.documents.keys).union(next.trash.keys)
        var known = Set<UUID>()
        for id in ids.sorted(by: { $0.uuidString < $1.uuidString }) {
            known.insert(id)
            let inRoot = listed.contains { $0.id == id }, inTrash = trashed.contains { $0.id == id }
            let candidates = [acknowledged.documents[id], next.documents[id]].compactMap { $0 }
            let trashCandidates = [acknowledged.trash[id], next.trash[id]].compactMap { $0 }
            // Where the document may be: where either version has it; absent only if one version lacks it.
            let mayBeAbsent = (acknowledged.documents[id] == nil && acknowledged.trash[id] == nil)
                || (next.documents[id] == nil && next.trash[id] == nil)
            if inRoot && inTrash { problems.append("document \(id) is both in the library and in the trash") }
            if inRoot {
                if candidates.isEmpty { problems.append("document \(id) is in the library but should not be"); continue }
                problems += await checkDocument(library.package(id), fs: fs, candidates: candidates, strictOrder: strictOrder)
            } else if inTrash {
                if trashCandidates.isEmpty { problems.append("document \(id) is in the trash but should not be"); continue }
                let package = DocumentPackage(id: id, libraryRoot: library.trashPath)
                problems += await checkDocument(package, fs: fs, candidates: trashCandidates, strictOrder: strictOrder)
            } else if !mayBeAbsent {
                problems.append("document \(id) (\"\(candidates.first?.title ?? trashCandidates.first?.title ?? "")\") was acknowledged but is gone")
            }
        }
        // Anything else visible (a copy or a creation whose id was never returned) must be whole.
        for entry in listed where !known.contains(entry.id) {
            problems += await checkDocument(entry.package, fs: fs, candidates: [], strictOrder: false)
        }
        return problems
    }

    /// Opens a document with the real session (and its repair), compares it with the candidate
    /// versions, closes it and runs the verifier.
    static func checkDocument(_ package: DocumentPackage, fs: SimulatedFileSystem, candidates: [ExpectedDocument],
                              strictOrder: Bool) async -> [String] {
        let name = "document \(package.id)"
        var problems: [String] = []
        // What repair moves aside, or salvage keeps, is in pages/ or recovered/ in every state.
        let mustKeep = candidates.first?.keptBytes.filter { blob in candidates.allSatisfy { $0.keptBytes.contains(blob) } } ?? []
        if !mustKeep.isEmpty {
            var present: [[UInt8]] = []
            for dir in [package.pagesPath, package.recoveredPath] {
                for file in (try? fs.contentsOfDirectory(dir)) ?? [] {
                    if let bytes = try? fs.readFile(dir + "/" + file) { present.append(bytes) }
                }
            }
            for (i, blob) in mustKeep.enumerated() where !present.contains(blob) {
                problems.append("\(name): kept file \(i + 1) (\(blob.count) bytes) is in neither pages/ nor recovered/")
            }
        }
        let session: DocumentSession
        do { session = try await DocumentSession.open(package, fileSystem: fs, options: SessionOptions(autosaveDelay: nil)) } catch {
            return problems + ["\(name) does not open: \(error)"]
        }
        let title = await session.title
        let order = await session.pageIDs()
        var contents: [UUID: PageContent] = [:]
        for page in order {
            do { contents[page] = try await session.content(of: page) } catch {
                problems.append("\(name): page \(page) cannot be read: \(error)")
            }
        }
        if !candidates.isEmpty {
            if !candidates.contains(where: { $0.title == title }) {
                problems.append("\(name): title \"\(title)\" is none of \(candidates.map { "\"\($0.title)\"" })")
            }
            let orders = candidates.map { $0.pages.map(\.id) }
            let knownPages = Set(orders.joined())
            let mustHave = candidates.map { Set($0.pages.map(\.id)) }.reduce(knownPages) { $0.intersection($1) }
            if strictOrder {
                if !orders.contains(order) { problems.append("\(name): page order \(order) is neither version \(orders)") }
            } else {
                for p in mustHave where !order.contains(p) { problems.append("\(name): acknowledged page \(p) is gone") }
            }
            for page in order {
                guard let content = contents[page] else { continue }
                let versions = candidates.compactMap { $0.content(of: page) }
                if versions.isEmpty {
                    if strictOrder || !content.elements.isEmpty {
                        problems.append("\(name): page \(page) should not be there (\(content.elements.count) elements)")
                    }
                } else if !versions.contains(content) {
                    problems.append("\(name): page \(page) is neither its old nor its new version (\(content.elements.count) elements; expected \(versions.map(\.elements.count)))")
                }
            }
            // A transaction in flight: the document is one version whole, never a mix.
            if strictOrder, candidates.contains(where: \.allOrNone) {
                let whole = candidates.contains { c in
                    c.title == title && c.pages.map(\.id) == order && order.allSatisfy { contents[$0] == c.content(of: $0) }
                }
                if !whole {
                    problems.append("\(name): the document mixes the versions of an all-or-none step (title \"\(title)\", \(order.count) pages)")
                }
            }
            // The assets of what is shown must be there, byte for byte.
            for content in contents.values {
                for asset in content.assetIDs {
                    guard let bytes = candidates.lazy.compactMap({ $0.assets[asset] }).first else { continue }
                    let path = DocumentPackage.assetExtensions.sorted().map { package.assetPath(asset, ext: $0) }
                        .first { (try? fs.fileExists($0)) == true }
                    if let path, let onDisk = try? fs.readFile(path) {
                        if onDisk != bytes { problems.append("\(name): asset \(asset) has other bytes than were written") }
                    }
                }
            }
        }
        do { try await session.close() } catch {
            problems.append("\(name) does not close: \(error)")
            await session.abandon()
        }
        // After the open-time repair and a clean close, `lnote verify` must find nothing wrong.
        for f in DocumentVerifier(fileSystem: fs).verify(package) where f.severity == .error {
            problems.append("\(name): verify after repair: \(f.path): \(f.message)")
        }
        return problems
    }
}
