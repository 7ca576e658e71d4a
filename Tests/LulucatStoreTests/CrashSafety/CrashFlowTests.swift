// Every write flow under the crash model (bounded enumeration) and under injected I/O errors.

import Foundation
import Testing
@testable import LulucatStore

@Suite("Crash states of the write flows")
struct CrashFlowTests {
    @Test("no crash state of a flow breaks an invariant", arguments: CrashFlow.all.map(\.name))
    func crashStates(_ name: String) async {
        let flow = CrashFlow.all.first { $0.name == name }!
        let report = await CrashHarness.explore(flow, limits: .bounded)
        #expect(report.operations > 0)
        #expect(report.statesChecked > 0)
        #expect(report.violatingStates == 0, "\(report.examples.joined(separator: "\n"))")
        print("\(name): \(report.operations) operations, \(report.statesChecked) states, \(report.violatingStates) violations")
    }
}

@Suite("I/O errors in the write flows")
struct FaultInjectionTests {
    @Test("every call of a flow failed with EIO, ENOSPC and EDQUOT, once and persistently", arguments: CrashFlow.all.map(\.name))
    func faults(_ name: String) async {
        let flow = CrashFlow.all.first { $0.name == name }!
        var report = await CrashHarness.explore(flow, limits: CrashEnumerationLimits(fullSubsetPendingLimit: 0, maxDataCombinations: 1))
        await CrashHarness.injectFaults(flow, into: &report)
        #expect(report.faultRuns == report.calls * 6)
        #expect(report.faultsInjected >= report.faultRuns)
        #expect(report.faultViolations == 0, "\(report.examples.joined(separator: "\n"))")
        print("\(name): \(report.calls) calls, \(report.faultRuns) fault runs, \(report.faultsInjected) faults, \(report.faultViolations) violations")
    }
}
