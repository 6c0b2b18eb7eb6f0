import Foundation
import Metrics
import MetricsTestKit
import Runway
import RunwayCache
import RunwayCurl
import RunwayMetrics
import RunwaySigning
import RunwayTesting
import RunwayTracing
import Testing

/// The README's start-up registration, compiled and run, in the ``DefaultOrder``.
@Suite struct StartupRegistrationTests {
    func makePipeline(
        apiSecret: String, cachesDirectory: URL, dispatcher: any Dispatcher, metricsFactory: (any MetricsFactory)? = nil,
        extra: [any Interceptor] = []
    ) throws -> (Pipeline, ResponseCache) {
        // README: "Register interceptors at start-up"
        let validation = try ValidationInterceptor.validation([
            "listing.rent": APIValidation(
                parameters: [
                    ParameterRule("city", .required, .length(1...40)),
                    ParameterRule("page", .type(.integer), .range(1...500)),
                    ParameterRule("sort", .oneOf(["price", "date"])),
                ],
                response: ResponseRule(contentType: "application/json", json: .object(["items": .array(), "total": .integer])))
        ])
        let cache = try ResponseCache(
            environment: "production",
            policies: [
                "listing.detail": .memoryAndDisk(),  // 3 minutes, the seed's figure
                "listing.rent": .memory(ttl: .seconds(60)).cacheThenNetwork(),
                "account.balance": .never,  // money is never served from a cache
            ],
            diskFile: cachesDirectory.appending(path: "runway-cache.sqlite"))
        let signing = try SigningInterceptor.signing(secret: apiSecret, keyID: "2026-11")
        let metrics = try MetricsInterceptor.metrics(factory: metricsFactory)

        let pipeline = Pipeline(dispatcher: dispatcher) {
            TracingInterceptor.tracing()
            metrics
            // logging
            validation
            cache.interceptor
            // retry
            signing
            // compression, DNS bypass
            extra
        }
        return (pipeline, cache)
    }

    @Test func proposedOrderHitsSkipSigningAndInvalidCallsNeverGoOut() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-startup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = RecordingInterceptor.Log()
        let body = Data(#"{"items":[],"total":0}"#.utf8)
        let stub = StubDispatcher { _ in Response(status: 200, headers: ["Content-Type": "application/json"], body: body) }
        let metrics = TestMetrics()
        let (pipeline, _) = try makePipeline(
            apiSecret: "secret", cachesDirectory: directory, dispatcher: stub, metricsFactory: metrics,
            extra: [RecordingInterceptor(name: "wire", log: log)])
        #expect(pipeline.interceptors.map(\.name) == ["tracing", "metrics", "validation", "cache", "signing", "wire"])
        #expect(DefaultOrder.misplaced(in: pipeline.interceptors).isEmpty)

        let context = RequestContext(apiName: "listing.detail", serviceID: "listings")
        _ = try await pipeline.send(try Request("https://api.test/detail?id=1"), context: context)
        let hit = try await pipeline.send(try Request("https://api.test/detail?id=1"), context: context)
        #expect(hit.origin == .memoryCache)
        #expect(stub.requests.count == 1)
        #expect(stub.requests[0].headers["X-Runway-Signature"] != nil)
        #expect(log.events.count == 2)  // one request and one response on the wire; the hit never got there

        await #expect(throws: RunwayError.self) {
            try await pipeline.send(try Request("https://api.test/rent?page=2"), context: RequestContext(apiName: "listing.rent"))
        }
        #expect(stub.requests.count == 1)
        #expect(metrics.counterTotal(label: "runway_requests_total") == 3)
    }

    @Test func badConfigurationFailsAtStartUp() {
        #expect(throws: RunwayError.self) {
            try makePipeline(apiSecret: "", cachesDirectory: FileManager.default.temporaryDirectory, dispatcher: CurlDispatcher())
        }
    }
}
