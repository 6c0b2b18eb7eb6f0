import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Runway
import RunwayCompression
import RunwayTestServer

/// Builds the server's JSON responses: gzip-encoded when the client accepts gzip and the body
/// is worth compressing.
enum Reply {
    /// Bodies below this many bytes are sent as they are.
    static let gzipThreshold = 512

    /// `value` as a JSON response.
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, for request: Request) -> Response {
        var body = value.serializedData()
        var headers: HTTPFields = [.contentType: "application/json"]
        let accepted = request.headers[.acceptEncoding]?.lowercased().contains("gzip") ?? false
        if accepted, body.count >= gzipThreshold, let compressed = try? Gzip.compress(body) {
            body = compressed
            headers[.contentEncoding] = "gzip"
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `{"code": code, "message": message}` with `status`: the error shape of the shared API.
    static func error(_ status: HTTPResponse.Status, code: Int, _ message: String, for request: Request) -> Response {
        json(["code": .int(Int64(code)), "message": .string(message)], status: status, for: request)
    }

    /// The request's query value for `name`, if present and not empty.
    static func query(_ request: Request, _ name: String) -> String? {
        guard let value = request.uri.queryParameters[name[...]], !value.isEmpty else { return nil }
        return String(value)
    }

    /// The request's body parsed as JSON, or `nil` when it is not JSON.
    static func body(_ request: inout Request) async throws -> JSON? {
        let buffer = try await request.collectBody(upTo: SignatureCheck.maxBody)
        return try? JSON(parsing: Data(buffer.readableBytesView))
    }
}
