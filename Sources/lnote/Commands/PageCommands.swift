// lnote pages and lnote page add|remove|move: a document's pages, listed with the references the
// other commands take (`--page N` or an id prefix), and changed through a document session.

import Foundation
import LulucatInk
import LulucatStore

struct PagesCommand: Command {
    static let name = "pages"
    static let abstract = "List a document's pages with the numbers and ids that --page and page take."
    static let options: [OptionSpec] = [.library, .json]
    static let examples = ["lnote pages \"Lecture notes\""]
    static let usage = "lnote pages DOC [--library DIR] [--json]"
    let args: Arguments
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard args.positionals.count == 1 else { throw UsageError("pages takes one document") }
    }
    func run() async throws {
        let info = try DocumentInfo.read(try resolvePackage(args.positionals[0], in: library(args)))
        let m = info.metadata
        if args.flag("json") {
            printJSON(["id": m.id.uuidString, "title": m.title, "pages": m.pages.enumerated().map { i, p -> [String: Any] in
                ["number": i + 1, "id": p.id.uuidString, "width_pt": Double(p.width) / 10, "height_pt": Double(p.height) / 10,
                 "elements": p.elementCount, "bytes": info.pageBytes[p.id] ?? 0, "modified": iso(p.modified)]
            }])
            return
        }
        print("'\(terminalSafe(m.title))' (\(m.id.uuidString)): \(m.pages.count) page\(m.pages.count == 1 ? "" : "s")")
        let header = ["PAGE", "ID", "SIZE (pt)", "ELEMENTS", "BYTES", "MODIFIED"]
        var rows = [header]
        let time = LocalTime()
        for (i, p) in m.pages.enumerated() {
            rows.append([String(i + 1), String(p.id.uuidString.prefix(8)), "\(pt(p.width))x\(pt(p.height))",
                         String(p.elementCount), String(info.pageBytes[p.id] ?? 0), time.string(p.modified)])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            print("  " + row.enumerated().map { c, cell in c == row.count - 1 ? cell : cell.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                .joined(separator: "  "))
        }
        print("A page is named by its number or its id (or 4 or more characters of it): --page 2, page remove DOC \(m.pages.first.map { String($0.id.uuidString.prefix(8)) } ?? "ID")")
    }
    func pt(_ v: Int32) -> String {
        v % 10 == 0 ? String(v / 10) : String(format: "%.1f", Double(v) / 10)
    }
}

struct PageCommand: Command {
    static let name = "page"
    static let abstract = "Add, remove or move a page of a document (PAGE: its number or id, as pages lists them)."
    static let options: [OptionSpec] = [.valued("at", "N", default: "after the last page", "page add: the new page's number."), .valued("size", "letter|a4|WxH", default: "letter", "page add: the page size (WxH in points)."), .valued("to", "N", "page move: the page's new number (required)."), .flag("yes", "page remove: remove a page that holds ink."), .library, .json]
    static let examples = ["lnote page add \"Lecture notes\" --at 1 --size a4", "lnote page move \"Lecture notes\" 3 --to 1", "lnote page remove \"Lecture notes\" 2 --yes"]
    static let usage = """
        lnote page add DOC [--at N] [--size letter|a4|WxH] [--library DIR] [--json]
        lnote page remove DOC PAGE [--yes] [--library DIR] [--json]
        lnote page move DOC PAGE --to N [--library DIR] [--json]
        """
    enum Action: String, CaseIterable { case add, remove, move }
    static let actions = Action.allCases.map(\.rawValue)
    let args: Arguments
    let action: Action
    let canvas: QuantizedSize
    init(arguments: [String]) throws {
        args = try Arguments(arguments, options: Self.options)
        guard let first = args.positionals.first, let action = Action(rawValue: first) else {
            throw UsageError("say page add, page remove or page move")
        }
        self.action = action
        let p = args.positionals.count
        switch action {
        case .add:
            guard p == 2 else { throw UsageError("page add takes one document") }
            guard args.value("to") == nil && !args.flag("yes") else { throw UsageError("page add takes --at N and --size, not --to or --yes") }
        case .remove:
            guard p == 3 else { throw UsageError("page remove takes a document and a page") }
            guard args.value("to") == nil && args.value("at") == nil && args.value("size") == nil else { throw UsageError("page remove takes only --yes") }
        case .move:
            guard p == 3 else { throw UsageError("page move takes a document and a page") }
            guard args.value("to") != nil else { throw UsageError("page move needs --to N (the page's new number)") }
            guard args.value("at") == nil && args.value("size") == nil && !args.flag("yes") else { throw UsageError("page move takes only --to N") }
        }
        canvas = try PageCommand.canvas(args.value("size"))
        _ = try args.int("at", in: 1...1_000_000)
        _ = try args.int("to", in: 1...1_000_000)
    }

    /// A page size: `letter`, `a4`, or `WxH` in points (1 to 14400, a fifth of a kilometre at most).
    static func canvas(_ name: String?) throws -> QuantizedSize {
        switch name?.lowercased() {
        case nil, "letter": return .letter
        case "a4": return .a4
        case let s?:
            let parts = s.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]),
                  (1...14400).contains(w), (1...14400).contains(h) else {
                throw UsageError("--size takes letter, a4 or WIDTHxHEIGHT in points (1 to 14400), not '\(s)'")
            }
            return QuantizedSize(width: Int32((w * 10).rounded()), height: Int32((h * 10).rounded()))
        }
    }

    func run() async throws {
        let doc = try resolveDocument(args.positionals[1], in: library(args))
        let metadata = try DocumentMetadata.read(doc.package)
        var result: [String: Any] = ["id": doc.id.uuidString, "action": action.rawValue]
        var message: String
        // Checked before the session opens, so a refusal changes nothing.
        var target: (number: Int, id: UUID)?
        if action != .add {
            target = try resolvePage(args.positionals[2], of: metadata)
        }
        let count = metadata.pages.count
        if action == .add, let at = try args.int("at"), at > count + 1 {
            throw UsageError("--at \(at) is outside 1...\(count + 1)")
        }
        if action == .move, let to = try args.int("to"), to > count {
            throw UsageError("--to \(to) is outside 1...\(count)")
        }
        if action == .remove, let target {
            let elements = metadata.pages[target.number - 1].elementCount
            if count == 1 { throw UsageError("page \(target.number) is the document's only page; delete the document instead") }
            if elements > 0 && !args.flag("yes") {
                throw UsageError("page \(target.number) holds \(elements) element\(elements == 1 ? "" : "s"), removed for good with the page; say --yes (lnote duplicate keeps a copy first)")
            }
        }
        let session = try await doc.library.open(doc.id, options: SessionOptions(autosaveDelay: nil))
        do {
            switch action {
            case .add:
                let at = (try args.int("at")).map { $0 - 1 }
                let page = try await session.addPage(canvas: canvas, at: at)
                let number = (at ?? count) + 1
                result["page_id"] = page.uuidString
                result["number"] = number
                message = "Added page \(number) (\(page.uuidString.prefix(8))) to \(doc.id.uuidString)"
            case .remove:
                try await session.removePage(target!.id)
                result["page_id"] = target!.id.uuidString
                message = "Removed page \(target!.number) (\(target!.id.uuidString.prefix(8))) of \(doc.id.uuidString)"
            case .move:
                let to = try args.int("to")!
                try await session.movePage(target!.id, to: to - 1)
                result["page_id"] = target!.id.uuidString
                result["number"] = to
                message = "Moved page \(target!.number) (\(target!.id.uuidString.prefix(8))) to \(to)"
            }
        } catch {
            await session.abandon()
            throw error
        }
        // The change is durable in document.json: a close that fails now (a manifest it cannot
        // write) is repaired by the next open, as Library.rename does.
        do { try await session.close() } catch { await session.abandon() }
        result["page_count"] = (try? DocumentMetadata.read(doc.package).pages.count) ?? count
        if args.flag("json") { printJSON(result) } else { print(message) }
    }
}
