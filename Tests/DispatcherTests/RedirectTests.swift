import Foundation
import Runway
import RunwayTestServer
import TestHelpers
import Testing

/// The redirect policy.
extension DispatcherSuite {
    @Test("redirects are returned, not followed, by default", arguments: DispatcherUnderTest.all)
    func redirectsOffByDefault(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let response = try await dut.send(dispatcher, makeRequest(server.url("/redirect/2")))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/redirect/1")
            #expect(server.stats.requests(path: "/redirect/1") == 0)
        }
    }

    @Test("redirects are followed when enabled", arguments: DispatcherUnderTest.all)
    func redirectsFollowed(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/redirect/3")) { $0.redirects = .follow(max: 5) }
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200)
            #expect(response.body == Data(#"{"redirects":"done"}"#.utf8))
            #expect(server.stats.requests(path: "/redirect/0") == 1)
        }
    }

    @Test("more redirects than allowed is .tooManyRedirects", arguments: DispatcherUnderTest.all)
    func tooManyRedirects(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        try await withTestServer { server in
            let request = makeRequest(server.url("/redirect/5")) { $0.redirects = .follow(max: 2) }
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .tooManyRedirects)
            #expect(server.stats.requests(path: "/redirect/2") == 0)
        }
    }

    /// A redirect with a body, which libcurl reads (to keep the connection) and counted as the
    /// response's: its size reported as the total, then the count back to zero.
    @Test(
        "progress across a followed redirect counts the final response's body alone, never going back", arguments: DispatcherUnderTest.all)
    func progressAcrossRedirect(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let redirectBody = String(repeating: "r", count: 50_000)
        let finalBody = String(repeating: "f", count: 10_000)
        let responder = try ScriptedResponder { exchange in
            guard exchange.target == "/final" else {
                return .reply(Array("HTTP/1.1 302 Found\r\nLocation: /final\r\nContent-Length: 50000\r\n\r\n\(redirectBody)".utf8))
            }
            return .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n\(finalBody)".utf8))
        }
        defer { responder.stop() }
        var request = makeRequest(responder.url("/start")) { $0.redirects = .follow(max: 5) }
        let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 100_000)
        request.progress = reporter
        let response = try await dut.send(dispatcher, request)
        #expect(response.status == 200)
        #expect(response.body == Data(finalBody.utf8))
        var reports: [TransferProgress] = []
        for await report in progress { reports.append(report) }
        let received = reports.map(\.bytesReceived)
        #expect(received == received.sorted(), "\(received)")
        #expect(received.last == 10_000, "\(received)")
        let totals = reports.compactMap(\.totalBytesToReceive)
        #expect(totals.allSatisfy { $0 == 10_000 }, "\(totals)")
    }

    /// A followed redirect means the request went out: a refusal at its target must not say
    /// `neverSent`, which retry and the DNS bypass read as leave to send a POST again.
    @Test("a refused redirect target is .cannotConnect, not neverSent: the request went out", arguments: DispatcherUnderTest.all)
    func refusedRedirectTargetWasSent(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let dead = try RefusingPort()
        let deadURL = dead.url("/receipt")
        try await withTestServer { server in
            var components = URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: deadURL.absoluteString), URLQueryItem(name: "status", value: "303")]
            let url = try #require(components?.url)
            let request = makeRequest(.post, url, body: Data("x".utf8)) { $0.redirects = .follow(max: 5) }
            let error = await runwayError { try await dut.send(dispatcher, request) }
            #expect(error?.code == .cannotConnect)
            #expect(error?.neverSent == false)
            #expect(server.stats.requests(path: "/redirect-to") == 1)
        }
        withExtendedLifetime(dead) {}
    }

    @Test(
        "a 3xx that is no redirect (300, 304, 305, 306, 399) is not followed to its Location: it is the response, body and all",
        arguments: DispatcherUnderTest.all)
    func onlyRedirectStatusesAreFollowed(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        for status in [300, 304, 305, 306, 399] {
            // A 304 has no body; the others carry one, which must come back whole.
            let body = status == 304 ? "" : "choose \(status)"
            let responder = try ScriptedResponder { exchange in
                guard exchange.target == "/elsewhere" else {
                    let head = "HTTP/1.1 \(status) Status\r\nLocation: /elsewhere\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                    return .reply(Array((head + body).utf8))
                }
                return .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nelsewhere".utf8))
            }
            defer { responder.stop() }
            for method in [HTTPMethod.get, .post] {
                let request = makeRequest(method, responder.url("/start"), body: method == .post ? Data("form".utf8) : nil) {
                    $0.redirects = .follow(max: 5)
                }
                let response = try await dut.send(dispatcher, request)
                #expect(response.status == status, "\(status) \(method)")
                #expect(String(decoding: response.body, as: UTF8.self) == body, "\(status) \(method)")
                #expect(response.headers["Location"] == "/elsewhere", "\(status) \(method)")
            }
            #expect(responder.exchanges.map(\.target) == ["/start", "/start"], "\(status)")
        }
    }

    @Test("a HEAD stays a HEAD on every followed redirect, a 303 included", arguments: DispatcherUnderTest.all)
    func headStaysHeadOnRedirect(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        for status in [301, 302, 303, 307, 308] {
            // The resource is larger than the response limit: only its body could exceed it.
            let responder = try ScriptedResponder { exchange in
                guard exchange.target == "/final" else {
                    return .reply(Array("HTTP/1.1 \(status) Moved\r\nLocation: /final\r\nContent-Length: 0\r\n\r\n".utf8))
                }
                let body = exchange.method == "HEAD" ? "" : String(repeating: "b", count: 5_000)
                return .reply(Array("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n\(body)".utf8))
            }
            defer { responder.stop() }
            let request = makeRequest(.head, responder.url("/start")) {
                $0.redirects = .follow(max: 5)
                $0.maxResponseSize = 1_000
            }
            let response = try await dut.send(dispatcher, request)
            #expect(response.status == 200, "\(status)")
            #expect(response.body.isEmpty, "\(status)")
            #expect(responder.exchanges.map { "\($0.method) \($0.target)" } == ["HEAD /start", "HEAD /final"], "\(status)")
        }
    }
}
