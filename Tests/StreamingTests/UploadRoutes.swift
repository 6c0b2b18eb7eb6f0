import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RunwayTestServer

/// What `/sink` saw of one upload.
struct SinkReport: Codable, Sendable {
    var method: String
    var received: Int
    /// Whether byte `i` of the body was `DeterministicBytes.byte(at: i)` for every `i`.
    var matches: Bool
    var contentLength: String?
    var transferEncoding: String?
    var contentType: String?
}

/// Test server endpoints of the upload tests.
enum UploadRoutes {
    /// `/sink` (POST, PUT, PATCH): reads the body as it streams in, checks it against
    /// `DeterministicBytes`, and answers a ``SinkReport``; it waits for `gate` before reading,
    /// counts each body read to its end in `completed` and each body cut short in `cut`.
    /// `/temporary` (POST, PUT, PATCH): reads the body, then answers 307 to `/sink`.
    static func routes(gate: Gate? = nil, completed: Counter = Counter(), cut: Counter = Counter()) -> TestServer.Routes {
        { router in
            for method in [HTTPRequest.Method.post, .put, .patch] {
                router.on("/sink", method: method) { request, _ in
                    if let gate { await gate.wait() }
                    var received = 0
                    var matches = true
                    do {
                        for try await buffer in request.body {
                            if matches {
                                matches = buffer.withUnsafeReadableBytes { DeterministicBytes.matches($0, offset: received) }
                            }
                            received += buffer.readableBytes
                        }
                    } catch {
                        cut.increment()
                        throw error
                    }
                    completed.increment()
                    let report = SinkReport(
                        method: request.method.rawValue, received: received, matches: matches,
                        contentLength: request.headers[.contentLength], transferEncoding: request.headers[.transferEncoding],
                        contentType: request.headers[.contentType])
                    return Response(
                        status: .ok, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(report))))
                }
                router.on("/temporary", method: method) { request, _ in
                    // Reads the body first, so the client has sent it all before the redirect.
                    for try await _ in request.body {}
                    return Response(status: .temporaryRedirect, headers: [.location: "/sink"])
                }
            }
        }
    }
}
