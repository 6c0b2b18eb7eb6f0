import Foundation
import Hummingbird
import NIOCore
import RunwayTestServer

/// Test server endpoints of the streaming tests (a file of their own: Hummingbird's `Response`
/// is not Runway's).
enum StreamingRoutes {
    /// `/held`: the head at once, then "done" once `gate` opens; `/chunked/{n}`: n bytes of
    /// `DeterministicBytes` with no `Content-Length` (chunked), in pieces of 10,000.
    static func routes(gate: Gate) -> TestServer.Routes {
        { router in
            router.get("/held") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/plain", .cacheControl: "no-store"],
                    body: ResponseBody { writer in
                        await gate.wait()
                        try await writer.write(ByteBuffer(string: "done"))
                        try await writer.finish(nil)
                    })
            }
            router.get("/chunked/:n") { _, context in
                let count = context.parameters.get("n", as: Int.self) ?? 0
                return Response(
                    status: .ok, headers: [.contentType: "application/octet-stream"],
                    body: ResponseBody { writer in
                        var sent = 0
                        while sent < count {
                            let size = min(10_000, count - sent)
                            try await writer.write(ByteBuffer(bytes: DeterministicBytes.data(count: size, offset: sent)))
                            sent += size
                        }
                        try await writer.finish(nil)
                    })
            }
        }
    }

    /// `/counted`: `size` bytes of `DeterministicBytes` (Content-Length), counting in `sent`,
    /// per 64 KiB written, how far the server got.
    static func counted(size: Int, sent: Counter) -> TestServer.Routes {
        { router in
            router.get("/counted") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/octet-stream"],
                    body: ResponseBody(contentLength: size) { writer in
                        var offset = 0
                        while offset < size {
                            let count = min(64 << 10, size - offset)
                            try await writer.write(ByteBuffer(bytes: DeterministicBytes.data(count: count, offset: offset)))
                            offset += count
                            sent.add(count)
                        }
                        try await writer.finish(nil)
                    })
            }
        }
    }
}
