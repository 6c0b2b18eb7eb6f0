import Foundation
import HTTPTypes
import Hummingbird
import RunwayTestServer

/// `/fields` (GET, POST and the extension method QUERY): answers 200 with what it received as
/// header fields, in order, so a test sees order and repeats that `/echo`'s JSON object joins:
/// `X-Method`, `X-Target` (the request target as received), one `X-Echo: name=value` per request
/// field, then two `Set-Cookie` fields. The body is the request's body.
enum FieldEchoRoutes {
    static let add: TestServer.Routes = { router in
        for method in [HTTPRequest.Method.get, .post, .query] {
            router.on("/fields", method: method) { request, _ in
                try await FieldEchoRoutes.echo(request)
            }
        }
    }

    private static func echo(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1 << 20)
        var fields: HTTPFields = [:]
        fields.append(HTTPField(name: name("X-Method"), value: request.method.rawValue))
        fields.append(HTTPField(name: name("X-Target"), value: request.uri.description))
        for field in request.headers {
            fields.append(HTTPField(name: name("X-Echo"), value: "\(field.name.canonicalName)=\(field.value)"))
        }
        fields.append(HTTPField(name: .setCookie, value: "a=1; Path=/"))
        fields.append(HTTPField(name: .setCookie, value: "b=2; HttpOnly"))
        return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: body))
    }

    /// A field name from a literal that is a token.
    private static func name(_ text: String) -> HTTPField.Name {
        HTTPField.Name(text) ?? .contentType
    }
}
