import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayCache
import RunwayCompression
import RunwayCurl
import RunwayLogging
import RunwayTestServer
import Testing

/// A manager whose name and path differ, and whose per-call settings come from its parameters
/// through ``APIManager/configure(_:params:)``.
private final class ProductAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = "product.detail"
    let path = "products/{id}"
    let serviceID: ServiceID = "shop"
    let method: HTTPMethod
    var loadPolicy: LoadPolicy { .concurrent }
    private let settings: @Sendable (inout RequestContext, [String: JSON]) -> Void

    init(
        registry: ServiceRegistry, method: HTTPMethod = .get,
        settings: @escaping @Sendable (inout RequestContext, [String: JSON]) -> Void = { _, _ in }
    ) {
        engine = ManagerEngine(registry: registry, delivery: .inline)
        self.method = method
        self.settings = settings
    }

    func configure(_ context: inout RequestContext, params: [String: JSON]) { settings(&context, params) }
}

private struct Shop: Service {
    let id: ServiceID = "shop"
    let baseURLs: BaseURLs
}

/// Path templates and per-call settings, each standard interceptor's context key set by a
/// manager, against a scripted server on 127.0.0.1.
@Suite struct PerCallSettingsTests {
    let responder: ScriptedResponder
    let registry: ServiceRegistry
    private let flaky = Counter()

    init() throws {
        let flaky = flaky
        responder = try ScriptedResponder { exchange in
            let encoding = exchange.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-encoding:") }
            var status = 200
            if exchange.target.hasPrefix("/v1/products/flaky"), flaky.increment() == 1 { status = 503 }
            let encodingName = encoding.map { String($0.dropFirst(17)).trimmingCharacters(in: .whitespaces) } ?? "none"
            let body = #"{"target":"\#(exchange.target)","encoding":"\#(encodingName)"}"#
            return .reply(
                Array("HTTP/1.1 \(status) X\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        }
        let pipeline = Pipeline(
            interceptors: [
                .logging(nil), try .validation([:]), try .cache(policies: [:]),
                try .retry(maxAttempts: 1, initialBackoff: .milliseconds(1)), try .compression(threshold: 16, scope: .none),
            ],
            dispatcher: CurlDispatcher())
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: pipeline)
        builder.register(Shop(baseURLs: BaseURLs("http://127.0.0.1:\(responder.port)/v1")))
        registry = try builder.build()
    }

    private var targets: [String] { responder.exchanges.map { String($0.target) } }

    @Test func thePathIsFilledFromTheParametersAndTheNameStaysTheIdentity() async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry) { context, _ in
            #expect(context.apiName == "product.detail")
        }
        try await manager.load(params: ["id": 7, "lang": "en"])
        try await manager.load(params: ["id": "a/b c?", "lang": "en"])
        #expect(targets == ["/v1/products/7?lang=en", "/v1/products/a%2Fb%20c%3F?lang=en"])
    }

    @Test(
        arguments: [
            (["lang": "en"], "id is missing"), (["id": "", "lang": "en"], "id is empty"), (["id": "..", "lang": "en"], "move the path up"),
            (["id": .array([1]), "lang": "en"], "must be a string, number or boolean"),
        ] as [([String: JSON], String)])
    func aMissingOrEmptyPathParameterIsParamsInvalidAndNothingIsSent(params: [String: JSON], message: String) async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry)
        await #expect {
            try await manager.load(params: params)
        } throws: { error in
            guard let error = error as? RunwayError else { return false }
            return error.code == .paramsInvalid && error.field == "id" && error.message.contains(message)
        }
        #expect(responder.exchanges.isEmpty)
    }

    @Test func validationRulesForOneCall() async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry) { context, _ in
            context[APIValidation.Key.self] = try? APIValidation(parameters: [ParameterRule("lang", .required, .oneOf(["en", "zh"]))])
        }
        await #expect { try await manager.load(params: ["id": 1, "lang": "fr"]) } throws: {
            ($0 as? RunwayError)?.code == .paramsInvalid && ($0 as? RunwayError)?.field == "lang"
        }
        #expect(responder.exchanges.isEmpty)
        try await manager.load(params: ["id": 1, "lang": "zh"])
        #expect(targets == ["/v1/products/1?lang=zh"])
    }

    @Test func aCachePolicyForOneCallAndAHitClaimsNoNetwork() async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry) { context, params in
            if params["cache"]?.bool == true { context[CachePolicy.Key.self] = .memory(ttl: .seconds(60)) }
        }
        for _ in 0..<2 { try await manager.load(params: ["id": 3, "cache": true]) }
        for _ in 0..<2 { try await manager.load(params: ["id": 4, "cache": false]) }
        #expect(targets == ["/v1/products/3?cache=true", "/v1/products/4?cache=false", "/v1/products/4?cache=false"])
        try await manager.load(params: ["id": 3, "cache": true])
        let hit = try #require(manager.lastResponse)
        #expect(hit.origin == .memoryCache)
        #expect(hit.metrics.isEmpty)
        #expect("\(hit.metrics)" == "no network transfer")
    }

    @Test func compressionForOneCall() async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry, method: .post) { context, params in
            context[CompressionInterceptor.Key.self] = params["zip"]?.bool
        }
        let note = String(repeating: "a long note ", count: 20)
        let plain = try await manager.load(params: ["id": 5, "note": .string(note), "zip": false])
        let zipped = try await manager.load(params: ["id": 5, "note": .string(note), "zip": true])
        #expect(plain["encoding"]?.string == "none")
        #expect(zipped["encoding"]?.string == "gzip")
    }

    @Test func aRetryOverrideForOneCall() async throws {
        defer { responder.stop() }
        let manager = ProductAPIManager(registry: registry) { context, params in
            if params["retry"]?.bool == true { context[RetryOverride.Key.self] = RetryOverride(maxAttempts: 3) }
        }
        let answer = try await manager.load(params: ["id": "flaky", "retry": true])
        #expect(answer["target"]?.string == "/v1/products/flaky?retry=true")
        #expect(targets.count == 2)
    }

    @Test func aLoggerForOneCall() async throws {
        defer { responder.stop() }
        var handler = InMemoryLogHandler()
        handler.logLevel = .info
        let own = handler
        let manager = ProductAPIManager(registry: registry) { context, _ in
            context[LoggingInterceptor.Key.self] = Logger(label: "call") { _ in own }
        }
        try await manager.load(params: ["id": 8])
        #expect(handler.entries.contains { "\($0.message)".hasPrefix("GET http://127.0.0.1:\(responder.port)/v1/products/8 → 200") })
    }
}
