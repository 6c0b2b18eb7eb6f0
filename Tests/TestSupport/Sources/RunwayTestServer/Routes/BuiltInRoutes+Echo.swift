import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension BuiltInRoutes {
    /// The ~300-byte JSON document `/json` returns.
    static let fixedJSON = Data(
        (#"{"id":42,"name":"Runway test document","status":"ok","tags":["alpha","beta","gamma"],"#
            + #""owner":{"id":7,"login":"runway","verified":true},"#
            + #""metrics":{"requests":1000,"errors":0,"p50":1.25,"p99":9.75},"#
            + #""description":"A fixed JSON body of about three hundred bytes for benchmarks and tests."}"#).utf8)

    /// `/echo` (every method): what was received, as ``EchoResponse``.
    /// `/headers`: the request headers as a JSON object.
    /// `/json`: ``TestServer/fixedJSON``.
    static func addEcho(to router: Router<TestRequestContext>) {
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .options]
        for method in methods {
            router.on("/echo", method: method) { request, context in
                try await echo(request, context: context)
            }
        }
        router.on("/echo", method: .head) { request, _ in
            var headers = HTTPFields()
            headers.append(customField("X-Echo-Method", request.method.rawValue))
            return Response(status: .ok, headers: headers)
        }
        router.get("/headers") { request, _ in
            try json(headerDictionary(request.headers))
        }
        router.get("/json") { _, _ in
            json(fixedJSON)
        }
    }

    private static func echo(_ request: Request, context: TestRequestContext) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 << 20)
        let body = Data(buffer.readableBytesView)
        let echo = EchoResponse(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query,
            authority: request.head.authority,
            headers: headerDictionary(request.headers),
            body: String(data: body, encoding: .utf8),
            bodyBase64: body.base64EncodedString(),
            bodyLength: body.count,
            http2: context.isHTTP2,
            remoteAddress: context.remoteAddress
        )
        return try json(echo)
    }
}

extension TestServer {
    /// The body `/json` returns (about 300 bytes).
    public static var fixedJSON: Data { BuiltInRoutes.fixedJSON }
}
