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
}
