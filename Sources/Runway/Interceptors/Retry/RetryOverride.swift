import RunwayCore

/// A per-call change to the ``RetryPolicy``, set by API managers in the `RequestContext`.
///
/// ```swift
/// context[RetryOverride.Key.self] = RetryOverride(allowsNonIdempotent: true) // this POST is safe to repeat
/// ```
public struct RetryOverride: Sendable, Equatable {
    /// Retry this call even when its method is not idempotent (`nil` keeps the policy's rule).
    public var allowsNonIdempotent: Bool?
    /// The most attempts for this call (`nil` keeps the policy's; 1 disables retry). Values
    /// below 1 count as 1.
    public var maxAttempts: Int?
    /// The longest this call may take in all, its retries and the waits between them included
    /// (`nil` keeps the policy's ``RetryPolicy/totalTimeout``). A value that is not positive
    /// counts as one millisecond.
    public var totalTimeout: Duration?

    /// Creates an override; `nil` fields keep the policy.
    public init(allowsNonIdempotent: Bool? = nil, maxAttempts: Int? = nil, totalTimeout: Duration? = nil) {
        self.allowsNonIdempotent = allowsNonIdempotent
        self.maxAttempts = maxAttempts
        self.totalTimeout = totalTimeout
    }

    /// No retry for this call.
    public static let never = RetryOverride(maxAttempts: 1)

    /// Where the override is kept in a `RequestContext`.
    public enum Key: ContextKey {
        public typealias Value = RetryOverride
    }
}
