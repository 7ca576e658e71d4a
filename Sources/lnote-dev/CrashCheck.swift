// `lnote-dev crashcheck`: every write flow under the crash model and under injected I/O errors.

import Foundation
import LulucatStore
import LulucatStoreTesting
import LulucatSyncTesting

struct CrashCheckCommand: Command {
    static let name = "crashcheck"
    static let abstract = "Check every write flow against every crash state and I/O error the model allows."
    static let usage = "lnote-dev crashcheck [--exhaustive] [--json] [--flow NAME]"

    var exhaustive: Bool
    var json: Bool
    var flowName: String?

    init(arguments: [String]) throws {
        let a = try Arguments(arguments, valued: ["flow"], flags: ["exhaustive", "json"])
        guard a.positionals.isEmpty else { throw UsageError("unexpected argument '\(a.positionals[0])'") }
        exhaustive = a.flag("exhaustive")
        json = a.flag("json")
        flowName = a.value("flow")
        let names = CrashFlow.all.map(\.name) + Self.syncFlows.map(\.name)
        if let f = flowName, !names.contains(f) {
            throw UsageError("no flow named '\(f)'; flows: \(names.map { "'\($0)'" }.joined(separator: ", "))")
        }
    }

    struct FlowFigures: Encodable {
        var flow: String
        var operations: Int
        var calls: Int
        var crashStatesChecked: Int
        var crashStatesEnumerated: Int
        /// Of the states checked, those of a second crash during the recovery from a first.
        var crashStatesDuringRecovery: Int
        var crashStateViolations: Int
        var faultRuns: Int
        var faultsInjected: Int
        var faultViolations: Int
        var examples: [String]
    }

    struct Figures: Encodable {
        var mode: String
        var flows: [FlowFigures]
        var operations: Int
        var crashStatesChecked: Int
        var crashStatesDuringRecovery: Int
        var crashStateViolations: Int
        var faultRuns: Int
        var faultsInjected: Int
        var faultViolations: Int
        var seconds: Double
    }

    /// A client crash anywhere in a sync round that merges a document, per engine (SyncCrashCheck):
    /// each crash state, with the remote as it was then, must be finished by the next rounds with
    /// nothing lost, converged and verify clean. Standard: every crash point once; exhaustive: every state.
    /// "push only": only this device changed, and the round reads the document under its lock alone.
    static let syncFlows: [(name: String, engine: EngineKind, othersPublish: Bool)] = [
        ("sync round (snapshot)", .snapshot, true), ("sync round (journal)", .journal, true),
        ("sync push only (snapshot)", .snapshot, false), ("sync push only (journal)", .journal, false),
    ]

    func run() async throws {
        let started = Date()
        let limits: CrashEnumerationLimits = exhaustive ? .exhaustive : .standard
        let flows = CrashFlow.all.filter { flowName == nil || $0.name == flowName }
        var figures = Figures(mode: exhaustive ? "exhaustive" : "standard", flows: [], operations: 0, crashStatesChecked: 0,
                              crashStatesDuringRecovery: 0, crashStateViolations: 0, faultRuns: 0, faultsInjected: 0, faultViolations: 0, seconds: 0)
        if !json {
            print("flow                          ops  calls  crash states  violations  fault runs  faults  losses")
        }
        for (n, flow) in flows.enumerated() {
            var r = await CrashHarness.explore(flow, limits: limits)
            await CrashHarness.injectFaults(flow, into: &r)
            let f = FlowFigures(flow: r.flow, operations: r.operations, calls: r.calls, crashStatesChecked: r.statesChecked,
                                crashStatesEnumerated: r.statesEnumerated, crashStatesDuringRecovery: r.recoveryStatesChecked,
                                crashStateViolations: r.violatingStates,
                                faultRuns: r.faultRuns, faultsInjected: r.faultsInjected, faultViolations: r.faultViolations,
                                examples: r.examples)
            figures.flows.append(f)
            figures.operations += f.operations
            figures.crashStatesChecked += f.crashStatesChecked
            figures.crashStatesDuringRecovery += f.crashStatesDuringRecovery
            figures.crashStateViolations += f.crashStateViolations
            figures.faultRuns += f.faultRuns
            figures.faultsInjected += f.faultsInjected
            figures.faultViolations += f.faultViolations
            if !json {
                printRow(f)
                // A flow can take a minute: its row is shown when it ends, on a terminal or not.
                fflush(nil)
            } else {
                printError("crashcheck: \(f.flow) done (\(n + 1) of \(flows.count)), \(f.crashStatesChecked) crash states, \(f.crashStateViolations) violations")
            }
        }
        let syncFlows = Self.syncFlows.filter { flowName == nil || $0.name == flowName }
        for (n, flow) in syncFlows.enumerated() {
            let r = try await SyncCrashCheck.run(engine: flow.engine, othersPublish: flow.othersPublish, everyState: exhaustive)
            var examples = Array(r.failures.prefix(3))
            let tookItsPath = flow.othersPublish ? r.documentsMerged == 1 : r.documentsPushed == 1 && r.documentsMerged == 0
            if !tookItsPath { examples.append("the traced round did not take its path: \(r)") }
            let f = FlowFigures(flow: flow.name, operations: r.operations, calls: r.operations, crashStatesChecked: r.statesChecked,
                                crashStatesEnumerated: r.distinctStates, crashStatesDuringRecovery: 0,
                                crashStateViolations: r.failures.count + (tookItsPath ? 0 : 1),
                                faultRuns: 0, faultsInjected: 0, faultViolations: 0, examples: examples)
            figures.flows.append(f)
            figures.operations += f.operations
            figures.crashStatesChecked += f.crashStatesChecked
            figures.crashStateViolations += f.crashStateViolations
            if !json {
                printRow(f)
                fflush(nil)
            } else {
                printError("crashcheck: \(f.flow) done (\(n + 1) of \(syncFlows.count)), \(f.crashStatesChecked) crash states, \(f.crashStateViolations) violations")
            }
        }
        figures.seconds = Date().timeIntervalSince(started)
        if json {
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys]
            e.keyEncodingStrategy = .convertToSnakeCase
            print(String(decoding: try e.encode(figures), as: UTF8.self))
        } else {
            print("total".padding(toLength: 28, withPad: " ", startingAt: 0)
                  + pad(figures.operations, 5) + pad(0, 7).replacingOccurrences(of: "0", with: " ")
                  + pad(figures.crashStatesChecked, 14) + pad(figures.crashStateViolations, 12)
                  + pad(figures.faultRuns, 12) + pad(figures.faultsInjected, 8) + pad(figures.faultViolations, 8))
            print("crash states during recovery from a crash: \(figures.crashStatesDuringRecovery) of them; "
                  + "\(figures.seconds.formatted(.number.precision(.fractionLength(0)))) s")
            print("I/O faults: \(figures.faultRuns) runs, \(figures.faultsInjected) failed calls, \(figures.faultViolations) losses")
            print("crash states: \(figures.crashStatesChecked) checked, \(figures.crashStateViolations) violations")
        }
        if figures.crashStateViolations > 0 || figures.faultViolations > 0 { throw ExitCode(code: ExitStatus.failure) }
    }

    func printRow(_ f: FlowFigures) {
        print(f.flow.padding(toLength: 28, withPad: " ", startingAt: 0)
              + pad(f.operations, 5) + pad(f.calls, 7) + pad(f.crashStatesChecked, 14) + pad(f.crashStateViolations, 12)
              + pad(f.faultRuns, 12) + pad(f.faultsInjected, 8) + pad(f.faultViolations, 8))
        for e in f.examples { print("  ! " + e) }
    }

    func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
}
