/// Waits until `condition` holds or `timeout` passes, checking every 5 ms: for tests that wait on
/// a condition instead of a wall-clock assertion.
/// - Returns: Whether `condition` held in time.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(30), _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
