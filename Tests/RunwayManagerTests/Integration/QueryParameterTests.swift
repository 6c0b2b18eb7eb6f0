import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// A manager's query as the server reads it off the request line.
@Suite struct QueryParameterTests {
    final class SearchAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "search"
        let path: String
        let serviceID: ServiceID = .listings

        init(registry: ServiceRegistry, path: String) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
            self.path = path
        }
    }

    @Test("an empty array sends nothing: no bare '?' or '&' that makes another URL of the same request")
    func anEmptyArrayLeavesNoQueryMark() async throws {
        let reply = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8)
        let server = try ScriptedResponder { _ in .reply(reply) }
        defer { server.stop() }
        let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: server.url("/v1").absoluteString)])
        let cases: [(path: String, params: [String: JSON], target: String)] = [
            ("search", ["ids": []], "/v1/search"),
            ("search?v=2", ["ids": []], "/v1/search?v=2"),
            ("search", ["ids": [], "tags": []], "/v1/search"),
            ("search", ["ids": [], "q": "a+b&c"], "/v1/search?q=a%2Bb%26c"),
            ("search", ["ids": [1, 2]], "/v1/search?ids=1&ids=2"),
        ]
        for (index, call) in cases.enumerated() {
            _ = try await SearchAPIManager(registry: registry, path: call.path).load(params: call.params)
            let sent = server.exchanges.map { String($0.target) }
            #expect(sent.count == index + 1)
            #expect(sent.last == call.target)
        }
    }
}
