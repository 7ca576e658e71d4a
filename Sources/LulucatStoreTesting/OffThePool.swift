// Blocking work (a child process run to its end, a wait on a pipe or a PID) on a thread of its
// own, awaited: Swift's cooperative pool has one thread per core (two here), and a test that
// blocks one of them in `waitUntilExit` or `readDataToEndOfFile` stalls every other task of the
// run meanwhile (a sync round among them, which then meets its deadline).

import Foundation

/// Runs `body` on a new thread and returns (or throws) what it does, without holding a thread of
/// Swift's cooperative pool while it runs.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
        let thread = Thread { c.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// `offThePool` for a body that cannot throw.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        let thread = Thread { c.resume(returning: body()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
