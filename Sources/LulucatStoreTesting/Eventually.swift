// Waiting for an event in a test: polled, with a bound that is generous on purpose. A whole
// `swift test` run keeps both cores busy, and while hundreds of tests share Swift's two cooperative
// threads a task can wait many seconds for each turn. The bound is in time and in turns: it ends
// only once `within` has passed *and* the condition has been looked at `minimumChecks` times, so
// a starved run (each turn seconds apart) still gives the awaited task as many turns to act.

/// Polls `condition` every `poll` until it holds; false once `within` has passed and the
/// condition has been checked at least `minimumChecks` times without holding.
@discardableResult
public func eventually(within: Duration = .seconds(120), poll: Duration = .milliseconds(10), minimumChecks: Int = 200,
                       isolation: isolated (any Actor)? = #isolation,
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now + within
    var checks = 0
    while true {
        if try await condition() { return true }
        checks += 1
        if ContinuousClock.now >= end && checks >= minimumChecks { return false }
        try? await Task.sleep(for: poll)
    }
}
