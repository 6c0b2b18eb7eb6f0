import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends a request again after a transient failure, with exponential backoff and jitter.
///
/// ```swift
/// let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 4)], dispatcher: CurlDispatcher())
/// ```
/// - Retries the statuses and transport errors the ``RetryPolicy`` lists; after the last
///   attempt a retryable status is handed back as the response, a retryable error is thrown.
/// - Waits `initialBackoff × multiplier^(n−1)`, capped at `maxBackoff`, minus up to `jitter` of
///   it at random; a `Retry-After` header (seconds or HTTP-date) replaces that delay, and one
///   longer than `maxRetryAfter` ends the retries. No wait is longer than a century, whatever
///   the policy or the server asks.
/// - Retries only idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS), unless the request
///   carries an `Idempotency-Key` header (the server acts on a key once, so a POST with one is
///   safe to send again, as the dispatcher and a token refresh take it), the API is in
///   ``RetryPolicy/nonIdempotentAPIs``, or the call's ``RetryOverride`` allows it (an override
///   of `false` refuses even a keyed request). An error
///   whose `RunwayError.neverSent` is set (a refused connection, a connect timeout) is retried
///   for every method: the request never left the machine. A `.cannotConnect` without it (the
///   host a redirect leads to refuses, after the server handled the request) is not.
/// - Never retries a cancellation or a validation failure (``RetryPolicy/neverRetried``);
///   cancelling the task during a backoff ends the call at once with `.cancelled`.
/// - Each attempt goes down the chain with `RequestContext.attempt` increased.
/// - A streamed request body that can be sent once (`RequestBodyStream.isReplayable` false) is
///   never retried: it was read by the first attempt. A file, or a sequence made by a closure,
///   is retried like any body.
/// - A streamed response (`Response.bodyStream`) is retried on its head's status only, before
///   any of its body was read (its transfer is aborted); once handed up, a failure inside its
///   body reaches the reader and is never retried.
/// - With a ``RetryPolicy/totalTimeout`` (or a call's ``RetryOverride/totalTimeout``), the call
///   takes no longer than that in all: each attempt's `RequestOptions.timeout` is cut to what is
///   left, no retry is made whose wait would end past it, and an attempt cut short fails with
///   `.timeout` saying the call's total timeout ran out. A request without a timeout (a stream, a
///   large download) is not cut; only its retries are.
///
/// ## Where it belongs
/// After validation and the cache, **before compression, signing and the DNS bypass** (see
/// ``DefaultOrder``): every attempt passes the signing interceptor again and gets a fresh timestamp and nonce, which a server that rejects
/// replayed nonces requires; and every attempt passes the DNS bypass again, so it goes to the
/// fastest address still alive.
public struct RetryInterceptor: PerAttemptInterceptor {
    /// What the interceptor is about to do, for observers (logs, metrics).
    public struct Event: Sendable {
        /// The attempt that just failed (1 for the first).
        public var failedAttempt: Int
        /// The status that caused the retry, when a response was received.
        public var status: Int?
        /// The error that caused the retry, when no response was received.
        public var error: RunwayError?
        /// How long the interceptor waits before the next attempt.
        public var delay: Duration
        /// The call's context as of the failed attempt.
        public var context: RequestContext

        /// Creates an event (interceptors make these; tests and adapters may too).
        public init(failedAttempt: Int, status: Int? = nil, error: RunwayError? = nil, delay: Duration, context: RequestContext) {
            self.failedAttempt = failedAttempt
            self.status = status
            self.error = error
            self.delay = delay
            self.context = context
        }
    }

    /// Observers of one call's retries, kept in its `RequestContext` by the interceptors
    /// before retry in the chain: logging and metrics add theirs, so every attempt reaches the
    /// log and the counters without wiring. Each is called before each backoff, like `onRetry`.
    public enum Observers: ContextKey {
        public typealias Value = [@Sendable (Event) -> Void]
    }

    /// The policy in force.
    public let policy: RetryPolicy
    /// Called before each backoff.
    private let onRetry: (@Sendable (Event) -> Void)?
    private let sleep: @Sendable (Duration) async throws -> Void
    private let random: @Sendable () -> Double

    /// `"retry"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "retry" }

    /// Creates a retry interceptor.
    /// - Parameters:
    ///   - policy: When and how often to retry.
    ///   - onRetry: Called before each backoff (for logging or metrics); must not block.
    public init(policy: RetryPolicy = .default, onRetry: (@Sendable (Event) -> Void)? = nil) {
        self.init(policy: policy, onRetry: onRetry, sleep: { try await Task.sleep(for: $0) }, random: { Double.random(in: 0...1) })
    }

    /// Creates a retry interceptor with a replaceable clock and random source (tests).
    init(
        policy: RetryPolicy, onRetry: (@Sendable (Event) -> Void)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        random: @escaping @Sendable () -> Double
    ) {
        self.policy = policy
        self.onRetry = onRetry
        self.sleep = sleep
        self.random = random
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        // Each attempt reports to the call's progress stream, which ends with the last.
        try await CallProgress.spanning(request) { request in try await retrying(request, context: context, next: next) }
    }

    private func retrying(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let override = context[RetryOverride.Key.self]
        // A body that can be sent once was used up by the first attempt.
        let maxAttempts = request.bodyStream?.isReplayable == false ? 1 : max(1, override?.maxAttempts ?? policy.maxAttempts)
        let mayRepeat =
            request.method.isIdempotent
            || override?.allowsNonIdempotent
                ?? (request.headers["Idempotency-Key"] != nil || context.apiName.map(policy.nonIdempotentAPIs.contains) ?? false)
        let budget = (override?.totalTimeout ?? policy.totalTimeout).map { CallBudget(total: $0) }
        var context = context
        var request = request
        while true {
            let delay: Duration
            var event = Event(failedAttempt: context.attempt, delay: .zero, context: context)
            var attempt = request
            let cut = budget?.cut(&attempt) ?? false
            do {
                let response = try await next(attempt, context)
                guard context.attempt < maxAttempts, mayRepeat, policy.retryableStatuses.contains(response.status),
                    let wait = delayAfter(response: response, retry: context.attempt), budget?.allows(wait) ?? true
                else { return response }
                // A streamed body not handed up yet is dropped unread: abort its transfer.
                response.bodyStream?.cancel()
                delay = wait
                event.status = response.status
                request = ResendHandlers.request(request, resentAfter: response, in: context)
            } catch {
                let failure = RunwayError.attributing(error, to: .interceptor(name), fallback: .transport)
                if cut, failure.code == .timeout, let budget, budget.ranOut {
                    throw RunwayError(
                        .timeout, "the call's total timeout of \(budget.total) ran out in attempt \(context.attempt) of \(maxAttempts)",
                        stage: .interceptor(name), response: failure.response, underlying: error, neverSent: failure.neverSent)
                }
                guard context.attempt < maxAttempts, !Task.isCancelled, policy.retryableErrors.contains(failure.code),
                    !RetryPolicy.neverRetried.contains(failure.code),
                    mayRepeat || failure.neverSent
                else { throw error }
                delay = policy.backoff(beforeRetry: context.attempt, random: random())
                guard budget?.allows(delay) ?? true else { throw error }
                event.error = failure
                // Sent again from its first URL, whatever an earlier attempt was redirected to.
                request = ResendHandlers.request(request, resentAfter: nil, in: context)
            }
            // At most a century (a `Retry-After` of Int64.max seconds under a `maxRetryAfter` of
            // `.seconds(.max)` trapped in the clock).
            event.delay = min(delay, .longestSleep)
            onRetry?(event)
            if let observers = context[Observers.self] {
                for observer in observers { observer(event) }
            }
            do {
                try Task.checkCancellation()
                try await sleep(event.delay)
                try Task.checkCancellation()
            } catch {
                throw RunwayError(
                    .cancelled, "cancelled while waiting to retry (attempt \(context.attempt) of \(maxAttempts))",
                    stage: .interceptor(name), underlying: error)
            }
            context.attempt += 1
        }
    }

    /// A call's ``RetryPolicy/totalTimeout``, counted from when the call reached the interceptor.
    private struct CallBudget {
        let total: Duration
        let start = ContinuousClock.now

        /// What is left of it; never less than a millisecond, so an attempt is never given a
        /// timeout of nothing (which a dispatcher reads as none).
        var left: Duration { max(total - start.duration(to: .now), .milliseconds(1)) }

        /// Cuts `request`'s timeout to what is left; whether it did. A request without one (a
        /// stream, a large download: `RequestOptions.timeout` `nil`) asked to last, and is not cut.
        func cut(_ request: inout Request) -> Bool {
            let left = left
            guard let timeout = request.options.timeout, timeout > left else { return false }
            request.options.timeout = left
            return true
        }

        /// Whether the budget is used up: an attempt given what was left of it timed out at its
        /// end, not earlier (a connect timeout shorter than it, which is retried as usual). Within
        /// a few milliseconds, as a dispatcher counts its timeout in whole ones.
        var ranOut: Bool { start.duration(to: .now) + .milliseconds(5) >= total }

        /// Whether a retry after waiting `delay` starts before the budget runs out.
        func allows(_ delay: Duration) -> Bool {
            start.duration(to: .now) + delay < total
        }
    }

    /// The delay before retrying a retryable response, or `nil` when it should be handed back
    /// (a `Retry-After` beyond ``RetryPolicy/maxRetryAfter``).
    private func delayAfter(response: Response, retry: Int) -> Duration? {
        if policy.honoursRetryAfter, let value = response.headers["Retry-After"], let asked = RetryAfter.delay(from: value) {
            return asked <= policy.maxRetryAfter ? asked : nil
        }
        return policy.backoff(beforeRetry: retry, random: random())
    }
}

extension Interceptor where Self == RetryInterceptor {
    /// Retries transient failures with exponential backoff and jitter (see ``RetryInterceptor``).
    /// Belongs after the cache and before compression and signing (``DefaultOrder``).
    public static func retry(_ policy: RetryPolicy = .default, onRetry: (@Sendable (RetryInterceptor.Event) -> Void)? = nil)
        -> RetryInterceptor
    {
        RetryInterceptor(policy: policy, onRetry: onRetry)
    }
}

extension Interceptor where Self == RetryInterceptor {
    /// Retries transient failures with a policy built from the common settings.
    /// - Throws: `RunwayError` `.configuration` for values that cannot work (see ``RetryPolicy``).
    public static func retry(
        maxAttempts: Int, initialBackoff: Duration = .milliseconds(200), maxBackoff: Duration = .seconds(10),
        totalTimeout: Duration? = nil
    ) throws(RunwayError) -> RetryInterceptor {
        RetryInterceptor(
            policy: try RetryPolicy(
                maxAttempts: maxAttempts, initialBackoff: initialBackoff, maxBackoff: maxBackoff, totalTimeout: totalTimeout))
    }
}
