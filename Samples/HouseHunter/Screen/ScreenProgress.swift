/// Reports progress of long work behind a screen to whoever shows it.
///
/// The shell sets a reporter around a call (``withReporter(_:operation:)``); module code deep
/// inside the call reports steps with ``report(_:done:of:)`` without knowing who listens. With
/// no reporter set, reports go nowhere.
/// ```swift
/// ScreenProgress.report("rentals loaded", done: 2, of: 3)
/// ```
public enum ScreenProgress {
    /// Receives a step: what happened, how many of how many steps are done.
    public typealias Reporter = @Sendable (_ step: String, _ done: Int, _ total: Int) -> Void

    @TaskLocal static var reporter: Reporter?

    /// Reports a step to the reporter of the current task, if any.
    public static func report(_ step: String, done: Int, of total: Int) {
        reporter?(step, done, total)
    }

    /// Runs `operation` with `reporter` receiving every step reported inside it (child tasks
    /// included).
    public static func withReporter<T>(
        _ reporter: @escaping Reporter, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
    ) async rethrows -> T {
        try await $reporter.withValue(reporter, operation: operation, isolation: isolation)
    }
}
