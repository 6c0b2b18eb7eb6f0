import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RunwaySigning
import RunwayTestServer

/// The server side of OpenAPI/openapi.yaml, written by hand as any server would be (the
/// built-in `/bytes/{count}` and `/slow` serve the streamed downloads).
///
/// With a verifier, every item route checks the request's signature first and answers 401 with
/// the rejection code when it does not verify.
struct ItemRoutes: Sendable {
    var verifier: SignatureVerifier?
    /// The API name the salted-hash scheme signs with, as the server knows it.
    var signedAPIName: String?
    /// How many times `/flaky` answers 503 before it answers 200.
    var flakyFailures = 1
    /// Counts `/flaky`'s requests.
    let flakyCount = Counter()
    /// Counts the uploads to `/blobs/flaky`.
    let flakyUploads = Counter()

    struct Item: Codable {
        var id: String
        var name: String
        var tags: [String]
        var traceID: String?
    }

    struct Problem: Codable {
        var code: Int
        var message: String
    }

    var routes: TestServer.Routes {
        { router in
            router.get("/items") { request, context in
                if let rejection = try await check(request) { return rejection }
                let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 10
                let tags = request.uri.queryParameters.getAll("tag").map { String($0) }
                let items = (1...3).map { Item(id: "\($0)", name: "Item \($0)", tags: tags) }
                return try json(["items": Array(items.prefix(limit))])
            }
            router.post("/items") { request, context in
                var request = request
                let body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
                if let rejection = try check(request, body: body) { return rejection }
                struct NewItem: Decodable {
                    var name: String
                    var tags: [String]?
                }
                let new = try JSONDecoder().decode(NewItem.self, from: body)
                guard !new.name.isEmpty else {
                    return try json(Problem(code: 4221, message: "name is empty"), status: .unprocessableContent)
                }
                var response = try json(Item(id: "9", name: new.name, tags: new.tags ?? []), status: .created)
                response.headers[.location] = "/items/9"
                return response
            }
            router.get("/items/:itemID") { request, context in
                if let rejection = try await check(request) { return rejection }
                // The segment as sent (percent-encoded), decoded.
                let id = context.parameters.get("itemID").flatMap { $0.removingPercentEncoding } ?? ""
                guard id != "missing" else { return try json(Problem(code: 4040, message: "no item \(id)"), status: .notFound) }
                var response = try json(
                    Item(id: id, name: "Item \(id)", tags: [], traceID: request.headers[HTTPField.Name("X-Trace-ID")!]))
                response.headers[HTTPField.Name("X-Served-By")!] = "item-routes"
                return response
            }
            router.delete("/items/:itemID") { request, context in
                if let rejection = try await check(request) { return rejection }
                guard context.parameters.get("itemID") != "locked" else {
                    return try json(Problem(code: 4090, message: "the item is locked"), status: .conflict)
                }
                return Response(status: .noContent)
            }
            router.put("/blobs/:name") { request, context in
                // Read as it streams in; the receipt says what arrived and how it was framed.
                var hash = SHA256()
                var size = 0
                for try await buffer in request.body {
                    hash.update(data: Data(buffer.readableBytesView))
                    size += buffer.readableBytes
                }
                // "flaky": the first upload is read whole and answered 503.
                if context.parameters.get("name") == "flaky", flakyUploads.increment() == 1 {
                    return Response(status: .serviceUnavailable, headers: [.retryAfter: "0"])
                }
                let chunked = request.headers[.transferEncoding]?.lowercased() == "chunked" || request.headers[.contentLength] == nil
                let digest = hash.finalize().map { String(format: "%02x", $0) }.joined()
                return try json(Receipt(size: size, sha256: digest, chunked: chunked))
            }
            router.get("/flaky") { _, _ in
                let attempt = flakyCount.increment()
                guard attempt > flakyFailures else {
                    return Response(status: .serviceUnavailable, headers: [.retryAfter: "0"])
                }
                return try json(["attempts": attempt])
            }
        }
    }

    struct Receipt: Encodable {
        var size: Int
        var sha256: String
        var chunked: Bool
    }

    /// The 401 for a request whose signature does not verify (its body read first), or `nil`.
    private func check(_ request: Request) async throws -> Response? {
        guard verifier != nil else { return nil }
        var request = request
        let body = Data(try await request.collectBody(upTo: 1 << 20).readableBytesView)
        return try check(request, body: body)
    }

    /// The 401 for a request whose signature does not verify, or `nil`.
    private func check(_ request: Request, body: Data) throws -> Response? {
        guard let verifier else { return nil }
        let headers = request.headers
        do {
            try verifier.verify(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                headers: { name in HTTPField.Name(name).flatMap { headers[$0] } }, body: body, apiName: signedAPIName)
            return nil
        } catch {
            return try json(Problem(code: 4010, message: error.code.description), status: .unauthorized)
        }
    }

    private func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
    }
}
