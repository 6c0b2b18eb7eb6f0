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

    /// A followed redirect means the request went out: a refusal at its target must not say
    /// `neverSent`, which retry and the DNS bypass read as leave to send a POST again.
    @Test("a refused redirect target is .cannotConnect, not neverSent: the request went out", arguments: DispatcherUnderTest.all)
    func refusedRedirectTargetWasSent(_ dut: DispatcherUnderTest) async throws {
        let dispatcher = dut.make()
        let dead = try await TestServer.start()
        let deadURL = dead.url("/receipt")
        await dead.shutdown()
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
    }
}
