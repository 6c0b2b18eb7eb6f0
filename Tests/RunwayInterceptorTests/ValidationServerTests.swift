import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// Validation in front of libcurl and the real server: an invalid call never reaches it.
@Suite struct ValidationServerTests {
    @Test func invalidParametersNeverReachTheServerValidResponsesPass() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let validation = try ValidationInterceptor.validation([
            "doc": APIValidation(
                parameters: [ParameterRule("id", .required, .type(.integer))],
                response: ResponseRule(
                    contentType: "application/json",
                    json: .object(["id": .integer, "tags": .array(of: .string), "owner": .object(["verified": .boolean])]))),
            "strict": APIValidation(response: ResponseRule(json: .object(["missing": .string]))),
        ])
        let pipeline = Pipeline(interceptors: [validation], dispatcher: CurlDispatcher())

        await #expect(throws: RunwayError.self) {
            try await pipeline.send(Request(url: server.url("/json?id=abc")), context: RequestContext(apiName: "doc"))
        }
        #expect(server.stats.requests(path: "/json") == 0)

        let ok = try await pipeline.send(Request(url: server.url("/json?id=42")), context: RequestContext(apiName: "doc"))
        #expect(ok.status == 200)
        #expect(server.stats.requests(path: "/json") == 1)

        do {
            _ = try await pipeline.send(Request(url: server.url("/json?id=42")), context: RequestContext(apiName: "strict"))
            Issue.record("expected responseInvalid")
        } catch {
            #expect(error.code == .responseInvalid)
            #expect(error.field == "missing")
            #expect(error.response?.body == TestServer.fixedJSON)
        }
    }
}
