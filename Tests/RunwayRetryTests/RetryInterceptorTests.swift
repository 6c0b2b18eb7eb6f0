import Foundation
import RunwayTestServer
import RunwayTesting
import Testing

@testable import Runway

/// Records what each attempt looked like from just after the retry interceptor.
final class AttemptLog: Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var attempts: [Int] = []
    nonisolated(unsafe) private var delays: [Duration] = []

    var seen: [Int] { lock.withLock { attempts } }
    var slept: [Duration] { lock.withLock { delays } }
    func saw(_ attempt: Int) { lock.withLock { attempts.append(attempt) } }
    func sleep(_ delay: Duration) { lock.withLock { delays.append(delay) } }
}

struct AttemptRecorder: Interceptor {
    let log: AttemptLog
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        log.saw(context.attempt)
        return try await next(request, context)
    }
}

/// A stub answering from a script, one entry per request; the last entry repeats.
func scripted(_ script: [Result<Response, RunwayError>]) -> StubDispatcher {
    let counter = AttemptLog()
    return StubDispatcher { _ in
        counter.saw(0)
        let index = min(counter.seen.count, script.count) - 1
        return try script[index].get()
    }
}

func pipeline(_ policy: RetryPolicy, log: AttemptLog, random: Double = 0, dispatcher: StubDispatcher) -> Pipeline {
    let retry = RetryInterceptor(policy: policy, sleep: { log.sleep($0) }, random: { random })
    return Pipeline(interceptors: [retry, AttemptRecorder(log: log)], dispatcher: dispatcher)
}

@Suite struct RetryInterceptorTests {
    @Test func retriesRetryableStatusesThenSucceeds() async throws {
        let log = AttemptLog()
        let stub = scripted([.success(Response(status: 503)), .success(Response(status: 502)), .success(Response(status: 200))])
        let response = try await pipeline(.default, log: log, dispatcher: stub).send(try Request("http://api.test/items"))
        #expect(response.status == 200)
        #expect(log.seen == [1, 2, 3])
        #expect(stub.requests.count == 3)
        #expect(log.slept == [.milliseconds(200), .milliseconds(400)])
    }

    @Test func handsBackTheLastRetryableResponseWhenAttemptsRunOut() async throws {
        let log = AttemptLog()
        let stub = scripted([.success(Response(status: 503))])
        let response = try await pipeline(try RetryPolicy(maxAttempts: 2), log: log, dispatcher: stub).send(try Request("http://api.test/"))
        #expect(response.status == 503)
        #expect(log.seen == [1, 2])
    }

    @Test func doesNotRetryOtherStatuses() async throws {
        let log = AttemptLog()
        let stub = scripted([.success(Response(status: 500)), .success(Response(status: 200))])
        let response = try await pipeline(.default, log: log, dispatcher: stub).send(try Request("http://api.test/"))
        #expect(response.status == 500)
        #expect(log.seen == [1])
    }

    @Test func backoffGrowsIsCappedAndJittered() throws {
        let policy = try RetryPolicy(
            maxAttempts: 10, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(500), multiplier: 3, jitter: 0.5)
        #expect(policy.backoff(beforeRetry: 1, random: 0) == .milliseconds(100))
        #expect(policy.backoff(beforeRetry: 2, random: 0) == .milliseconds(300))
        #expect(policy.backoff(beforeRetry: 3, random: 0) == .milliseconds(500))
        #expect(policy.backoff(beforeRetry: 9, random: 0) == .milliseconds(500))
        #expect(policy.backoff(beforeRetry: 2, random: 1) == .milliseconds(150))
        #expect(policy.backoff(beforeRetry: 200, random: 0.5) == .milliseconds(375))
    }

    @Test func aBackoffPastInt64NanosecondsIsTheLongestDurationInsteadOfATrap() throws {
        let policy = try RetryPolicy(
            maxAttempts: 3, initialBackoff: .seconds(Int64.max / 2), maxBackoff: .seconds(Int64.max), multiplier: 4, jitter: 0)
        #expect(policy.backoff(beforeRetry: 1, random: 0) == .nanoseconds(Int64.max))
        #expect(policy.backoff(beforeRetry: 2, random: 0.5) == .nanoseconds(Int64.max))
        let years = try RetryPolicy(maxAttempts: 2, initialBackoff: .seconds(300 * 365 * 86_400), maxBackoff: .seconds(Int64.max))
        #expect(years.backoff(beforeRetry: 1, random: 0) == .nanoseconds(Int64.max))
    }

    @Test func randomJitterStaysInsideItsBand() async throws {
        let policy = try RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(100), jitter: 1)
        let delays = Set((0..<50).map { _ in policy.backoff(beforeRetry: 1, random: Double.random(in: 0...1)) })
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .milliseconds(100) })
        #expect(delays.count > 1)
    }

    @Test func retriesTransportErrorsAndThrowsTheLastOne() async throws {
        let log = AttemptLog()
        let stub = scripted([.failure(RunwayError(.connectionLost, "reset")), .failure(RunwayError(.timeout, "slow"))])
        await #expect {
            try await pipeline(.default, log: log, dispatcher: stub).send(try Request("http://api.test/"))
        } throws: { ($0 as? RunwayError)?.code == .timeout }
        #expect(log.seen == [1, 2, 3])
    }

    @Test(arguments: [RunwayError.Code.cancelled, .paramsInvalid, .invalidURL, .invalidHeader, .tls, .responseTooLarge, .serverError])
    func neverRetriesNonTransientErrors(code: RunwayError.Code) async throws {
        let log = AttemptLog()
        let stub = scripted([.failure(RunwayError(code, "no")), .success(Response(status: 200))])
        await #expect {
            try await pipeline(.default, log: log, dispatcher: stub).send(try Request("http://api.test/"))
        } throws: { ($0 as? RunwayError)?.code == code }
        #expect(log.seen == [1])
    }

    @Test func invalidRequestFromTheDispatcherIsNotRetried() async throws {
        let log = AttemptLog()
        let stub = scripted([.success(Response(status: 503))])
        var request = try Request("http://api.test/")
        request.headers["X-Bad"] = "a\r\nInjected: yes"
        await #expect {
            try await pipeline(.default, log: log, dispatcher: stub).send(request)
        } throws: { ($0 as? RunwayError)?.code == .invalidHeader }
        #expect(log.seen == [1])
    }

    @Test func postIsNotRetriedUnlessTheAPIOptsIn() async throws {
        let script: [Result<Response, RunwayError>] = [.success(Response(status: 503)), .success(Response(status: 200))]
        let post = try Request(method: .post, "http://api.test/orders", body: Data("{}".utf8))

        let log = AttemptLog()
        let plain = try await pipeline(.default, log: log, dispatcher: scripted(script)).send(
            post, context: RequestContext(apiName: "order.create"))
        #expect(plain.status == 503)
        #expect(log.seen == [1])

        let byPolicy = try RetryPolicy(nonIdempotentAPIs: ["order.create"])
        let policyLog = AttemptLog()
        let optedIn = try await pipeline(byPolicy, log: policyLog, dispatcher: scripted(script)).send(
            post, context: RequestContext(apiName: "order.create"))
        #expect(optedIn.status == 200)
        #expect(policyLog.seen == [1, 2])

        var context = RequestContext(apiName: "order.pay")
        context[RetryOverride.Key.self] = RetryOverride(allowsNonIdempotent: true)
        let overrideLog = AttemptLog()
        let overridden = try await pipeline(.default, log: overrideLog, dispatcher: scripted(script)).send(post, context: context)
        #expect(overridden.status == 200)
        #expect(overrideLog.seen == [1, 2])
    }

    @Test func postIsRetriedWhenTheConnectionWasNeverMade() async throws {
        let log = AttemptLog()
        let stub = scripted([.failure(RunwayError(.cannotConnect, "refused", neverSent: true)), .success(Response(status: 201))])
        let post = try Request(method: .post, "http://api.test/orders", body: Data("{}".utf8))
        #expect(try await pipeline(.default, log: log, dispatcher: stub).send(post).status == 201)
        // Refused after the request went out (a redirect's target): not sent again.
        let afterLog = AttemptLog()
        let after = scripted([.failure(RunwayError(.cannotConnect, "refused")), .success(Response(status: 201))])
        await #expect { try await pipeline(.default, log: afterLog, dispatcher: after).send(post) } throws: {
            ($0 as? RunwayError)?.code == .cannotConnect
        }
        #expect(afterLog.seen == [1])
        let lostLog = AttemptLog()
        let lost = scripted([.failure(RunwayError(.connectionLost, "reset")), .success(Response(status: 201))])
        await #expect { try await pipeline(.default, log: lostLog, dispatcher: lost).send(post) } throws: {
            ($0 as? RunwayError)?.code == .connectionLost
        }
        #expect(lostLog.seen == [1])
    }

    @Test func overrideCanDisableRetry() async throws {
        let log = AttemptLog()
        var context = RequestContext()
        context[RetryOverride.Key.self] = .never
        let response = try await pipeline(.default, log: log, dispatcher: scripted([.success(Response(status: 503))])).send(
            try Request("http://api.test/"), context: context)
        #expect(response.status == 503)
        #expect(log.seen == [1])
    }

    @Test func retryAfterSecondsAndDateSetTheDelay() async throws {
        let log = AttemptLog()
        let stub = scripted([
            .success(Response(status: 429, headers: ["Retry-After": "2"])),
            .success(Response(status: 503, headers: ["Retry-After": RetryAfterTests.httpDate(Date().addingTimeInterval(30))])),
            .success(Response(status: 200)),
        ])
        let response = try await pipeline(try RetryPolicy(maxAttempts: 3), log: log, dispatcher: stub).send(try Request("http://api.test/"))
        #expect(response.status == 200)
        #expect(log.slept.count == 2)
        #expect(log.slept.first == .seconds(2))
        #expect(log.slept.last.map { $0 > .seconds(27) && $0 <= .seconds(30) } == true)
    }

    @Test func retryAfterBeyondTheMaximumHandsTheResponseBack() async throws {
        let log = AttemptLog()
        let stub = scripted([.success(Response(status: 503, headers: ["Retry-After": "3600"])), .success(Response(status: 200))])
        let response = try await pipeline(.default, log: log, dispatcher: stub).send(try Request("http://api.test/"))
        #expect(response.status == 503)
        #expect(log.seen == [1])
    }

    @Test func eachRetryIsReported() async throws {
        let events = AttemptLog()
        let retry = RetryInterceptor(policy: .default, onRetry: { events.saw($0.status ?? -1) }, sleep: { _ in }, random: { 0 })
        let stub = scripted([.success(Response(status: 504)), .failure(RunwayError(.timeout)), .success(Response(status: 200))])
        _ = try await Pipeline(interceptors: [retry], dispatcher: stub).send(try Request("http://api.test/"))
        #expect(events.seen == [504, -1])
    }

    @Test func cancellationDuringBackoffStopsAtOnce() async throws {
        let stub = scripted([.success(Response(status: 503))])
        let policy = try RetryPolicy(maxAttempts: 5, initialBackoff: .seconds(600), maxBackoff: .seconds(600))
        // The real sleep, and a signal once the backoff has begun.
        let backingOff = Counter()
        let retry = RetryInterceptor(
            policy: policy,
            sleep: { delay in
                backingOff.increment()
                try await Task.sleep(for: delay)
            }, random: { 0.5 })
        let pipeline = Pipeline(interceptors: [retry], dispatcher: stub)
        let task = Task { try await pipeline.send(try Request("http://api.test/")) }
        #expect(await eventually { backingOff.value == 1 })
        let start = ContinuousClock.now
        task.cancel()
        await #expect { try await task.value } throws: { ($0 as? RunwayError)?.code == .cancelled }
        // Long before the backoff's five minutes or more would have run out.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(stub.requests.count == 1)
    }

    @Test func realBackoffWaits() async throws {
        let stub = scripted([.success(Response(status: 503)), .success(Response(status: 200))])
        let policy = try RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(50), jitter: 0)
        let start = ContinuousClock.now
        let response = try await Pipeline(interceptors: [RetryInterceptor.retry(policy)], dispatcher: stub).send(
            try Request("http://api.test/"))
        #expect(response.status == 200)
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test func badConfigurationIsRejectedWhenThePolicyIsMade() {
        func code(_ make: () throws -> Any) -> (RunwayError.Code, String?)? {
            do {
                _ = try make()
                return nil
            } catch let error as RunwayError { return (error.code, error.field) } catch { return nil }
        }
        #expect(code { try RetryPolicy(maxAttempts: 0) }?.1 == "maxAttempts")
        #expect(code { try RetryPolicy(initialBackoff: .milliseconds(-1)) }?.1 == "initialBackoff")
        #expect(code { try RetryPolicy(initialBackoff: .seconds(2), maxBackoff: .seconds(1)) }?.1 == "maxBackoff")
        #expect(code { try RetryPolicy(multiplier: 0.5) }?.1 == "multiplier")
        #expect(code { try RetryPolicy(jitter: 1.5) }?.1 == "jitter")
        #expect(code { try RetryPolicy(jitter: .nan) }?.1 == "jitter")
        #expect(code { try RetryPolicy(retryableStatuses: [200]) }?.1 == "retryableStatuses")
        #expect(code { try RetryPolicy(retryableStatuses: [999]) }?.1 == "retryableStatuses")
        #expect(code { try RetryPolicy(retryableErrors: [.paramsInvalid]) }?.1 == "retryableErrors")
        #expect(code { try RetryPolicy(retryableErrors: [.cancelled]) }?.0 == .configuration)
        #expect(code { try RetryInterceptor.retry(maxAttempts: -1) }?.0 == .configuration)
        #expect(code { try RetryPolicy(totalTimeout: .zero) }?.1 == "totalTimeout")
        #expect(code { try RetryPolicy(totalTimeout: .seconds(-1)) }?.1 == "totalTimeout")
        #expect(code { try RetryPolicy(maxAttempts: 1) } == nil)
    }

    /// A wait that would end past the call's total timeout is not waited: the response goes back
    /// as when the attempts run out, and so does the error of a failure whose backoff is too long.
    @Test func aWaitPastTheTotalTimeoutHandsBackTheLastOutcome() async throws {
        let log = AttemptLog()
        let later = Response(status: 503, headers: ["Retry-After": "5"])
        let policy = try RetryPolicy(maxAttempts: 5, totalTimeout: .seconds(2))
        let response = try await pipeline(policy, log: log, dispatcher: scripted([.success(later)])).send(try Request("http://api.test/"))
        #expect(response.status == 503)
        #expect(log.seen == [1])
        #expect(log.slept.isEmpty)

        let slowLog = AttemptLog()
        let slow = try RetryPolicy(
            maxAttempts: 5, initialBackoff: .seconds(3), maxBackoff: .seconds(3), jitter: 0, totalTimeout: .seconds(2))
        let lost = scripted([.failure(RunwayError(.connectionLost, "reset"))])
        await #expect { try await pipeline(slow, log: slowLog, dispatcher: lost).send(try Request("http://api.test/")) } throws: {
            ($0 as? RunwayError)?.code == .connectionLost
        }
        #expect(slowLog.seen == [1])
        #expect(slowLog.slept.isEmpty)
    }
}
