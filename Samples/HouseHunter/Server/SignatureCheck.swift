import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RunwayCompression
import RunwaySigning
import RunwayTestServer

/// Verifies every request's signature before any route sees it, then decodes a gzip body.
///
/// The signature covers the body as received (the app compresses before it signs), so the
/// check runs on the raw bytes and the route gets the decoded ones. A rejection is a 403 with
/// `{"code": 4030, "message": "signature: <reason>"}`: deliberately not 401, which the app's
/// services read as "log in again".
struct SignatureCheck: RouterMiddleware {
    typealias Context = TestRequestContext

    /// The largest body accepted, before and after decoding.
    static let maxBody = 1 << 20

    let verifier: SignatureVerifier

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let raw: Data
        do {
            raw = Data(try await request.collectBody(upTo: Self.maxBody).readableBytesView)
        } catch {
            return Reply.error(.contentTooLarge, code: 4130, "the body is larger than \(Self.maxBody) bytes", for: request)
        }
        let headers = request.headers
        do {
            try verifier.verify(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                headers: { name in HTTPField.Name(name).flatMap { headers[$0] } }, body: raw)
        } catch {
            return Reply.error(.forbidden, code: 4030, "signature: \(error.code)", for: request)
        }
        if headers[.contentEncoding]?.lowercased() == "gzip" {
            guard let decoded = try? Gzip.decompress(raw, limit: Self.maxBody) else {
                return Reply.error(.badRequest, code: 4000, "the gzip body cannot be decoded", for: request)
            }
            var head = request.head
            head.headerFields[.contentEncoding] = nil
            request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: decoded)))
        }
        return try await next(request, context)
    }
}
