import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Retry against the in-process server through libcurl.
@Suite struct RetryServerTests {
    /// `/flaky` answers 503 with `Retry-After: 0` twice, then 200.
    func flakyServer(_ counter: Counter) async throws -> TestServer {
        try await TestServer.start { router in
            let flaky: @Sendable (Hummingbird.Request, TestRequestContext) async throws -> Hummingbird.Response = { _, _ in
                if counter.increment() <= 2 {
                    return Hummingbird.Response(status: .serviceUnavailable, headers: [.retryAfter: "0"])
                }
                return Hummingbird.Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
            }
            router.get("/flaky", use: flaky)
            router.post("/flaky", use: flaky)
        }
    }

    @Test func aFlakyGetSucceedsOnTheThirdAttempt() async throws {
        let counter = Counter()
        let server = try await flakyServer(counter)
        defer { Task { await server.shutdown() } }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        let response = try await pipeline.send(Runway.Request(url: server.url("/flaky")))
        #expect(response.status == 200)
        #expect(counter.value == 3)
    }

    @Test func aFlakyPostIsNotRetried() async throws {
        let counter = Counter()
        let server = try await flakyServer(counter)
        defer { Task { await server.shutdown() } }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        let response = try await pipeline.send(Runway.Request(method: .post, url: server.url("/flaky"), body: Data("{}".utf8)))
        #expect(response.status == 503)
        #expect(counter.value == 1)
    }

    /// A server acts on an `Idempotency-Key` once, so a POST that carries one is retried like a
    /// GET; an override of `false` still refuses it.
    @Test func aFlakyPostWithAnIdempotencyKeyIsRetried() async throws {
        let counter = Counter()
        let server = try await flakyServer(counter)
        defer { Task { await server.shutdown() } }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        let keyed = Runway.Request(
            method: .post, url: server.url("/flaky"), headers: ["Idempotency-Key": "order-7f3a"], body: Data("{}".utf8))
        let response = try await pipeline.send(keyed)
        #expect(response.status == 200)
        #expect(counter.value == 3)

        let refused = Counter()
        let other = try await flakyServer(refused)
        defer { Task { await other.shutdown() } }
        var context = RequestContext(apiName: "order.create")
        context[RetryOverride.Key.self] = RetryOverride(allowsNonIdempotent: false)
        var again = keyed
        again.url = other.url("/flaky")
        #expect(try await pipeline.send(again, context: context).status == 503)
        #expect(refused.value == 1)
    }

    @Test("a streamed body made by a closure is sent again on each attempt; one passed as a value is never retried")
    func streamedBodies() async throws {
        let counter = Counter()
        let server = try await TestServer.start { router in
            // 503 twice, then 200 with the byte count of the body it read; and again.
            router.put("/flaky-sink") { request, _ in
                var received = 0
                for try await buffer in request.body { received += buffer.readableBytes }
                if counter.increment() % 3 != 0 { return Hummingbird.Response(status: .serviceUnavailable, headers: [.retryAfter: "0"]) }
                return Hummingbird.Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: String(received))))
            }
        }
        defer { Task { await server.shutdown() } }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3)], dispatcher: CurlDispatcher())
        let chunks = { @Sendable in
            AsyncStream<Data> { continuation in
                for _ in 0..<10 { continuation.yield(Data(repeating: 7, count: 10_000)) }
                continuation.finish()
            }
        }
        var request = Runway.Request(method: .put, url: server.url("/flaky-sink"))
        request.bodyStream = .sequence(length: 100_000, chunks)
        let response = try await pipeline.send(request)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "100000")
        #expect(counter.value == 3)

        request.bodyStream = .sequence(chunks(), length: 100_000)
        #expect(try await pipeline.send(request).status == 503)
        #expect(counter.value == 4)
    }

    /// A policy that honours any `Retry-After` (`maxRetryAfter` of `.seconds(.max)`) and a server
    /// that asks for Int64.max seconds: the clock trapped on a sleep that long and the process died.
    @Test("a Retry-After of Int64.max seconds under an unbounded maxRetryAfter waits, and a cancellation ends it")
    func aRetryAfterOfInt64MaxSecondsWaitsUntilCancelled() async throws {
        let server = try await TestServer.start { router in
            router.get("/later") { _, _ in
                Hummingbird.Response(status: .serviceUnavailable, headers: [.retryAfter: String(Int64.max)])
            }
        }
        defer { Task { await server.shutdown() } }
        let waits = Counter()
        let policy = try RetryPolicy(maxAttempts: 2, maxRetryAfter: .seconds(Int64.max))
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy) { _ in waits.increment() }], dispatcher: CurlDispatcher())
        let call = Task { try await pipeline.send(Runway.Request(url: server.url("/later"))) }
        #expect(await eventually { waits.value == 1 })
        call.cancel()
        await #expect { try await call.value } throws: { ($0 as? RunwayError)?.code == .cancelled }
        #expect(server.stats.requests(path: "/later") == 1)
    }

    @Test func aResetConnectionIsRetriedAndTheLastErrorThrown() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3, initialBackoff: .milliseconds(10))], dispatcher: CurlDispatcher())
        await #expect {
            try await pipeline.send(Runway.Request(url: server.url("/reset")))
        } throws: { ($0 as? RunwayError)?.code == .connectionLost }
        #expect(server.stats.requests(path: "/reset") == 3)
    }

    @Test("a connect timeout sent nothing: it is retried for a POST too")
    func aConnectTimeoutIsRetriedForEveryMethod() async throws {
        let blackhole = try BlackholeListener.start()
        let (pipeline, retries) = try countingRetries()
        var options = RequestOptions()
        options.connectTimeout = .milliseconds(200)
        let request = Runway.Request(method: .post, url: blackhole.url("/orders"), body: Data("x".utf8), options: options)
        await expectFailure(code: .timeout, neverSent: true) { try await pipeline.send(request) }
        #expect(retries.value == 2)
    }

    @Test("a total timeout after the request went out is not retried for a POST")
    func aTimeoutAfterSendingIsNotRetriedForAPost() async throws {
        let counter = Counter()
        let server = try await TestServer.start { router in
            router.post("/slow-order") { _, _ -> String in
                _ = counter.increment()
                try await Task.sleep(for: .seconds(5))
                return "late"
            }
        }
        defer { Task { await server.shutdown() } }
        let (pipeline, retries) = try countingRetries()
        var options = RequestOptions()
        options.timeout = .seconds(1)
        let request = Runway.Request(method: .post, url: server.url("/slow-order"), body: Data("x".utf8), options: options)
        await expectFailure(code: .timeout, neverSent: false) { try await pipeline.send(request) }
        #expect(retries.value == 0)
        // It did go out (the server may see it after the client gave up, on a loaded machine).
        #expect(await eventually { counter.value >= 1 })
    }

    /// Post/redirect/get: the server handles the POST and answers 303 to a host that refuses
    /// connections. The refusal comes after the POST went out, so it is not sent again.
    @Test("a POST whose redirect cannot connect is not sent again")
    func aPostWhoseRedirectCannotConnectIsNotRetried() async throws {
        let dead = try RefusingPort()
        let deadURL = dead.url("/receipt")
        let counter = Counter()
        let server = try await TestServer.start { router in
            router.post("/orders") { _, _ in
                _ = counter.increment()
                return Hummingbird.Response(status: .seeOther, headers: [.location: deadURL.absoluteString])
            }
        }
        defer { Task { await server.shutdown() } }
        let (pipeline, retries) = try countingRetries()
        var options = RequestOptions()
        options.redirects = .follow()
        let request = Runway.Request(method: .post, url: server.url("/orders"), body: Data("x".utf8), options: options)
        await expectFailure(code: .cannotConnect, neverSent: false) { try await pipeline.send(request) }
        #expect(retries.value == 0)
        #expect(counter.value == 1)
        withExtendedLifetime(dead) {}
    }

    /// A server that answers 503 for ever, 100 ms between attempts, a thousand attempts allowed:
    /// without a total timeout the call takes more than a minute and a thousand requests. With
    /// one it makes the attempts that start within it and hands back the last 503 — or, when the
    /// last attempt was cut to what was left and did not answer in time (a loaded machine, the
    /// thread sanitizer), fails `.timeout` saying the total ran out. (The bounds stand against
    /// that minute: on a loaded machine one attempt can take seconds.)
    @Test("a total timeout ends the retries of a server that keeps failing, by the policy or by the call's override")
    func aTotalTimeoutEndsTheRetries() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        func policy(totalTimeout: Duration?) throws -> RetryPolicy {
            try RetryPolicy(
                maxAttempts: 1_000, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(100), jitter: 0,
                totalTimeout: totalTimeout)
        }
        let clock = ContinuousClock()
        var started = clock.now
        let bounded = Pipeline(
            interceptors: [RetryInterceptor(policy: try policy(totalTimeout: .seconds(2)))], dispatcher: CurlDispatcher())
        /// The call's end: the last 503, or the total timeout cutting the last attempt.
        func end(of call: () async throws -> Runway.Response) async -> String {
            do {
                return "status \(try await call().status)"
            } catch let error as RunwayError where error.code == .timeout && error.message.contains("total timeout") {
                return "total timeout"
            } catch {
                return "\(error)"
            }
        }
        let ends = ["status 503", "total timeout"]
        #expect(ends.contains(await end { try await bounded.send(Runway.Request(url: server.url("/status/503"))) }))
        #expect(started.duration(to: clock.now) < .seconds(30))
        let attempts = server.stats.requests(path: "/status/503")
        #expect((1...20).contains(attempts), "attempts 100 ms apart within 2 s: \(attempts)")

        let unbounded = Pipeline(interceptors: [RetryInterceptor(policy: try policy(totalTimeout: nil))], dispatcher: CurlDispatcher())
        var context = RequestContext(apiName: "listing.search")
        context[RetryOverride.Key.self] = RetryOverride(totalTimeout: .seconds(1))
        started = clock.now
        #expect(ends.contains(await end { try await unbounded.send(Runway.Request(url: server.url("/status/503")), context: context) }))
        #expect(started.duration(to: clock.now) < .seconds(30))
        #expect((1...10).contains(server.stats.requests(path: "/status/503") - attempts))
    }

    /// An attempt that hangs is cut when the call's total timeout runs out, though its own
    /// timeout and the server's wait are five minutes: the call fails `.timeout`, saying why, and
    /// is not retried.
    @Test("an attempt that hangs is cut at the call's total timeout")
    func aTotalTimeoutCutsAnAttemptThatHangs() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let retries = Counter()
        let policy = try RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), totalTimeout: .milliseconds(500))
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy) { _ in retries.increment() }], dispatcher: CurlDispatcher())
        var options = RequestOptions()
        options.timeout = .seconds(300)
        let clock = ContinuousClock()
        let started = clock.now
        await #expect {
            try await pipeline.send(Runway.Request(url: server.url("/delay?ms=300000"), options: options))
        } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .timeout && error.message.contains("total timeout") && error.neverSent == false
        }
        let took = started.duration(to: clock.now)
        #expect(took >= .milliseconds(450) && took < .seconds(60), "took \(took)")
        #expect(retries.value == 0)
    }

    /// A request without a timeout asked to last (an event stream, a large download): a total
    /// timeout shorter than its answer does not cut it.
    @Test("a request without a timeout is not cut by the total timeout")
    func aRequestWithoutATimeoutIsNotCut() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let policy = try RetryPolicy(maxAttempts: 2, totalTimeout: .milliseconds(200))
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy)], dispatcher: CurlDispatcher())
        var options = RequestOptions()
        options.timeout = nil
        // `/delay` answers after 600 ms with `/json`'s body.
        let response = try await pipeline.send(Runway.Request(url: server.url("/delay?ms=600"), options: options))
        #expect(response.status == 200)
        // Not through `pipeline`: its total timeout of 200 ms would cut this request on a loaded machine.
        let expected = try await Pipeline(interceptors: [], dispatcher: CurlDispatcher()).send(Runway.Request(url: server.url("/json")))
        #expect(response.body == expected.body)
    }

    /// A connect timeout well inside the call's total timeout is the connection's, not the
    /// call's: it is retried as without one, and the last attempt's own error is thrown.
    @Test("a connect timeout inside the total timeout is retried as usual")
    func aConnectTimeoutInsideTheTotalTimeoutIsRetried() async throws {
        let blackhole = try BlackholeListener.start()
        let retries = Counter()
        // A total timeout far beyond three connect timeouts, even on a machine the whole suite loads.
        let policy = try RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), totalTimeout: .seconds(120))
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy) { _ in retries.increment() }], dispatcher: CurlDispatcher())
        var options = RequestOptions()
        options.connectTimeout = .milliseconds(200)
        await #expect {
            try await pipeline.send(Runway.Request(url: blackhole.url("/json"), options: options))
        } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .timeout && error.neverSent && !error.message.contains("total timeout")
        }
        #expect(retries.value == 2)
    }

    /// Expects `send` to fail with `code`, saying whether the request was sent.
    private func expectFailure(
        code: RunwayError.Code, neverSent: Bool, sourceLocation: SourceLocation = #_sourceLocation,
        _ send: () async throws -> Runway.Response
    ) async {
        await #expect(sourceLocation: sourceLocation) {
            try await send()
        } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == code && error.neverSent == neverSent
        }
    }

    /// Three attempts, 1 ms apart, over libcurl; the counter counts the retries.
    private func countingRetries() throws -> (Pipeline, Counter) {
        let retries = Counter()
        let policy = try RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1))
        let retry = RetryInterceptor(policy: policy) { _ in retries.increment() }
        return (Pipeline(interceptors: [retry], dispatcher: CurlDispatcher()), retries)
    }
}
