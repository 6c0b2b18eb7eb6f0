import Foundation
import HTTPTypes
import Hummingbird
import RunwaySigning
import RunwayTestServer

/// Server endpoints that check signatures with ``SignatureVerifier``, as a Swift server would.
///
/// `/signed/...` (GET and POST) answers 200 `ok` when the signature verifies and 401 with the
/// rejection code otherwise.
enum VerifyingRoutes {
    static func add(_ verifier: SignatureVerifier, apiName: String? = nil) -> TestServer.Routes {
        { router in
            for method in [HTTPRequest.Method.get, .post] {
                router.on("/signed/**", method: method) { request, _ in
                    try await verify(request, with: verifier, apiName: apiName)
                }
            }
        }
    }

    private static func verify(_ request: Request, with verifier: SignatureVerifier, apiName: String?) async throws -> Response {
        var request = request
        let body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
        let headers = request.headers
        do {
            try verifier.verify(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                headers: { name in HTTPField.Name(name).flatMap { headers[$0] } }, body: body, apiName: apiName)
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
        } catch {
            return Response(status: .unauthorized, body: ResponseBody(byteBuffer: ByteBuffer(string: error.code.description)))
        }
    }
}
