import Foundation
import HTTPTypes
import RunwayCore
import RunwayCurl
import RunwayHTTPTypes
import RunwayTestServer
import TestHelpers
import Testing

/// An `HTTPRequest` converted, sent through a `Pipeline` with the libcurl dispatcher to a server
/// on 127.0.0.1, and the `Response` converted back to an `HTTPResponse`.
@Suite struct PipelineIntegrationTests {
    static let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())

    /// The values of every `X-Echo` field whose request field was named `x-...`, in order.
    static func echoedCustomFields(_ response: HTTPResponse) throws -> [String] {
        response.headerFields[values: try #require(HTTPField.Name("X-Echo"))].filter { $0.hasPrefix("x-") }
    }

    @Test func anHTTPRequestReachesTheServerAndItsResponseComesBack() async throws {
        try await withTestServer { server in
            let fields: HTTPFields = [
                try #require(HTTPField.Name("X-Trace")): "t1", .accept: "application/json",
                try #require(HTTPField.Name("X-Trace")): "t2", .contentType: "text/plain",
            ]
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo?x=1&y=%2F", headerFields: fields)
            let response = try await Self.pipeline.send(Request(request, baseURL: server.baseURL, body: Data("hello".utf8)))
            let converted = try HTTPResponse(response)
            #expect(converted.status == .ok)
            #expect(converted.status.reasonPhrase == "OK")
            #expect(converted.headerFields[.contentType] == "application/json")

            let echo = try decodeEcho(response)
            #expect(echo.method == "POST")
            #expect(echo.path == "/echo")
            #expect(echo.query == "x=1&y=%2F")
            #expect(echo.authority == "127.0.0.1:\(server.port)")
            #expect(echo.headers["x-trace"] == "t1, t2")
            #expect(echo.headers["accept"] == "application/json")
            #expect(echo.body == "hello")
        }
    }

    @Test func fieldOrderRepeatsAndAnExtensionMethodSurviveTheRoundTrip() async throws {
        try await withTestServer(routes: FieldEchoRoutes.add) { server in
            let order = try #require(HTTPField.Name("X-Order"))
            let fields: HTTPFields = [
                order: "1", try #require(HTTPField.Name("X-Obs")): "caf\u{E9} \u{2615}", order: "2",
            ]
            let request = HTTPRequest(
                method: .query, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/fields?q=%E2%82%AC", headerFields: fields)
            let response = try await Self.pipeline.send(Request(request, body: Data("select".utf8)))
            let converted = try HTTPResponse(response)

            #expect(converted.status == .ok)
            #expect(converted.headerFields[try #require(HTTPField.Name("X-Method"))] == "QUERY")
            #expect(converted.headerFields[try #require(HTTPField.Name("X-Target"))] == "/fields?q=%E2%82%AC")
            #expect(try Self.echoedCustomFields(converted) == ["x-order=1", "x-obs=caf\u{E9} \u{2615}", "x-order=2"])
            #expect(converted.headerFields[values: .setCookie] == ["a=1; Path=/", "b=2; HttpOnly"])
            #expect(response.body == Data("select".utf8))

            // And back to a Runway response: the same fields, in the same order.
            let back = try Response(converted, body: response.body)
            #expect(back.headers == response.headers)
            #expect(back.status == 200)
        }
    }

    @Test func theRequestIsSentByteForByteAndAnOddResponseIsReadAsSent() async throws {
        // A raw server, to see the request line and fields exactly as sent and to answer with a
        // status and fields no HTTP library writes on purpose.
        let reply =
            Array("HTTP/1.1 299 Custom Reason\r\nSet-Cookie: a=1\r\nX-Obs: caf".utf8) + [0xC3, 0xA9]
            + Array("\r\nSet-Cookie: b=2\r\nX-Empty:\r\nContent-Length: 2\r\n\r\nok".utf8)
        let responder = try ScriptedResponder { _ in .reply(reply) }
        defer { responder.stop() }
        let fields: HTTPFields = [
            try #require(HTTPField.Name("X-First")): "1", .cookie: "a=1", try #require(HTTPField.Name("X-First")): "2",
        ]
        let request = HTTPRequest(method: .delete, scheme: nil, authority: nil, path: "/a%2Fb/%E2%82%AC?q=%20x", headerFields: fields)
        let baseURL = try #require(URL(string: responder.url("/v1").absoluteString + "#fragment"))
        let response = try await Self.pipeline.send(Request(request, baseURL: baseURL))

        let exchange = try #require(responder.exchanges.first)
        #expect(exchange.method == "DELETE")
        #expect(exchange.target == "/v1/a%2Fb/%E2%82%AC?q=%20x")
        let lines = exchange.head.components(separatedBy: "\r\n")
        #expect(lines.filter { $0.hasPrefix("X-First:") || $0.hasPrefix("Cookie:") } == ["X-First: 1", "Cookie: a=1", "X-First: 2"])

        let converted = try HTTPResponse(response)
        #expect(converted.status.code == 299)
        #expect(converted.status.reasonPhrase == "")  // a Runway response keeps none
        #expect(
            HeaderConversionTests.pairs(converted.headerFields).prefix(4) == [
                "Set-Cookie: a=1", "X-Obs: caf\u{E9}", "Set-Cookie: b=2", "X-Empty: ",
            ])
    }
}
