// Runs crash-check flows: traces a flow on the simulated file system, checks every crash state
// of the trace with the real code, and fails every call of the flow with injected I/O errors.

import Foundation
import LulucatStore
import LulucatStoreSQLite
import LulucatStoreThumbnails
import LulucatInk

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write flow to check: a starting library, then steps through the real API.
public struct CrashFlow: Sendable {
    public var name: String
    /// Builds the starting library (not traced) and says what it holds.
    public var setUp: @Sendable (Library) async throws -> ExpectedLibrary
    /// The steps; every call that touches the disk goes through `steps.step`.
    public var run: @Sendable (Library, FlowSteps) async throws -> Void
    /// Which calls the bounded `swift test` form fails (every `testFaultStride`-th): SQLite's
    /// flows make hundreds of calls (every page read and write), the file engines' far fewer.
    /// `lnote-dev crashcheck` fails every call of every flow.
    public var testFaultStride: Int

    public init(name: String, testFaultStride: Int = 2, setUp: @escaping @Sendable (Library) async throws -> ExpectedLibrary,
                run: @escaping @Sendable (Library, FlowSteps) async throws -> Void) {
        // The flows run every engine, SQLite's too, with thumbnails drawn as an app draws them.
        Library.enableSQLiteEngine()
        Library.enableThumbnails()
        self.name = name
        self.testFaultStride = testFaultStride
        self.setUp = setUp
        self.run = run
    }
}

/// A failure a flow raises about itself (a step that should have worked).
public struct FlowError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The steps of one run of a flow: each is acknowledged (its call returned) at an operation index,
/// and says what the library must hold once it has returned.
public final class FlowSteps: @unchecked Sendable {
    enum Mode {
        case trace
        /// After a step throws: check the disk, clear the fault and run the step again.
        case faults
    }

    let fs: SimulatedFileSystem
    let mode: Mode
    private let mutex = NSLock()
    /// The expectation after each acknowledged step, and the operation index it returned at.
    private(set) var acknowledged: [(label: String, at: Int, expected: ExpectedLibrary)] = []
    /// Problems found while running (fault mode: the disk after a failed step).
    private(set) var problems: [String] = []
    private(set) var stepsThatThrew = 0

    init(fs: SimulatedFileSystem, mode: Mode, start: ExpectedLibrary) {
        self.fs = fs
        self.mode = mode
        acknowledged = [("set up", 0, start)]
    }

    /// What the library holds after the last acknowledged step.
    public var expected: ExpectedLibrary { mutex.withLock { acknowledged.last!.expected } }

    /// Runs one API call (or a few that belong together). `expect` turns the last acknowledged
    /// expectation into the one this step promises; it runs after `body` has returned and may use
    /// what `body` returned (captured by the caller).
    ///
    /// With `atomic`, a call that throws must leave the disk exactly as the last acknowledged step
    /// left it (page structure, titles, documents): it either happened or it did not.
    public func step(_ label: String, atomic: Bool = false, _ body: () async throws -> Void,
                     expect: (inout ExpectedLibrary) throws -> Void = { _ in }) async throws {
        let before = expected
        let failuresBefore = fs.failedCalls.count
        do {
            try await body()
        } catch {
            guard mode == .faults else { throw FlowError("step '\(label)' failed without any fault: \(error)") }
            mutex.withLock { stepsThatThrew += 1 }
            // The call threw: the disk must still be in a state the last acknowledged step allows,
            // with this step's pages each whole, old or new.
            let afterFailure = fs.snapshot
            fs.clearFault()
            do { try await body() } catch {
                throw FlowError("step '\(label)' failed again after the fault was cleared: \(error)")
            }
            var next = before
            try expect(&next)
            // A directory sync that fails after the rename that commits a file leaves the outcome
            // undetermined (the rename may or may not persist): either version is then correct.
            // (Not only the first failure: a thumbnail written off the saving path may take it.)
            let undetermined = fs.failedCalls.dropFirst(failuresBefore).contains("fsync directory")
            let found = atomic && !undetermined
                ? await CrashChecker.check(afterFailure, acknowledged: before, next: nil, strictOrder: true)
                : await CrashChecker.check(afterFailure, acknowledged: before, next: next, strictOrder: false)
            let failed = fs.failedCalls.dropFirst(failuresBefore).joined(separator: ", ")
            mutex.withLock { problems += found.map { "after a failed '\(label)' (\(failed): \(error)): \($0)" } }
            mutex.withLock { acknowledged.append((label, fs.recordedCount, next)) }
            return
        }
        var next = before
        try expect(&next)
        mutex.withLock { acknowledged.append((label, fs.recordedCount, next)) }
    }

    /// document.json of a document as the disk has it now, read without counting as a call.
    public func peekDocument(_ package: DocumentPackage) throws -> DocumentMetadata {
        try PackageReader.readDocument(package, fileSystem: SimulatedFileSystem(tree: fs.snapshot))
    }
}

/// The figures of one flow.
public struct CrashFlowReport: Sendable {
    public var flow: String
    /// Mutating operations in the traced run.
    public var operations: Int
    /// Calls of every kind in the traced run (the fault injection points).
    public var calls: Int
    /// Distinct crash states checked: distinct disk images, each with the steps acknowledged before it.
    public var statesChecked: Int
    /// Crash states built before de-duplication.
    public var statesEnumerated: Int
    /// Of the states checked, those reached by a second crash during the recovery from a first.
    public var recoveryStatesChecked: Int = 0
    public var violatingStates: Int
    /// Runs with an injected fault, and the calls that failed because of one.
    public var faultRuns: Int
    public var faultsInjected: Int
    public var faultViolations: Int
    /// The first few problems, for the report.
    public var examples: [String]
}

public enum CrashHarness {
    public static let errnos: [Int32] = [EIO, ENOSPC, EDQUOT]

    /// Sets up the flow's starting library on an empty simulated disk and returns that disk.
    static func startingTree(_ flow: CrashFlow) async throws -> (SimulatedTree, ExpectedLibrary) {
        let fs = SimulatedFileSystem()
        let expected = try await flow.setUp(Library(root: CrashChecker.libraryRoot, fileSystem: fs))
        return (fs.snapshot, expected)
    }

    /// Runs the flow once on a healthy disk, recording it: the report's call and operation counts,
    /// the trace and the acknowledged steps (nil when the flow failed; the report says why).
    static func trace(_ flow: CrashFlow) async -> (CrashFlowReport, (base: SimulatedTree, operations: [SimulatedOperation])?,
                                                    [(label: String, at: Int, expected: ExpectedLibrary)]) {
        var report = CrashFlowReport(flow: flow.name, operations: 0, calls: 0, statesChecked: 0, statesEnumerated: 0,
                                     violatingStates: 0, faultRuns: 0, faultsInjected: 0, faultViolations: 0, examples: [])
        let start: (SimulatedTree, ExpectedLibrary)
        do { start = try await startingTree(flow) } catch {
            report.violatingStates += 1
            report.examples.append("set up failed: \(error)")
            return (report, nil, [])
        }
        let fs = SimulatedFileSystem(tree: start.0)
        let steps = FlowSteps(fs: fs, mode: .trace, start: start.1)
        fs.startRecording()
        fs.inject(InjectedFault(operation: Int.max, errno: EIO))  // counts calls, never fires
        do { try await flow.run(Library(root: CrashChecker.libraryRoot, fileSystem: fs), steps) } catch {
            report.violatingStates += 1
            report.examples.append("the flow failed on a healthy disk: \(error)")
            return (report, nil, [])
        }
        report.calls = fs.callCounts.all
        fs.clearFault()
        report.operations = fs.trace?.operations.count ?? 0
        return (report, fs.trace, steps.acknowledged)
    }

    /// Traces the flow without checking any crash state: its call and operation counts (what
    /// `injectFaults` needs).
    public static func countCalls(_ flow: CrashFlow) async -> CrashFlowReport { await trace(flow).0 }

    /// Traces the flow and checks every crash state of the trace.
    public static func explore(_ flow: CrashFlow, limits: CrashEnumerationLimits, keepExamples: Int = 5) async -> CrashFlowReport {
        var (report, traced, acks) = await trace(flow)
        guard let trace = traced else { return report }
        var seen = Set<StateKey>()
        await CrashStates.enumerate(base: trace.base, operations: trace.operations, limits: limits) { state in
            // Each state is a recovery to run and check: a long loop that rarely suspends. Yielding
            // lets the other tasks of the process (a test run's other tests: a sync round waiting
            // on its deadline) have the cooperative threads between states.
            await Task.yield()
            report.statesEnumerated += 1
            // The last step whose call had returned, and the one in flight.
            let done = acks.lastIndex { $0.at <= state.prefix }!
            guard seen.insert(StateKey(fingerprint: state.tree.fingerprint(), acknowledged: done)).inserted else { return }
            report.statesChecked += 1
            let next = done + 1 < acks.count ? acks[done + 1].expected : nil
            let inFlight = done + 1 < acks.count ? acks[done + 1].label : "(after the last step)"
            let recovery = SimulatedFileSystem(tree: state.tree)
            if limits.crashDuringRecovery { recovery.startRecording() }
            let problems = await CrashChecker.check(recovery, acknowledged: acks[done].expected, next: next, strictOrder: true)
            if !problems.isEmpty {
                report.violatingStates += 1
                if report.examples.count < keepExamples {
                    report.examples.append("crash after operation \(state.prefix) during '\(inFlight)' "
                        + "[\(state.effects.joined(separator: "; "))]: \(problems.joined(separator: " | "))")
                }
                return
            }
            // A second crash, during the reopen and repair of this one (and the close after it).
            guard limits.crashDuringRecovery, let again = recovery.trace, !again.operations.isEmpty else { return }
            await CrashStates.enumerate(base: again.base, operations: again.operations, limits: .bounded) { second in
                guard second.prefix < again.operations.count,
                      seen.insert(StateKey(fingerprint: second.tree.fingerprint(), acknowledged: done)).inserted else { return }
                report.statesChecked += 1
                report.recoveryStatesChecked += 1
                let problems = await CrashChecker.check(second.tree, acknowledged: acks[done].expected, next: next, strictOrder: true)
                if !problems.isEmpty {
                    report.violatingStates += 1
                    if report.examples.count < keepExamples {
                        report.examples.append("crash after operation \(state.prefix) during '\(inFlight)' "
                            + "[\(state.effects.joined(separator: "; "))], then again after operation \(second.prefix) of its recovery "
                            + "[\(second.effects.joined(separator: "; "))]: \(problems.joined(separator: " | "))")
                    }
                }
            }
        }
        return report
    }

    struct StateKey: Hashable {
        var fingerprint: SimulatedFingerprint
        var acknowledged: Int
    }

    /// Fails every `stride`-th call of the flow with each errno, once and persistently: the step
    /// must throw (or absorb the error), leave the disk in an acknowledged state, and work again
    /// once the fault is cleared.
    public static func injectFaults(_ flow: CrashFlow, into report: inout CrashFlowReport, stride: Int = 1,
                                    keepExamples: Int = 5) async {
        let start: (SimulatedTree, ExpectedLibrary)
        do { start = try await startingTree(flow) } catch { return }
        let calls = max(report.calls, 1)
        for n in Swift.stride(from: 1, through: calls, by: max(1, stride)) {
            for e in errnos {
                for persistent in [false, true] {
                    await Task.yield()  // as in `explore`: one run at a time, others in between
                    let fault = InjectedFault(operation: n, errno: e, persistent: persistent, counting: .all)
                    let fs = SimulatedFileSystem(tree: start.0)
                    fs.startRecording()
                    fs.inject(fault)
                    let steps = FlowSteps(fs: fs, mode: .faults, start: start.1)
                    var problems: [String] = []
                    do { try await flow.run(Library(root: CrashChecker.libraryRoot, fileSystem: fs), steps) } catch {
                        problems.append("\(error)")
                    }
                    fs.clearFault()
                    problems += steps.problems
                    report.faultRuns += 1
                    report.faultsInjected += fs.faultsInjected
                    if problems.isEmpty {
                        // The run finished: the disk must hold everything it acknowledged.
                        problems += await CrashChecker.check(fs.snapshot, acknowledged: steps.expected, next: nil, strictOrder: true)
                    }
                    if !problems.isEmpty {
                        report.faultViolations += 1
                        if report.examples.count < keepExamples {
                            report.examples.append("\(fault): \(problems.joined(separator: " | "))")
                        }
                    }
                }
            }
        }
    }
}
