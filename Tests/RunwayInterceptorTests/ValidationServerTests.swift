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

    /// A response's media type is compared without its parameters, so a rule naming one (or a
    /// blank) would refuse even a response that carries exactly that value: it is refused when made.
    @Test(
        "a content-type rule with a parameter or a blank is refused when made; the bare media type passes",
        arguments: [
            "application/json; charset=utf-8", "application/json;charset=utf-8", " application/json", "application/json\t",
            "application /json",
        ])
    func aContentTypeRuleNoResponseCouldPassIsRefused(contentType: String) async throws {
        #expect {
            try APIValidation(response: ResponseRule(contentType: contentType))
        } throws: { error in
            (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.message.contains("bare type/subtype") == true
        }
        let server = try RawResponder(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        defer { server.stop() }
        let validation = try ValidationInterceptor.validation([
            "typed": APIValidation(response: ResponseRule(contentType: "application/json"))
        ])
        let pipeline = Pipeline(interceptors: [validation], dispatcher: CurlDispatcher())
        #expect(try await pipeline.send(Request(url: server.url("/typed")), context: RequestContext(apiName: "typed")).status == 200)
    }

    /// JSONDecoder keeps the first of a repeated member and most servers the last, so a body
    /// that repeats a ruled member would be checked on a value the server never reads.
    @Test(
        "a JSON body that repeats a ruled member is refused before it is sent",
        arguments: [#"{"page": 1, "page": 9999}"#, #"{"page": 1, "p\u0061ge": 9999}"#])
    func aRepeatedMemberIsRefused(body: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.shutdown() } }
        let validation = try ValidationInterceptor.validation([
            "list": APIValidation(parameters: [ParameterRule("page", .type(.integer), .range(1...500))])
        ])
        let pipeline = Pipeline(interceptors: [validation], dispatcher: CurlDispatcher())
        func send(_ body: String) async throws -> Response {
            let request = Request(
                method: .post, url: server.url("/echo"), headers: ["Content-Type": "application/json"], body: Data(body.utf8))
            return try await pipeline.send(request, context: RequestContext(apiName: "list"))
        }
        await #expect {
            try await send(body)
        } throws: { error in
            let error = error as? RunwayError
            return error?.code == .paramsInvalid && error?.field == "page"
        }
        #expect(server.stats.requests(path: "/echo") == 0)
        // Repeated members without a rule, and nested ones, are the server's business.
        #expect(try await send(#"{"page": 2, "tag": "a", "tag": "b", "filter": {"x": 1, "x": 2}}"#).status == 200)
    }
}
