/// Waits until `condition` holds or `timeout` passes, checking every 5 ms: for tests that wait on
/// a condition instead of a wall-clock assertion. A condition that holds returns at once, so the
/// deadline only matters when it never does: it is generous, since the whole suite runs in
/// parallel on a machine that may have two cores, where a task can wait seconds for a thread.
/// - Returns: Whether `condition` held in time.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(60), _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Waits until `condition` holds or `timeout` passes, as ``eventually(isolation:timeout:_:)``, for a
/// condition that has to wait itself (a call through a pipeline, say); 10 ms between checks.
/// - Returns: Whether `condition` held in time.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(60), checking condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// The value of `read` once it has stopped changing: the same over `quiet` (every 50 ms), or the
/// last value read when `timeout` passes first. For a bound on something that grows while a
/// producer runs and stops when it is held back (bytes sent ahead of a paused reader): the bound
/// is checked on the settled value, so a producer that is never held back reaches its end and
/// fails it, however slow the machine.
public func settled(
    isolation: isolated (any Actor)? = #isolation, quiet: Duration = .milliseconds(500), timeout: Duration = .seconds(60),
    _ read: () -> Int
) async -> Int {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var value = read()
    var since = clock.now
    while clock.now < deadline {
        try? await Task.sleep(for: .milliseconds(50))
        let next = read()
        if next != value {
            value = next
            since = clock.now
        } else if clock.now - since >= quiet {
            return value
        }
    }
    return value
}
