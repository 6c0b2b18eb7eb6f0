import Hummingbird
import NIOCore

extension BuiltInRoutes {
    /// `/status/{code}`: that status with a short text body (none for 204 and 304); 3xx codes
    /// carry `Location: /json`.
    /// `/delay?ms=N`: waits N milliseconds before sending anything, then `/json`'s body; a POST's
    /// body is not read meanwhile (over HTTP/2 its flow-control window stays shut once full).
    static func addStatus(to router: Router<TestRequestContext>) {
        router.on("/status/:code", method: .get, use: status)
        router.on("/status/:code", method: .post, use: status)
        router.get("/delay", use: delay)
        router.post("/delay", use: delay)
    }

    @Sendable private static func delay(_ request: Request, context: TestRequestContext) async throws -> Response {
        let milliseconds = request.uri.queryParameters.get("ms", as: Int.self) ?? 1000
        try await Task.sleep(for: .milliseconds(milliseconds))
        return json(fixedJSON)
    }

    @Sendable private static func status(_ request: Request, context: TestRequestContext) async throws -> Response {
        guard let code = context.parameters.get("code", as: Int.self), (200...599).contains(code) else {
            return badRequest("status must be a number from 200 to 599")
        }
        var headers: HTTPFields = [:]
        if (300...399).contains(code) {
            headers[.location] = "/json"
        }
        if code == 204 || code == 304 {
            return Response(status: .init(code: code), headers: headers)
        }
        return Response(
            status: .init(code: code), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: "status \(code)\n")))
    }
}
