import CoreMetrics
import Foundation
import MetricsTestKit
import Runway
import RunwayCurl
import RunwayMetrics
import RunwaySync
import RunwayTestServer
import RunwayTesting
import Testing

@Suite struct MetricsInterceptorTests {
    let metrics = TestMetrics()

    func pipeline(_ dispatcher: any Dispatcher, _ extra: [any Interceptor] = []) throws -> Pipeline {
        Pipeline(interceptors: [try MetricsInterceptor.metrics(factory: metrics)] + extra, dispatcher: dispatcher)
    }

    @Test func countsAndTimesPerServiceAPIAndOutcome() async throws {
        let transfer = TransferMetrics(
            nameLookup: .milliseconds(2), connect: .milliseconds(5), tlsHandshake: .zero, firstByte: .milliseconds(9),
            total: .milliseconds(12))
        let ok = try pipeline(StubDispatcher { _ in Response(status: 200, metrics: transfer, origin: .network) })
        let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
        _ = try await ok.send(try Request("https://api.test/rent"), context: context)
        _ = try await ok.send(try Request("https://api.test/rent"), context: context)

        let dims = [("service", "listings"), ("api", "listing.rent"), ("method", "GET"), ("outcome", "success"), ("origin", "stub")]
        #expect(try metrics.expectCounter("runway_requests_total", dims).totalValue == 2)
        let duration = try metrics.expectTimer(
            "runway_request_duration", [("service", "listings"), ("api", "listing.rent"), ("outcome", "success")])
        #expect(duration.values.count == 2)
        #expect(duration.values.allSatisfy { $0 > 0 })
        let dns = try metrics.expectTimer(
            "runway_transfer_phase", [("service", "listings"), ("api", "listing.rent"), ("phase", "dns")])
        #expect(dns.values == [2_000_000, 2_000_000])
        let firstByte = try metrics.expectTimer(
            "runway_transfer_phase", [("service", "listings"), ("api", "listing.rent"), ("phase", "first_byte")])
        #expect(firstByte.values == [9_000_000, 9_000_000])
        // No TLS phase for a transfer without TLS.
        #expect(metrics.timers(label: "runway_transfer_phase").allSatisfy { !$0.dimensions.contains { $0 == ("phase", "tls") } })
    }

    @Test func aStreamedCallIsCountedWhenItsBodyEndsByHowItEnded() async throws {
        let stub = StubDispatcher { _ in
            var response = Response(status: 200)
            response.bodyStream = ResponseBodyStream(chunks: [Data("a".utf8)], failure: RunwayError(.connectionLost, "reset"))
            return response
        }
        var request = try Request("https://api.test/events")
        request.streamsResponseBody = true
        let context = RequestContext(apiName: "events", serviceID: "listings")
        let response = try await pipeline(stub).send(request, context: context)
        #expect(metrics.counters.isEmpty || metrics.counters.allSatisfy { $0.label != "runway_requests_total" })
        let stream = try #require(response.bodyStream)
        await #expect(throws: RunwayError.self) { for try await _ in stream {} }
        let lost = [("service", "listings"), ("api", "events"), ("method", "GET"), ("outcome", "connectionLost"), ("origin", "stub")]
        #expect(try metrics.expectCounter("runway_requests_total", lost).totalValue == 1)
        #expect(metrics.counters.allSatisfy { !$0.dimensions.contains { $0 == ("outcome", "success") } })
    }

    @Test func aStreamedResponseDroppedUnreadStillAbortsItsTransfer() async throws {
        let aborted = Counter()
        let stub = StubDispatcher { _ in
            let (stream, producer) = ResponseBodyStream.makeStream(onResume: {}, onCancel: { aborted.increment() })
            _ = producer.yield(Data("a".utf8))
            var response = Response(status: 200)
            response.bodyStream = stream
            return response
        }
        var request = try Request("https://api.test/events")
        request.streamsResponseBody = true
        // The response, and the stream in it, go as soon as this returns: the counting must not keep it.
        _ = try await pipeline(stub).send(request, context: RequestContext(apiName: "events", serviceID: "listings"))
        #expect(aborted.value == 1)
        let dropped = [("service", "listings"), ("api", "events"), ("method", "GET"), ("outcome", "cancelled"), ("origin", "stub")]
        #expect(try metrics.expectCounter("runway_requests_total", dropped).totalValue == 1)
    }

    @Test func everyRetryIsCountedByItsCauseWithoutWiring() async throws {
        let attempts = Counter()
        let stub = StubDispatcher { _ in
            switch attempts.increment() {
            case 1: throw RunwayError(.connectionLost, "reset")
            case 2: return Response(status: 503)
            default: return Response(status: 200)
            }
        }
        let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1))
        let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
        _ = try await pipeline(stub, [retry]).send(try Request("https://api.test/rent"), context: context)
        #expect(attempts.value == 3)
        let lost = [("service", "listings"), ("api", "listing.rent"), ("cause", "connectionLost")]
        #expect(try metrics.expectCounter("runway_retries_total", lost).totalValue == 1)
        let unavailable = [("service", "listings"), ("api", "listing.rent"), ("cause", "503")]
        #expect(try metrics.expectCounter("runway_retries_total", unavailable).totalValue == 1)
        // One call, as the caller saw it.
        let dims = [("service", "listings"), ("api", "listing.rent"), ("method", "GET"), ("outcome", "success"), ("origin", "stub")]
        #expect(try metrics.expectCounter("runway_requests_total", dims).totalValue == 1)
    }

    @Test func everyRedirectFollowedIsCountedByItsStatusWithoutWiring() async throws {
        try await withTestServer { server in
            let redirects = try RedirectInterceptor.redirects(max: 5)
            let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
            let pipeline = try pipeline(CurlDispatcher(), [redirects])
            let post = Runway.Request(method: .post, url: server.url("/redirect-to?status=303&url=/redirect/2"), body: Data("{}".utf8))
            let response = try await pipeline.send(post, context: context)
            #expect(response.status == 200)
            #expect(server.stats.requests(path: "/redirect/0") == 1)
            let seeOther = [("service", "listings"), ("api", "listing.rent"), ("status", "303")]
            #expect(try metrics.expectCounter("runway_redirects_total", seeOther).totalValue == 1)
            let found = [("service", "listings"), ("api", "listing.rent"), ("status", "302")]
            #expect(try metrics.expectCounter("runway_redirects_total", found).totalValue == 2)
            // One call, as the caller saw it.
            let dims = [
                ("service", "listings"), ("api", "listing.rent"), ("method", "POST"), ("outcome", "success"), ("origin", "network"),
            ]
            #expect(try metrics.expectCounter("runway_requests_total", dims).totalValue == 1)
        }
    }

    @Test func httpErrorsThrownErrorsAndCacheHitsHaveTheirOwnOutcome() async throws {
        let context = RequestContext(apiName: "a", serviceID: "s")
        _ = try await pipeline(StubDispatcher(status: 503)).send(try Request("https://api.test/"), context: context)
        _ = try await pipeline(StubDispatcher(status: 404)).send(try Request("https://api.test/"), context: context)
        let failing = try pipeline(StubDispatcher { _ in throw RunwayError(.timeout, "slow") })
        await #expect(throws: RunwayError.self) { try await failing.send(try Request("https://api.test/"), context: context) }
        /// Answers like a cache hit, never calling `next`.
        struct Hit: Interceptor {
            func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
                Response(status: 200, origin: .memoryCache)
            }
        }
        let stub = StubDispatcher(status: 200)
        _ = try await pipeline(stub, [Hit()]).send(try Request("https://api.test/"), context: context)
        #expect(stub.requests.isEmpty)

        func total(_ outcome: String, _ origin: String) -> Int64 {
            metrics.counterTotal(
                label: "runway_requests_total",
                dimensions: [("service", "s"), ("api", "a"), ("method", "GET"), ("outcome", outcome), ("origin", origin)])
        }
        #expect(total("server_error", "stub") == 1)
        #expect(total("client_error", "stub") == 1)
        #expect(total("timeout", "none") == 1)
        #expect(total("success", "memory-cache") == 1)
        // A cache hit records no transfer phases.
        #expect(metrics.timers(label: "runway_transfer_phase").isEmpty)
    }

    @Test func invalidPrefixIsRejectedAtRegistration() {
        for prefix in ["", "9lives", "has space", "dash-ed", "点"] {
            #expect(throws: RunwayError.self) { try MetricsInterceptor(prefix: prefix) }
        }
        #expect(throws: Never.self) { try MetricsInterceptor(prefix: "house_hunter2") }
    }

    /// Each metric is made once, at its first use, and kept: a backend registers a metric when
    /// it is made. A phase's timer is made when a transfer first goes through that phase.
    /// libcurl times the lookup of an IP literal and the phases of a reused connection at a
    /// few microseconds; none of them happened, so none is recorded (and the response's metrics
    /// say zero).
    @Test func phasesATransferSkippedAreNotRecorded() async throws {
        try await withTestServer { server in
            let pipeline = try pipeline(CurlDispatcher())
            let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
            var responses: [Response] = []
            for _ in 0..<3 { responses.append(try await pipeline.send(Request(url: server.url("/json")), context: context)) }
            let first = responses[0].metrics
            #expect(!first.connectionReused && first.connect > .zero)
            #expect(first.nameLookup == .zero, "no lookup for 127.0.0.1: \(first)")
            for later in responses.dropFirst().map(\.metrics) {
                #expect(later.connectionReused)
                #expect(later.nameLookup == .zero && later.connect == .zero && later.tlsHandshake == .zero, "\(later)")
                #expect(later.firstByte > .zero && later.total > .zero)
            }
            func phase(_ name: String) -> [Int64]? {
                try? metrics.expectTimer("runway_transfer_phase", [("service", "listings"), ("api", "listing.rent"), ("phase", name)])
                    .values
            }
            #expect(phase("dns") == nil && phase("tls") == nil)
            #expect(phase("connect")?.count == 1)
            #expect(phase("total")?.count == 3)
        }
    }

    @Test func eachMetricIsMadeOnceAndAPhaseTimerWhenATransferFirstHasThePhase() async throws {
        let made = MadeMetrics(metrics)
        let plain = TransferMetrics(
            nameLookup: .zero, connect: .zero, tlsHandshake: .zero, firstByte: .milliseconds(3), total: .milliseconds(4))
        let secure = TransferMetrics(
            nameLookup: .zero, connect: .milliseconds(1), tlsHandshake: .milliseconds(2), firstByte: .milliseconds(3),
            total: .milliseconds(4))
        let transfers = Locked([plain, plain, plain, secure, secure])
        let stub = StubDispatcher { _ in Response(status: 200, metrics: transfers.withLock { $0.removeFirst() }) }
        let pipeline = Pipeline(interceptors: [try MetricsInterceptor.metrics(factory: made)], dispatcher: stub)
        let context = RequestContext(apiName: "listing.rent", serviceID: "listings")
        for _ in 0..<3 { _ = try await pipeline.send(try Request("https://api.test/rent"), context: context) }
        #expect(made.labels == ["runway_requests_total", "runway_request_duration", "runway_transfer_phase", "runway_transfer_phase"])
        for _ in 0..<2 { _ = try await pipeline.send(try Request("https://api.test/rent"), context: context) }
        #expect(made.labels.count == 6)  // connect and TLS, at the first transfer that had them
        let dims = [("service", "listings"), ("api", "listing.rent"), ("method", "GET"), ("outcome", "success"), ("origin", "stub")]
        #expect(try metrics.expectCounter("runway_requests_total", dims).totalValue == 5)
        let tls = try metrics.expectTimer("runway_transfer_phase", [("service", "listings"), ("api", "listing.rent"), ("phase", "tls")])
        #expect(tls.values == [2_000_000, 2_000_000])
        let total = try metrics.expectTimer(
            "runway_transfer_phase", [("service", "listings"), ("api", "listing.rent"), ("phase", "total")])
        #expect(total.values.count == 5)
        #expect(metrics.timers(label: "runway_transfer_phase").allSatisfy { !$0.dimensions.contains { $0 == ("phase", "dns") } })
    }
}

/// A metrics factory that records the label of each counter and timer it makes, and makes them
/// with `base`.
private final class MadeMetrics: MetricsFactory, Sendable {
    let base: TestMetrics
    private let made = Locked([String]())

    init(_ base: TestMetrics) {
        self.base = base
    }

    var labels: [String] { made.withLock { $0 } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        made.withLock { $0.append(label) }
        return base.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made.withLock { $0.append(label) }
        return base.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
