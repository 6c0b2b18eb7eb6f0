import Foundation
import InMemoryTracing
import Runway
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
        #expect(spans[0].operationName == "GET /x")
        #expect(spans[1].status?.code == .error)
        #expect(spans[1].attributes["http.response.status_code"]?.toSpanAttribute() == 502)
    }
}
