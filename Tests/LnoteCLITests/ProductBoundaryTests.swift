// What an app links is the engine alone: no library product reaches a workshop target (the
// generators, the crash harness, the fuzz checks, the developers' tool), and `lnote help` lists a
// person's commands only. Read from the package as SwiftPM sees it (`swift package dump-package`).

import Foundation
import Testing

/// The package's root folder, from this file's path (Tests/LnoteCLITests/ProductBoundaryTests.swift).
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// The `swift` driver that runs this test, if it can be found.
private func swiftDriver() -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for dir in path.split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent("swift")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}

@Suite("The product apart from the workshop")
struct ProductBoundaryTests {
    static let workshop: Set<String> = ["LulucatHandwriting", "LulucatStoreTesting", "LulucatInterchangeTesting", "lnote-dev",
                                         "LulucatSyncTestSupport", "LulucatSyncTesting"]
    /// The opt-in products (the SQLite engine, thumbnails, maintenance) and what they link, none of which the
    /// LulucatStore product may reach.
    static let optIn: Set<String> = ["LulucatStoreSQLite", "LulucatSQLite", "CSQLite", "CLulucatVFS",
                                     "LulucatStoreThumbnails", "LulucatRender", "CJPEG", "CZlib",
                                     "LulucatStoreMaintenance"]

    /// The manifest as JSON. A scratch path of its own keeps it off the build folder's lock,
    /// which `swift test` holds while this runs.
    static func manifest() async throws -> [String: Any] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lnote-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let r = try await runProgram(try #require(swiftDriver()), ["package", "--package-path", packageRoot.path, "--scratch-path", scratch.path, "dump-package"])
        guard r.status == 0 else { throw CocoaError(.fileReadCorruptFile) }
        let data = Data(r.stdout.utf8)
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("no library product reaches a workshop target, directly or through its dependencies",
          .enabled(if: swiftDriver() != nil, "needs the swift driver on PATH"))
    func productsLinkTheEngineAlone() async throws {
        let m = try await Self.manifest()
        let targets = try #require(m["targets"] as? [[String: Any]])
        var dependencies: [String: [String]] = [:]
        for t in targets {
            let name = try #require(t["name"] as? String)
            let deps = (t["dependencies"] as? [[String: Any]] ?? []).compactMap { d -> String? in
                // {"byName": [name, condition]} or {"target": [name, condition]}
                (d["byName"] as? [Any])?.first as? String ?? (d["target"] as? [Any])?.first as? String
            }
            dependencies[name] = deps
        }
        #expect(Set(dependencies.keys).isSuperset(of: Self.workshop), "the workshop targets exist")
        let products = try #require(m["products"] as? [[String: Any]])
        var checkedLibraries = 0
        var sawStore = false
        for product in products {
            let name = try #require(product["name"] as? String)
            let type = product["type"] as? [String: Any] ?? [:]
            guard type["library"] != nil else { continue }
            checkedLibraries += 1
            var reached = Set<String>()
            var stack = product["targets"] as? [String] ?? []
            while let t = stack.popLast() {
                guard reached.insert(t).inserted else { continue }
                stack += dependencies[t] ?? []
            }
            #expect(!reached.isEmpty)
            #expect(reached.isDisjoint(with: Self.workshop), "\(name) reaches \(reached.intersection(Self.workshop).sorted())")
            #expect(!Self.workshop.contains(name))
            // The store alone links no SQLite and no renderer: the opt-in LulucatStoreSQLite and
            // LulucatStoreThumbnails bring them (issue 12).
            if name == "LulucatStore" {
                #expect(reached.isDisjoint(with: Self.optIn), "LulucatStore reaches \(reached.intersection(Self.optIn).sorted())")
                sawStore = true
            }
            if name == "LulucatStoreSQLite" { #expect(reached.isSuperset(of: ["LulucatStore", "LulucatSQLite", "CSQLite"])) }
            if name == "LulucatStoreThumbnails" { #expect(reached.isSuperset(of: ["LulucatStore", "LulucatRender"])) }
        }
        #expect(sawStore)
        #expect(checkedLibraries >= 3)
    }

    @Test("lnote help lists a person's commands; the developers' commands are in lnote-dev")
    func developerCommandsAreApart() async throws {
        let help = try await lnote(["help"])
        #expect(help.status == 0)
        let listed = help.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed.contains("demo") && listed.contains("list"))
        #expect(!listed.contains("bench") && !listed.contains("crashcheck"), "\(listed)")
        #expect(try await lnote(["bench", "codec"]).status == 64)
        #expect(try await lnote(["crashcheck"]).status == 64)

        let dev = try await lnoteDev(["help"])
        #expect(dev.status == 0)
        #expect(dev.stdout.contains("  bench") && dev.stdout.contains("  crashcheck"), "\(dev.stdout)")
        #expect(try await lnoteDev(["nope"]).status == 64)
    }

    /// Adding an engine is its folder plus the engine table (Sources/LulucatStore/Engines/
    /// Engines.swift): no other file of the store names a concrete engine type or chooses by an
    /// engine's case. Read from the sources, so a new shortcut fails here by file and line.
    @Test("only the engines' folder knows the engines")
    func onlyTheEnginesFolderKnowsTheEngines() async throws {
        let store = packageRoot.appendingPathComponent("Sources/LulucatStore")
        let engines = store.appendingPathComponent("Engines").path + "/"
        let concrete = try Regex(#"\b(SQLiteEngine|JournalEngine|SnapshotEngine|SQLiteContentStore)\b(?!Error)"#)
        let choosing = try Regex(#"(==|!=|case|\?\?)\s*\.(snapshot|journal|sqlite)\b|\b(as[?!]?|is)\s+(SQLite|Journal|Snapshot)Engine\b"#)
        var offenders: [String] = []
        var files = 0
        let walker = FileManager.default.enumerator(atPath: store.path)
        while let relative = walker?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let path = store.path + "/" + relative
            guard !path.hasPrefix(engines) else { continue }
            files += 1
            let text = try String(contentsOfFile: path, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                if code.contains(concrete) || code.contains(choosing) { offenders.append("\(relative):\(n + 1): \(code)") }
            }
        }
        #expect(files > 20, "the store's sources were not found under \(store.path)")
        #expect(offenders.isEmpty, "outside Engines/: \(offenders.joined(separator: "\n"))")
    }
}
