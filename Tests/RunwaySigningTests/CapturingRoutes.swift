import Foundation
import HTTPTypes
import Hummingbird
import RunwayTestServer

/// What a server received, in the form the Python verifier reads (`--request FILE`).
struct CapturedRequest: Codable, Sendable {
    var method: String
    /// The path as on the wire.
    var path: String
    /// The query as on the wire, without `?`.
    var query: String?
    /// Each header's first value, by lower-case name.
    var headers: [String: String]
    var bodyBase64: String

    /// The body bytes.
    var body: Data { Data(base64Encoded: bodyBase64) ?? Data() }
}

/// Server endpoints that answer with the request they received, untouched, so a test can hand
/// it to a verifier of its own.
///
/// `/capture/...` (GET and POST) answers 200 with a ``CapturedRequest`` as JSON: the method, the
/// raw path and query from the request line, the headers and the body bytes before any decoding.
enum CapturingRoutes {
    static let add: TestServer.Routes = { router in
        for method in [HTTPRequest.Method.get, .post] {
            router.on("/capture/**", method: method) { request, _ in
                try await CapturingRoutes.capture(request)
            }
        }
    }

    private static func capture(_ request: Request) async throws -> Response {
        var request = request
        let body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
        var headers: [String: String] = [:]
        for field in request.headers where headers[field.name.canonicalName] == nil {
            headers[field.name.canonicalName] = field.value
        }
        let captured = CapturedRequest(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query, headers: headers,
            bodyBase64: body.base64EncodedString())
        let json = try JSONEncoder().encode(captured)
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
