import Foundation
import InMemoryLogging
import Logging
import Runway
import RunwayLogging
import RunwayTesting
import Testing

@Suite struct LoggingInterceptorTests {
    let handler: InMemoryLogHandler
    let logger: Logger

    init() {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        self.handler = handler
        logger = Logger(label: "runway.test") { _ in handler }
    }

    var text: String { handler.entries.map { "\($0.level): \($0.message)" }.joined(separator: "\n") }

    @Test func logsNothingWithoutALoggerAndChangesNothing() async throws {
        let stub = StubDispatcher(status: 200, body: Data("ok".utf8))
        var request = try Request(
            method: .post, "http://api.test/a?token=abc", headers: ["Authorization": "Bearer s3cret"], body: Data("x=1".utf8))
        request.options.acceptCompressedResponses = false
        let response = try await Pipeline(interceptors: [.logging(nil)], dispatcher: stub).send(request)
        #expect(response.body == Data("ok".utf8))
        #expect(handler.entries.isEmpty)
        let sent = try #require(stub.requests.first)
        #expect(sent.url == request.url && sent.headers == request.headers && sent.body == request.body)
        #expect(sent.options.acceptCompressedResponses == false)
    }

    @Test func dumpsTheRequestAsCurlAndTheResponseWithSecretsRedacted() async throws {
        let stub = StubDispatcher { _ in
            Response(
                status: 201, headers: ["Content-Type": "application/json", "Set-Cookie": "session=abcdef"],
                body: Data(#"{"id":7,"token":"t0k"}"#.utf8))
        }
        let request = try Request(
            method: .post, "https://api.test/orders?city=sh&access_token=qwerty",
            headers: [
                "Authorization": "Bearer s3cret", "X-Runway-Signature": "deadbeef", "Content-Type": "application/x-www-form-urlencoded",
            ],
            body: Data("user=li&password=hunter2&note=a+b".utf8))
        let interceptor = LoggingInterceptor(logger: logger)
        let response = try await Pipeline(interceptors: [interceptor], dispatcher: stub).send(
            request, context: RequestContext(apiName: "order.create", serviceID: "shop"))
        #expect(response.status == 201)

        let log = text
        #expect(log.contains("curl -X POST 'https://api.test/orders?city=sh&access_token=<redacted>'"))
        #expect(log.contains("-H 'Authorization: <redacted>'"))
        #expect(log.contains("-H 'X-Runway-Signature: <redacted>'"))
        #expect(log.contains("--data-binary 'user=li&password=<redacted>&note=a+b'"))
        #expect(log.contains("HTTP 201"))
        #expect(log.contains("Set-Cookie: <redacted>"))
        #expect(log.contains(#""token":"<redacted>""#))
        #expect(log.contains(#""id":7"#))
        for secret in ["s3cret", "deadbeef", "qwerty", "hunter2", "abcdef", "t0k"] {
            #expect(!log.contains(secret), "leaked \(secret)")
        }
        let summary = try #require(handler.entries.first { $0.level == .info })
        #expect("\(summary.message)".hasPrefix("POST https://api.test/orders?city=sh&access_token=<redacted> → 201 in "))
        #expect(summary.metadata["runway.api"] == "order.create")
        #expect(summary.metadata["runway.service"] == "shop")
        #expect(summary.metadata["runway.status"] == "201")
        #expect(handler.entries.filter { $0.level == .debug }.count == 2)
    }

    @Test func singleQuotesAreEscapedForTheShell() async throws {
        let request = try Request(
            method: .post, "https://api.test/notes", headers: ["X-Note": "it's"],
            body: Data("note=it's+a+'quote'&accent='\u{301}".utf8))
        _ = try await Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: StubDispatcher(status: 200)).send(request)
        #expect(text.contains(#"-H 'X-Note: it'\''s'"#))
        #expect(text.contains("--data-binary 'note=it'\\''s+a+'\\''quote'\\''&accent='\\''\u{301}'"))
    }

    @Test func aProxyIsLoggedWithoutItsCredentials() async throws {
        let stub = StubDispatcher(status: 200, body: Data("ok".utf8))
        var request = try Request(method: .get, "https://api.test/a")
        request.options.proxy = .socks5(host: "127.0.0.1", port: 1080, credentials: .init(user: "proxyuser", password: "pr0xypass"))
        _ = try await Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: stub).send(request)
        #expect(text.contains("--proxy 'socks5h://<redacted>@127.0.0.1:1080'"), "\(text)")
        #expect(!text.contains("pr0xypass") && !text.contains("proxyuser"))
    }

    @Test func redactsConfiguredParametersInJSONAtAnyDepth() async throws {
        let redaction = try Redaction.standard(plusHeaders: ["X-Device"], parameters: ["id_card"])
        let body = Data(#"{"owner":{"name":"Li","id_card":"310101199001011234"},"list":[{"id_card":"x9"}]}"#.utf8)
        let request = try Request(
            method: .put, "http://api.test/owner?id_card=310101", headers: ["Content-Type": "application/json", "X-Device": "imei-1"],
            body: body)
        _ = try await Pipeline(interceptors: [.logging(logger, redacting: redaction)], dispatcher: StubDispatcher(status: 204)).send(
            request)
        let log = text
        #expect(!log.contains("310101"))
        #expect(!log.contains("x9"))
        #expect(!log.contains("imei-1"))
        #expect(log.contains(#""name":"Li""#))
        #expect(log.contains("id_card=<redacted>"))
    }

    /// Names written another way, bodies labelled otherwise, JSON lines: none of these secrets
    /// may reach the log, at any level.
    @Test func secretsUnderOtherNamesAndTypesAreRedactedToo() async throws {
        let secrets = ["tok-I", "sess-9", "hunter2", "ref-3", "cs-4", "line-5", "xa-6", "xs-7", "form-8"]
        let stub = StubDispatcher { _ in
            Response(
                status: 200, headers: ["Content-Type": "application/x-ndjson"],
                body: Data("{\"refreshToken\":\"ref-3\"}\n{\"clientSecret\":\"cs-4\"}\nnot json line-5".utf8))
        }
        let pipeline = Pipeline(interceptors: [.logging(logger)], dispatcher: stub)
        _ = try await pipeline.send(
            try Request(
                method: .post, "https://api.test/a?accessToken=tok-I&sessionid=sess-9&page=2",
                headers: ["X-Auth": "xa-6", "X-Session-Id": "xs-7", "Content-Type": "text/plain"],
                body: Data(#"{"user":"ann","password":"hunter2"}"#.utf8)))
        _ = try await pipeline.send(try Request(method: .post, "https://api.test/b", body: Data("user=ann&Pass-Word=form-8".utf8)))
        for secret in secrets { #expect(!text.contains(secret), "\(secret) reached the log") }
        #expect(text.contains("page=2"))
        #expect(text.contains("ann"))
    }

    @Test func cacheHitsAreLoggedAsSuch() async throws {
        let stub = StubDispatcher { _ in Response(status: 200, body: Data("{}".utf8), origin: .memoryCache) }
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(try Request("http://api.test/rent"))
        let summary = try #require(handler.entries.first { $0.level == .info })
        #expect("\(summary.message)".contains("[memory-cache hit]"))
        #expect(summary.metadata["runway.cache_hit"] == "true")
        #expect(summary.metadata["runway.origin"] == "memory-cache")
    }

    @Test func networkResponsesCarryTheirTimings() async throws {
        let metrics = TransferMetrics(connect: .milliseconds(3), firstByte: .milliseconds(12), total: .milliseconds(15), httpVersion: "2")
        let dispatcher = FixedDispatcher(response: Response(status: 200, metrics: metrics, origin: .network))
        _ = try await Pipeline(interceptors: [.logging(logger)], dispatcher: dispatcher).send(try Request("http://api.test/"))
        let summary = "\(try #require(handler.entries.first { $0.level == .info }).message)"
        #expect(summary.contains("[network] dns 0.000ms connect 3.000ms"))
        #expect(summary.contains("total 15.000ms HTTP/2"))
    }

    @Test func failuresAreLoggedWithCodeAndStageAndRethrown() async throws {
        let stub = StubDispatcher { _ in throw RunwayError(.timeout, "connect timed out") }
        await #expect {
            try await Pipeline(interceptors: [.logging(logger)], dispatcher: stub).send(try Request("http://api.test/slow"))
        } throws: { ($0 as? RunwayError)?.code == .timeout }
        let failure = try #require(handler.entries.first { $0.level == .warning })
        #expect("\(failure.message)".contains("GET http://api.test/slow ✗ timeout at dispatcher stub: connect timed out"))
        #expect(failure.metadata["runway.error"] == "timeout")
    }

    @Test func aLoggerInTheContextWins() async throws {
        var other = InMemoryLogHandler()
        other.logLevel = .trace
        var context = RequestContext()
        context[LoggingInterceptor.Key.self] = Logger(label: "per-call") { [other] _ in other }
        _ = try await Pipeline(interceptors: [.logging(nil)], dispatcher: StubDispatcher(status: 200)).send(
            try Request("http://api.test/"), context: context)
        #expect(other.entries.count == 3)
        #expect(handler.entries.isEmpty)
    }

    @Test func bodiesAreCutAndBinaryIsShownAsASize() async throws {
        let long = Data(String(repeating: "a", count: 100).utf8)
        _ = try await Pipeline(
            interceptors: [.logging(logger, bodyLimit: 10)], dispatcher: StubDispatcher(status: 200, body: Data([0, 1, 2, 0xFF]))
        )
        .send(try Request(method: .post, "http://api.test/", body: long))
        #expect(text.contains("'aaaaaaaaaa… (90 more bytes)'"))
        #expect(text.contains("<4 bytes binary>"))
    }

    /// A cut in the middle of a character (`房` is three bytes) keeps the whole characters
    /// before it, never a `�` for the half.
    @Test func aCutNeverSplitsACharacter() async throws {
        let body = Data("房租2400元".utf8)  // 房 租 are 3 bytes each, 元 too
        _ = try await Pipeline(interceptors: [.logging(logger, bodyLimit: 5)], dispatcher: StubDispatcher(status: 200))
            .send(try Request(method: .post, "http://api.test/", headers: ["Content-Type": "text/plain; charset=utf-8"], body: body))
        #expect(text.contains("'房… (\(body.count - 3) more bytes)'"), "\(text)")
        #expect(!text.contains("\u{FFFD}"))
    }

    @Test func retriesCanBeLoggedThroughTheRetryObserver() async throws {
        let observer = LoggingInterceptor.retryObserver(logger)
        var context = RequestContext(apiName: "listing.rent")
        context.attempt = 1
        observer(RetryInterceptor.Event(failedAttempt: 1, status: 503, error: nil, delay: .milliseconds(200), context: context))
        let entry = try #require(handler.entries.first)
        #expect(entry.level == .notice)
        #expect("\(entry.message)" == "attempt 1 ✗ status 503, retrying in 200.0 ms (attempt 2)")
        #expect(entry.metadata["runway.api"] == "listing.rent")
        #expect(entry.metadata["runway.attempt"] == "1")
    }

    @Test func everyAttemptOfARetriedCallIsLoggedWithoutWiring() async throws {
        let statuses = StatusScript([503, 503, 200])
        let stub = StubDispatcher { _ in Response(status: statuses.next(), body: Data("ok".utf8)) }
        let pipeline = Pipeline(
            interceptors: [.logging(logger), try .retry(maxAttempts: 3, initialBackoff: .milliseconds(1))], dispatcher: stub)
        let response = try await pipeline.send(try Request("http://api.test/flaky"), context: RequestContext(apiName: "flaky"))
        #expect(response.status == 200)
        let lines = handler.entries.filter { $0.level == .info }.map { "\($0.message)" }
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("GET http://api.test/flaky attempt 1 ✗ status 503, retrying in "))
        #expect(lines[1].hasPrefix("GET http://api.test/flaky attempt 2 ✗ status 503, retrying in "))
        #expect(lines[2].hasPrefix("GET http://api.test/flaky → 200 in "))
        #expect(stub.requests.count == 3)
    }

    @Test func aNegativeBodyLimitShowsOnlySizes() async throws {
        let interceptor = LoggingInterceptor.logging(logger, bodyLimit: -1)
        #expect(interceptor.configuration.bodyLimit == 0)
        _ = try await Pipeline(interceptors: [interceptor], dispatcher: StubDispatcher(status: 200, body: Data("secret-free".utf8)))
            .send(try Request(method: .post, "http://api.test/", body: Data(String(repeating: "a", count: 100).utf8)))
        #expect(text.contains("<100 bytes>"))
        #expect(text.contains("<11 bytes>"))
        #expect(!text.contains("aaaa"))
    }

    @Test func badConfigurationIsRejected() {
        #expect(throws: RunwayError.self) { try Redaction(headers: [""], parameters: []) }
        #expect(throws: RunwayError.self) { try Redaction.standard(parameters: [""]) }
    }
}

struct FixedDispatcher: Dispatcher {
    let response: Response
    func dispatch(_ request: Request, context: RequestContext) async throws -> Response { response }
}

/// Hands out the given statuses in turn, the last one for good (thread-safe).
final class StatusScript: Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var statuses: [Int]

    init(_ statuses: [Int]) { self.statuses = statuses }

    func next() -> Int {
        lock.withLock { statuses.count > 1 ? statuses.removeFirst() : statuses[0] }
    }
}

/// A streamed body: the head is logged when it arrives, the byte count when the reader is done.
extension LoggingInterceptorTests {
    func streamedRequest() throws -> Request {
        var request = try Request("https://api.test/export")
        request.streamsResponseBody = true
        return request
    }

    @Test func logsTheHeadThenTheByteCount() async throws {
        let stub = StubDispatcher(headers: ["Content-Type": "text/csv"], chunks: [Data("a,b\n".utf8), Data("1,2\n3,4\n".utf8)])
        let pipeline = Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: stub)
        let response = try await pipeline.send(try streamedRequest())
        // The head is logged before the body is read; the reader has the body to itself.
        #expect(text.contains("HTTP 200"))
        #expect(text.contains("<body streamed>"))
        #expect(text.contains("[body streamed]"))
        #expect(!text.contains("body streamed:"))
        var body = Data()
        for try await chunk in try #require(response.bodyStream) { body.append(chunk) }
        #expect(body == Data("a,b\n1,2\n3,4\n".utf8))
        let end = try #require(handler.entries.last)
        #expect(end.level == .info)
        #expect("\(end.message)".hasPrefix("GET https://api.test/export body streamed: 12 bytes in "))
        #expect(end.metadata["runway.body_bytes"] == "12")
    }

    @Test func logsAStreamThatFailsMidBody() async throws {
        let cut = RunwayError(.connectionLost, "the connection closed mid-body")
        let stub = StubDispatcher(chunks: [Data("abc".utf8)], failure: cut)
        let response = try await Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: stub).send(try streamedRequest())
        var received = 0
        await #expect(throws: RunwayError.self) {
            for try await chunk in try #require(response.bodyStream) { received += chunk.count }
        }
        #expect(received == 3)
        let end = try #require(handler.entries.last)
        #expect(end.level == .warning)
        #expect("\(end.message)".contains("body stream ✗ connectionLost after 3 bytes: the connection closed mid-body"))
    }

    @Test func logsAStreamDroppedUnread() async throws {
        let stub = StubDispatcher(chunks: [Data("abc".utf8)])
        var response: Response? = try await Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: stub).send(
            try streamedRequest())
        #expect(response?.status == 200)
        response = nil
        let end = try #require(handler.entries.last)
        #expect("\(end.message)".contains("body stream ✗ cancelled after 0 bytes"))
    }

    @Test func aStreamedRequestBodyIsLoggedByItsLength() async throws {
        let stub = StubDispatcher { _ in Response(status: 204) }
        var request = try Request(method: .put, "https://api.test/files/1", headers: ["Content-Type": "video/mp4"])
        request.bodyStream = .sequence(AsyncStream<Data> { $0.finish() }, length: 1_234)
        _ = try await Pipeline(interceptors: [LoggingInterceptor(logger: logger)], dispatcher: stub).send(request)
        #expect(text.contains("--data-binary '<body streamed, 1234 bytes>'"))
    }
}
