import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayCompression
import RunwayDNSBypass
import RunwayLogging
import RunwayTesting
import Testing

/// A stand-in for a standard interceptor of the other modules, with the same name.
struct StandIn: Interceptor {
    let name: String
    let body: @Sendable (Request, RequestContext, Pipeline.Next) async throws -> Response
    func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        try await body(request, context, next)
    }
}

/// What the signing stand-in saw: one entry per signature.
final class Signatures: Sendable {
    struct Entry: Sendable { var attempt: Int; var nonce: String; var body: Data? }
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var stored: [Entry] = []
    var all: [Entry] { lock.withLock { stored } }
    func add(_ entry: Entry) { lock.withLock { stored.append(entry) } }
}

/// The end of the chain: 127.0.0.2 refuses connections; `/flaky` answers 503 once.
final class OrderNetwork: Dispatcher, @unchecked Sendable {
    // @unchecked: `flakyServed` and `seen` are only touched under `lock`.
    private let lock = NSLock()
    private var flakyServed = false
    private var seen: [Request] = []
    var requests: [Request] { lock.withLock { seen } }

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        try request.validate()
        lock.withLock { seen.append(request) }
        if request.options.connectOverrides.first?.connectHost == "127.0.0.2" { throw RunwayError(.cannotConnect, "refused") }
        if request.url.path == "/flaky", lock.withLock({ () -> Bool in defer { flakyServed = true }; return !flakyServed }) {
            return Response(status: 503)
        }
        return Response(status: 200, body: Data("ok".utf8))
    }
}

@Suite struct DefaultOrderTests {
    let signatures = Signatures()
    let network = OrderNetwork()
    let handler: InMemoryLogHandler
    let pipeline: Pipeline

    init() throws {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
        let logger = Logger(label: "order") { _ in handler }
        let bypass = try DNSBypass(.init(hosts: ["api.runway.test": ["127.0.0.2", "127.0.0.3"]], fallsBackToDNS: false))
        let signatures = signatures
        let metrics = StandIn(name: "metrics") { try await $2($0, $1) }
        let cache = StandIn(name: "cache") { request, context, next in
            request.url.path == "/cached" ? Response(status: 200, body: Data("cached".utf8), origin: .memoryCache) : try await next(request, context)
        }
        let validation = StandIn(name: "validation") { request, context, next in
            if request.url.query?.contains("price=-1") == true { throw RunwayError(.paramsInvalid, "price must be positive", field: "price") }
            return try await next(request, context)
        }
        let signing = StandIn(name: "signing") { request, context, next in
            var request = request
            let nonce = UUID().uuidString
            request.headers["X-Nonce"] = nonce
            request.headers["X-Signature"] = "sig-\(nonce)"
            signatures.add(.init(attempt: context.attempt, nonce: nonce, body: request.body))
            return try await next(request, context)
        }
        let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(5))
        let logging = try LoggingInterceptor.logging(logger)
        let compression = try CompressionInterceptor.compression(threshold: 64)
        pipeline = Pipeline(dispatcher: network) {
            metrics
            logging
            cache
            validation
            retry
            signing
            DNSBypassInterceptor.dnsBypass(bypass)
            compression
        }
    }

    @Test func theDocumentedOrderIsPinned() {
        #expect(DefaultOrder.names == ["metrics", "logging", "cache", "validation", "retry", "signing", "dns-bypass", "compression"])
        #expect(pipeline.interceptors.map(\.name) == DefaultOrder.names)
        #expect(DefaultOrder.misplaced(in: pipeline.interceptors).isEmpty)
    }

    @Test func misplacedInterceptorsAreNamed() throws {
        var swapped = pipeline.interceptors
        swapped.swapAt(4, 5)  // signing before retry: retries would reuse the nonce
        #expect(DefaultOrder.misplaced(in: swapped) == ["retry should come before signing"])
        let doubled = pipeline.interceptors + [try RetryInterceptor.retry(maxAttempts: 2)]
        #expect(DefaultOrder.misplaced(in: doubled).contains("retry is registered more than once"))
        let custom = [StandIn(name: "user-agent") { try await $2($0, $1) }] + pipeline.interceptors
        #expect(DefaultOrder.misplaced(in: custom).isEmpty)
    }

    @Test func aCacheHitIsLoggedAndCostsNothingElse() async throws {
        let response = try await pipeline.send(try Request("https://api.runway.test/cached"))
        #expect(response.origin == .memoryCache)
        #expect(signatures.all.isEmpty)
        #expect(network.requests.isEmpty)
        #expect(handler.entries.contains { "\($0.message)".contains("[memory-cache hit]") })
    }

    @Test func eachRetryIsReSignedWithAFreshNonce() async throws {
        let response = try await pipeline.send(try Request("https://api.runway.test/flaky"))
        #expect(response.status == 200)
        let signed = signatures.all
        #expect(signed.map(\.attempt) == [1, 2])
        #expect(Set(signed.map(\.nonce)).count == 2)
        // 127.0.0.2 refuses: each attempt failed over to 127.0.0.3 without a new signature.
        let sent = network.requests
        #expect(sent.map { $0.options.connectOverrides.first?.connectHost } == ["127.0.0.2", "127.0.0.3", "127.0.0.3"])
        #expect(sent[0].headers["X-Nonce"] == sent[1].headers["X-Nonce"])
        #expect(sent[2].headers["X-Nonce"] == signed[1].nonce)
        // One log entry for the call, with its final outcome.
        #expect(handler.entries.filter { $0.level == .info }.count == 1)
    }

    @Test func signingSeesTheBodyTheApplicationWroteAndTheWireGetsItGzipped() async throws {
        let body = Data(String(repeating: "district=xuhui&rent=2500&", count: 20).utf8)
        _ = try await pipeline.send(try Request(method: .post, "https://api.runway.test/search", body: body))
        #expect(signatures.all.first?.body == body)
        let sent = try #require(network.requests.last)
        #expect(sent.headers["Content-Encoding"] == "gzip")
        #expect(try Gzip.decompress(try #require(sent.body), limit: 1 << 20) == body)
    }

    @Test func aValidationFailureIsLoggedNeverSignedNeverRetried() async throws {
        await #expect {
            try await pipeline.send(try Request("https://api.runway.test/list?price=-1"))
        } throws: { ($0 as? RunwayError)?.code == .paramsInvalid && ($0 as? RunwayError)?.field == "price" }
        #expect(signatures.all.isEmpty)
        #expect(network.requests.isEmpty)
        #expect(handler.entries.contains { $0.level == .warning && "\($0.message)".contains("paramsInvalid at interceptor validation") })
    }
}
