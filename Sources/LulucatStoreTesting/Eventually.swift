// Waiting for an event in a test: polled, with a bound in time that is generous on purpose. A
// whole `swift test` run keeps both cores busy, and a task may wait seconds for a thread; the bound
// only ends a test whose event never comes.

/// Polls `condition` every `poll` until it holds or `within` has passed; whether it held.
@discardableResult
public func eventually(within: Duration = .seconds(120), poll: Duration = .milliseconds(10),
                       isolation: isolated (any Actor)? = #isolation,
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now + within
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= end { return false }
        try? await Task.sleep(for: poll)
    }
}
