import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

@testable import RunwayCurl

/// libcurl re-sends a request on a new connection when a reused one dies before any response
/// byte. A request that is not idempotent must reach the server once, unless the caller
/// consented (an `Idempotency-Key`, or a retry policy that allows it).
@Suite("libcurl: no silent re-send")
struct ResendTests {
    /// A server that answers the first request on connection 0, then reads the second one and
    /// resets; every other request is answered.
    private func resettingServer() throws -> ScriptedResponder {
        try ScriptedResponder { exchange in
            if exchange.connection == 0, exchange.index == 1 { return .reset }
            return .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
    }

    /// A resetting server and a dispatcher with one idle connection to it (connection 0), which
    /// the next request reuses.
    private func warmConnection() async throws -> (ScriptedResponder, CurlDispatcher) {
        let responder = try resettingServer()
        let dispatcher = CurlDispatcher()
        _ = try await dispatcher.dispatch(makeRequest(responder.url("/warm")), context: RequestContext())
        return (responder, dispatcher)
    }

    private func requests(_ responder: ScriptedResponder, _ method: String) -> [ScriptedResponder.Exchange] {
        responder.exchanges.filter { $0.method == method }
    }

    @Test(
        "a POST whose reused connection resets after reading it is sent once: .connectionLost",
        arguments: [
            HTTPMethod.post, .patch,
        ])
    func postIsNotSentTwice(_ method: HTTPMethod) async throws {
        let (responder, dispatcher) = try await warmConnection()
        defer { responder.stop() }
        let body = Data(#"{"order":1}"#.utf8)
        let error = await runwayError {
            try await dispatcher.dispatch(makeRequest(method, responder.url("/orders"), body: body), context: RequestContext())
        }
        #expect(error?.code == .connectionLost)
        #expect(error?.message.contains("not sent again") == true)
        let sent = requests(responder, method.rawValue)
        #expect(sent.count == 1)
        #expect(sent.first?.body == Array(body))
    }

    @Test("a POST without a body is sent once too")
    func emptyPostIsNotSentTwice() async throws {
        // Every POST is read, then reset.
        let responder = try ScriptedResponder { exchange in
            exchange.method == "POST" ? .reset : .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        _ = try await dispatcher.dispatch(makeRequest(responder.url("/warm")), context: RequestContext())
        let error = await runwayError {
            try await dispatcher.dispatch(makeRequest(.post, responder.url("/ping")), context: RequestContext())
        }
        #expect(error?.code == .connectionLost)
        let posts = requests(responder, "POST")
        #expect(posts.count == 1)
        #expect(posts.first?.connection == 0)  // on the reused connection
    }

    @Test("the retry interceptor does not send it again either, unless the API allows it")
    func retryKeepsItOnce() async throws {
        let (responder, dispatcher) = try await warmConnection()
        defer { responder.stop() }
        let pipeline = Pipeline(interceptors: [try .retry(maxAttempts: 3, initialBackoff: .milliseconds(1))], dispatcher: dispatcher)
        let error = await runwayError { try await pipeline.send(makeRequest(.post, responder.url("/orders"), body: Data("x".utf8))) }
        #expect(error?.code == .connectionLost)
        #expect(requests(responder, "POST").count == 1)
    }

    @Test("with consent it is sent again and succeeds: a retry policy that allows the API")
    func retryWithConsent() async throws {
        let (responder, dispatcher) = try await warmConnection()
        defer { responder.stop() }
        let policy = try RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), nonIdempotentAPIs: ["orders"])
        let pipeline = Pipeline(interceptors: [RetryInterceptor(policy: policy)], dispatcher: dispatcher)
        var context = RequestContext()
        context.apiName = "orders"
        let response = try await pipeline.send(makeRequest(.post, responder.url("/orders"), body: Data("x".utf8)), context: context)
        #expect(response.status == 200)
        #expect(requests(responder, "POST").count == 2)
    }

    @Test("with consent it is sent again and succeeds: an Idempotency-Key header")
    func idempotencyKey() async throws {
        let (responder, dispatcher) = try await warmConnection()
        defer { responder.stop() }
        let request = makeRequest(.post, responder.url("/orders"), headers: ["Idempotency-Key": "k1"], body: Data("x".utf8))
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        #expect(response.status == 200)
        let sent = requests(responder, "POST")
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.body == Array("x".utf8) })
    }

    @Test("an idempotent PUT is re-sent by libcurl as before")
    func putIsResent() async throws {
        let (responder, dispatcher) = try await warmConnection()
        defer { responder.stop() }
        let response = try await dispatcher.dispatch(
            makeRequest(.put, responder.url("/doc"), body: Data("x".utf8)), context: RequestContext())
        #expect(response.status == 200)
        #expect(requests(responder, "PUT").count == 2)
    }

    @Test(
        "the GET a POST's 301, 302 or 303 leads to is sent again when its reused connection dies: it is a GET, the POST went once",
        arguments: [301, 302, 303])
    func theGETAfterARedirectedPOSTIsResent(_ status: Int) async throws {
        // Connection 0 answers the warm-up and the POST's redirect, then reads the GET and resets.
        let responder = try ScriptedResponder { exchange in
            if exchange.target == "/orders" {
                return .reply(Array("HTTP/1.1 \(status) Moved\r\nLocation: /receipt\r\nContent-Length: 0\r\n\r\n".utf8))
            }
            if exchange.connection == 0, exchange.target == "/receipt" { return .reset }
            return .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        _ = try await dispatcher.dispatch(makeRequest(responder.url("/warm")), context: RequestContext())
        let request = makeRequest(.post, responder.url("/orders"), body: Data("x".utf8)) { $0.redirects = .follow(max: 3) }
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
        #expect(requests(responder, "POST").count == 1)
        #expect(requests(responder, "GET").map(\.target) == ["/warm", "/receipt", "/receipt"])
    }

    @Test("a 307 redirect still sends the POST body again, to where the server said")
    func redirectResendsTheBody() async throws {
        let responder = try ScriptedResponder { exchange in
            exchange.target == "/old"
                ? .reply(Array("HTTP/1.1 307 Temporary Redirect\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n".utf8))
                : .reply(Array("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
        defer { responder.stop() }
        let body = Data(repeating: 0x61, count: 100_000)
        let request = makeRequest(.post, responder.url("/old"), body: body) { $0.redirects = .follow(max: 3) }
        let response = try await CurlDispatcher().dispatch(request, context: RequestContext())
        #expect(response.status == 201)
        #expect(requests(responder, "POST").map(\.target) == ["/old", "/new"])
        #expect(requests(responder, "POST").allSatisfy { $0.body == Array(body) })
    }

    @Test("bodies of every size arrive whole, one request after another on one connection")
    func bodiesArriveWhole() async throws {
        let responder = try ScriptedResponder { _ in .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)) }
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        let sizes = [0, 1, 16_383, 16_384, 65_537, 1 << 20]
        for size in sizes {
            let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            _ = try await dispatcher.dispatch(makeRequest(.post, responder.url("/up"), body: body), context: RequestContext())
        }
        let sent = requests(responder, "POST")
        #expect(sent.map(\.body.count) == sizes)
        #expect(sent.last?.body == (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(responder.connectionCount == 1)
    }

    /// A server that refuses every expectation with a 417 (answered once the head is in, the
    /// body unread: ``ScriptedResponder``), and answers other requests with a 200.
    private func refusingExpectations(_ refusal: String) throws -> ScriptedResponder {
        try ScriptedResponder { exchange in
            exchange.head.lowercased().contains("expect: 100-continue")
                ? .reply(Array(refusal.utf8)) : .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
    }

    @Test(
        "a 417 to the caller's Expect: 100-continue is the response, the request sent once (libcurl sent it again and again)",
        arguments: [HTTPMethod.post, .put], [RedirectPolicy.none, .follow(max: 5)])
    func refusedExpectationIsTheResponse(_ method: HTTPMethod, _ redirects: RedirectPolicy) async throws {
        let responder = try refusingExpectations("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 7\r\n\r\nno 100!")
        defer { responder.stop() }
        let dispatcher = CurlDispatcher()
        let request = makeRequest(method, responder.url("/upload"), headers: ["Expect": "100-continue"], body: Data("hello".utf8)) {
            $0.redirects = redirects
        }
        let response = try await dispatcher.dispatch(request, context: RequestContext())
        #expect(response.status == 417)
        #expect(response.headers["Content-Length"] == "7")
        // libcurl drops the body of a response it was to send the request again after.
        #expect(response.body.isEmpty)
        #expect(requests(responder, method.rawValue).count == 1)
        // The refused request's connection, whose server may still wait for the body, is not
        // reused: the next request goes on a new one.
        let next = try await dispatcher.dispatch(makeRequest(responder.url("/next")), context: RequestContext())
        #expect(next.status == 200)
        #expect(responder.exchanges.map(\.connection) == [0, 1])
    }
}
