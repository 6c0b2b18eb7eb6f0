import Foundation

/// A thread-safe counter, for tests that count calls, attempts or requests.
public final class Counter: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var count = 0

    public init() {}

    /// Adds one and returns the new count.
    @discardableResult
    public func increment() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }

    /// Adds `amount` (bytes sent, say) and returns the new count.
    @discardableResult
    public func add(_ amount: Int) -> Int {
        lock.withLock {
            count += amount
            return count
        }
    }

    /// The count now.
    public var value: Int { lock.withLock { count } }
}
