import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// When and how often ``RetryInterceptor`` sends a request again.
///
/// ```swift
/// let policy = try RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(200), maxBackoff: .seconds(5))
/// ```
/// Every value is checked when the policy is made: a negative backoff, a zero attempt count, a
/// jitter outside `0...1` or a never-retried error code in ``retryableErrors`` is a
/// `RunwayError` `.configuration` at start-up, never on the first request.
public struct RetryPolicy: Sendable, Equatable {
    /// The most times a request is sent, the first attempt included (1 = never retry).
    public let maxAttempts: Int
    /// The delay before the first retry, before jitter.
    public let initialBackoff: Duration
    /// The longest delay between two attempts, before jitter.
    public let maxBackoff: Duration
    /// The factor the delay grows by after each retry (≥ 1).
    public let multiplier: Double
    /// How much of each delay is random, `0...1`: the delay is drawn from
    /// `[backoff × (1 − jitter), backoff]`; `1` is "full jitter", `0` none.
    public let jitter: Double
    /// Status codes answered by sending again (by default 429, 502, 503, 504).
    public let retryableStatuses: Set<Int>
    /// Transport errors answered by sending again (by default `.connectionLost`,
    /// `.cannotConnect`, `.timeout`).
    public let retryableErrors: Set<RunwayError.Code>
    /// Whether a `Retry-After` header (seconds or HTTP-date) on a retryable status sets the delay.
    public let honoursRetryAfter: Bool
    /// The longest `Retry-After` waited for; a server asking for longer gets its response
    /// handed back instead of a retry.
    public let maxRetryAfter: Duration
    /// APIs (`RequestContext.apiName`) whose non-idempotent calls (POST, PATCH) may be retried;
    /// a call of any API that carries an `Idempotency-Key` header may be too.
    public let nonIdempotentAPIs: Set<String>
    /// The longest a call may take in all, from when it reaches the retry interceptor: every
    /// attempt and every wait between two. Each attempt's `RequestOptions.timeout` is cut to what
    /// is left of it, and a retry whose wait would end past it is not made (the last response is
    /// handed back, or its error thrown, as when the attempts run out). A request without a
    /// timeout (`RequestOptions.timeout` `nil`: a stream, a large download) is not cut; only its
    /// retries are. `nil`, the default: each attempt has its own timeout, and only
    /// ``maxAttempts`` bounds the call.
    public let totalTimeout: Duration?

    /// Error codes that are never retried whatever the configuration says: the caller gave up,
    /// or sending again cannot change the answer.
    public static let neverRetried: Set<RunwayError.Code> = [
        .cancelled, .paramsInvalid, .invalidURL, .unsupportedScheme, .invalidHeader,
        .invalidRequest, .requestTooLarge, .configuration, .responseTooLarge, .tls,
        .tooManyRedirects, .fileIO, .needsLogin,
    ]

    /// The default: 3 attempts, 200 ms doubling up to 10 s, half jitter, 429/502/503/504 and
    /// lost/refused/timed-out connections, `Retry-After` up to 60 s, idempotent methods only.
    public static let `default` = RetryPolicy(
        checked: 3, initialBackoff: .milliseconds(200), maxBackoff: .seconds(10), multiplier: 2,
        jitter: 0.5, retryableStatuses: [429, 502, 503, 504],
        retryableErrors: [.connectionLost, .cannotConnect, .timeout], honoursRetryAfter: true,
        maxRetryAfter: .seconds(60), nonIdempotentAPIs: [], totalTimeout: nil)

    /// Creates a policy, rejecting values that cannot work.
    /// - Throws: `RunwayError` `.configuration`, naming the bad value in `RunwayError.field`.
    public init(
        maxAttempts: Int = 3,
        initialBackoff: Duration = .milliseconds(200),
        maxBackoff: Duration = .seconds(10),
        multiplier: Double = 2,
        jitter: Double = 0.5,
        retryableStatuses: Set<Int> = [429, 502, 503, 504],
        retryableErrors: Set<RunwayError.Code> = [.connectionLost, .cannotConnect, .timeout],
        honoursRetryAfter: Bool = true,
        maxRetryAfter: Duration = .seconds(60),
        nonIdempotentAPIs: Set<String> = [],
        totalTimeout: Duration? = nil
    ) throws(RunwayError) {
        func bad(_ field: String, _ message: String) -> RunwayError {
            RunwayError(.configuration, "retry policy: \(message)", stage: .interceptor("retry"), field: field)
        }
        guard maxAttempts >= 1 else { throw bad("maxAttempts", "maxAttempts must be at least 1, got \(maxAttempts)") }
        guard initialBackoff >= .zero else { throw bad("initialBackoff", "initialBackoff must not be negative") }
        guard maxBackoff >= initialBackoff else { throw bad("maxBackoff", "maxBackoff must be at least initialBackoff") }
        guard multiplier.isFinite, multiplier >= 1 else { throw bad("multiplier", "multiplier must be a finite number ≥ 1") }
        guard jitter.isFinite, (0...1).contains(jitter) else { throw bad("jitter", "jitter must be within 0...1") }
        guard maxRetryAfter >= .zero else { throw bad("maxRetryAfter", "maxRetryAfter must not be negative") }
        if let totalTimeout, totalTimeout <= .zero { throw bad("totalTimeout", "totalTimeout must be positive, or nil for none") }
        if let status = retryableStatuses.first(where: { !(100...599).contains($0) }) {
            throw bad("retryableStatuses", "\(status) is not an HTTP status code")
        }
        if let status = retryableStatuses.first(where: { (200..<300).contains($0) }) {
            throw bad("retryableStatuses", "\(status) is a success; it cannot be retried")
        }
        if let code = retryableErrors.first(where: { Self.neverRetried.contains($0) }) {
            throw bad("retryableErrors", "\(code) is never retried")
        }
        self.init(
            checked: maxAttempts, initialBackoff: initialBackoff, maxBackoff: maxBackoff,
            multiplier: multiplier, jitter: jitter, retryableStatuses: retryableStatuses,
            retryableErrors: retryableErrors, honoursRetryAfter: honoursRetryAfter,
            maxRetryAfter: maxRetryAfter, nonIdempotentAPIs: nonIdempotentAPIs, totalTimeout: totalTimeout)
    }

    private init(
        checked maxAttempts: Int, initialBackoff: Duration, maxBackoff: Duration, multiplier: Double,
        jitter: Double, retryableStatuses: Set<Int>, retryableErrors: Set<RunwayError.Code>,
        honoursRetryAfter: Bool, maxRetryAfter: Duration, nonIdempotentAPIs: Set<String>, totalTimeout: Duration?
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.multiplier = multiplier
        self.jitter = jitter
        self.retryableStatuses = retryableStatuses
        self.retryableErrors = retryableErrors
        self.honoursRetryAfter = honoursRetryAfter
        self.maxRetryAfter = maxRetryAfter
        self.nonIdempotentAPIs = nonIdempotentAPIs
        self.totalTimeout = totalTimeout
    }

    /// The delay before retry number `retry` (1 for the first retry), with `random` in `0...1`
    /// choosing where inside the jitter band it falls.
    public func backoff(beforeRetry retry: Int, random: Double) -> Duration {
        let exponent = Double(max(0, retry - 1))
        let initial = initialBackoff.seconds
        let grown = initial * pow(multiplier, exponent)
        let capped = min(maxBackoff.seconds, grown.isFinite ? grown : maxBackoff.seconds)
        let fraction = 1 - jitter * min(1, max(0, random))
        // Whole nanoseconds, so 0.1 × 3 is 300 ms and not 300 ms plus a rounding error. A
        // delay past Int64's nanoseconds (about 292 years, from a huge maxBackoff) is that most.
        let nanoseconds = (capped * fraction * 1e9).rounded()
        return nanoseconds < 9.2e18 ? .nanoseconds(Int64(nanoseconds)) : .nanoseconds(Int64.max)
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
