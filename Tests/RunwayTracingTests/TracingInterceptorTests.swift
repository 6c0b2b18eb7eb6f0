import Foundation
import InMemoryTracing
import Runway
import RunwayCurl
import RunwayTestServer
import RunwayTesting
import RunwayTracing
import Testing
import Tracing

@Suite struct TracingInterceptorTests {
    @Test func oneClientSpanPerCallWithAttributesAndPropagation() async throws {
        let tracer = InMemoryTracer()
        let stub = StubDispatcher(status: 201)
        let pipeline = Pipeline(dispatcher: stub) { TracingInterceptor.tracing(tracer) }
        _ = try await pipeline.send(
            try Request(method: .post, "https://api.test:8443/v1/rent?token=secret"),
            context: RequestContext(apiName: "listing.rent", serviceID: "listings"))

        let spans = tracer.finishedSpans
        try #require(spans.count == 1)
        let span = spans[0]
        #expect(span.operationName == "POST listing.rent")
        #expect(span.kind == .client)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "POST")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 201)
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "https://api.test:8443/v1/rent")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 8443)
        #expect(span.attributes["runway.api"]?.toSpanAttribute() == "listing.rent")
        #expect(span.attributes["runway.origin"]?.toSpanAttribute() == "stub")
        #expect(span.status == nil)
        // The span context went out in the request headers.
        let sent = try #require(stub.requests.first)
        #expect(sent.headers[InMemoryTracer.traceIDKey] == span.traceID)
    }

    @Test func theURLIsWrittenAsSentWithoutCredentialsQueryOrFragment() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) { TracingInterceptor.tracing(tracer) }
        _ = try await pipeline.send(try Request("http://user:pw@[::1]:8080/a%2Fb/%E2%82%AC?token=secret#part"))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "http://[::1]:8080/a%2Fb/%E2%82%AC")
        #expect(span.operationName == "GET")
    }

    /// An API name that carries a query (`send(api:)` takes a path) names the span and its
    /// `runway.api` without it, as `url.full` leaves the query out.
    @Test func anAPINamesQueryIsLeftOut() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) { TracingInterceptor.tracing(tracer) }
        _ = try await pipeline.send(try Request("https://api.test/item/7"), context: RequestContext(apiName: "item/7?token=secret;s=x"))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.operationName == "GET item/7")
        #expect(span.attributes["runway.api"]?.toSpanAttribute() == "item/7")
    }

    /// A path segment's `;name=value` parameters carry session ids (`;jsessionid=`) and tokens
    /// as a query does: `url.full` leaves them out, as error messages do, and keeps the rest of
    /// the path as it was sent.
    @Test func thePathSegmentsParametersAreLeftOutOfTheURL() async throws {
        try await withTestServer { server in
            let tracer = InMemoryTracer()
            let pipeline = Pipeline(dispatcher: CurlDispatcher()) { TracingInterceptor.tracing(tracer) }
            let sent = server.url("/cart;jsessionid=sess-9F2/items;v=2;token=tok-77/a%3Bb?page=1")
            _ = try await pipeline.send(Request(url: sent))
            let span = try #require(tracer.finishedSpans.first)
            let full = try #require(span.attributes["url.full"]?.toSpanAttribute())
            #expect(full == .string(server.url("/cart/items/a%3Bb").absoluteString), "\(full)")
        }
    }

    /// OpenTelemetry wants `server.port` on every client span: the scheme's default when the URL
    /// names none.
    @Test(arguments: [("https://api.test/v1", 443), ("http://api.test/v1", 80), ("HTTPS://api.test:8443/v1", 8443)])
    func theServerPortIsTheSchemesDefaultWhenTheURLNamesNone(url: String, port: Int) async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline(dispatcher: StubDispatcher(status: 200)) { TracingInterceptor.tracing(tracer) }
        _ = try await pipeline.send(try Request(url))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(port)))
    }

    @Test func aCallWithoutAnAPINameIsNamedByItsMethodNotItsPath() async throws {
        try await withTestServer { server in
            let tracer = InMemoryTracer()
            let pipeline = Pipeline(dispatcher: CurlDispatcher()) { TracingInterceptor.tracing(tracer) }
            // Paths that carry IDs: one span name for all of them, or a backend gets one per ID.
            for id in [17, 4242] { _ = try await pipeline.send(Request(url: server.url("/bytes/\(id)"))) }
            _ = try await pipeline.send(Request(url: server.url("/bytes/3")), context: RequestContext(apiName: "bytes"))
            let spans = tracer.finishedSpans
            #expect(spans.map(\.operationName) == ["GET", "GET", "GET bytes"])
            // The path is in url.full, where a backend does not group by it.
            for (span, id) in zip(spans, [17, 4242, 3]) {
                #expect(span.attributes["url.full"]?.toSpanAttribute() == .string(server.url("/bytes/\(id)").absoluteString))
            }
        }
    }

    @Test func aStreamedCallsSpanEndsWithItsBodyAndCarriesItsFailure() async throws {
        let tracer = InMemoryTracer()
        let stub = StubDispatcher { _ in
            var response = Response(status: 200)
            response.bodyStream = ResponseBodyStream(chunks: [Data("a".utf8)], failure: RunwayError(.connectionLost, "reset"))
            return response
        }
        let pipeline = Pipeline(dispatcher: stub) { TracingInterceptor.tracing(tracer) }
        var request = try Request("https://api.test/events")
        request.streamsResponseBody = true
        let response = try await pipeline.send(request)
        #expect(tracer.finishedSpans.isEmpty, "the span ended with the head")
        let stream = try #require(response.bodyStream)
        await #expect(throws: RunwayError.self) { for try await _ in stream {} }
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
    }

    @Test func errorsAndServerErrorsMarkTheSpan() async throws {
        let tracer = InMemoryTracer()
        let failing = Pipeline(dispatcher: StubDispatcher { _ in throw RunwayError(.timeout, "slow") }) {
            TracingInterceptor.tracing(tracer)
        }
        await #expect(throws: RunwayError.self) { try await failing.send(try Request("https://api.test/x")) }
        let serverError = Pipeline(dispatcher: StubDispatcher(status: 502)) { TracingInterceptor.tracing(tracer) }
        _ = try await serverError.send(try Request("https://api.test/x"))

        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans[0].status?.code == .error)
        #expect(spans[0].errors.count == 1)
        #expect(spans[0].operationName == "GET")
        #expect(spans[1].status?.code == .error)
        #expect(spans[1].attributes["http.response.status_code"]?.toSpanAttribute() == 502)
    }

    /// A `tracestate` describes the trace of the `traceparent` it came with (W3C Trace Context).
    /// The app's goes with the app's `traceparent` when the tracer replaces that and sends none;
    /// a tracer that writes both replaces both, and one that writes neither leaves both.
    @Test func theAppsTraceStateGoesWithTheTraceParentTheTracerReplaces() async throws {
        try await withTestServer { server in
            let appContext = ["traceparent": "00-11111111111111111111111111111111-2222222222222222-01", "tracestate": "app=1"]
            func sent(_ tracer: any Tracer) async throws -> [String: String] {
                let pipeline = Pipeline(dispatcher: CurlDispatcher()) { TracingInterceptor.tracing(tracer) }
                let response = try await pipeline.send(
                    Request(url: server.url("/headers"), headers: HTTPHeaders(appContext.map { ($0.key, $0.value) })))
                return try JSONDecoder().decode([String: String].self, from: response.body)
            }
            let parentOnly = try await sent(W3CTracer(writesState: false))
            #expect(parentOnly["traceparent"]?.hasPrefix("00-") == true)
            #expect(parentOnly["traceparent"] != appContext["traceparent"])
            #expect(parentOnly["tracestate"] == nil)
            let both = try await sent(W3CTracer(writesState: true))
            #expect(both["tracestate"] == "runway=test")
            let neither = try await sent(InMemoryTracer())
            #expect(neither["traceparent"] == appContext["traceparent"])
            #expect(neither["tracestate"] == "app=1")
        }
    }
}

/// The in-memory tracer's spans, propagated as a W3C tracer does: a `traceparent`, and a
/// `tracestate` when it has one to send.
private struct W3CTracer: Tracer {
    let base = InMemoryTracer()
    let writesState: Bool

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        base.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        let traceID = String(repeating: "0", count: max(0, 32 - span.traceID.count)) + span.traceID
        let spanID = String(repeating: "0", count: max(0, 16 - span.spanID.count)) + span.spanID
        injector.inject("00-\(traceID.suffix(32))-\(spanID.suffix(16))-01", forKey: "traceparent", into: &carrier)
        if writesState { injector.inject("runway=test", forKey: "tracestate", into: &carrier) }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Carrier == Extract.Carrier {}
}
