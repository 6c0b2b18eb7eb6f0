import Foundation
import Hummingbird
import NIOCore

extension BuiltInRoutes {
    /// `/slow?ms=N[&every=K]`: 64-byte chunks every K ms (10 unless given) for about N ms
    /// (Content-Length announced); a client that leaves meanwhile makes a write fail, which is
    /// recorded as an abort.
    /// `/bytes/{n}`: n bytes of ``DeterministicBytes``.
    /// `/reset`: announces 100,000 bytes, sends 1,000, then resets the connection (HTTP/1.1)
    /// or the stream (HTTP/2).
    static func addStreaming(to router: Router<TestRequestContext>) {
        router.get("/slow") { request, context in
            let milliseconds = max(0, request.uri.queryParameters.get("ms", as: Int.self) ?? 1000)
            let every = max(1, request.uri.queryParameters.get("every", as: Int.self) ?? 10)
            let chunks = max(1, milliseconds / every)
            let chunk = ByteBuffer(repeating: UInt8(ascii: "s"), count: 64)
            let stats = context.stats
            let path = request.uri.path
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: chunks * 64) { writer in
                    stats.recordBodyStart(path: path)
                    do {
                        for index in 0..<chunks {
                            if index > 0 { try await Task.sleep(for: .milliseconds(every)) }
                            try await writer.write(chunk)
                        }
                        try await writer.finish(nil)
                    } catch {
                        stats.recordAbort(path: path)
                        throw error
                    }
                })
        }

        router.get("/bytes/:n") { request, context in
            guard let count = context.parameters.get("n", as: Int.self), count >= 0 else {
                return badRequest("n must be a non-negative number")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: streamedBody(offset: 0, count: count, stats: context.stats, path: request.uri.path))
        }

        router.get("/reset") { request, context in
            let channel = context.channel
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: 100_000) { writer in
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "r"), count: 1000))
                    try await Task.sleep(for: .milliseconds(20))
                    await abortConnection(channel)
                    throw TestServerError("connection reset on purpose")
                })
        }
    }

    /// A body of ``DeterministicBytes`` from `offset`, `count` bytes long, in 64 KiB chunks;
    /// with `cutAfter`, the connection is reset once that many bytes are sent.
    static func streamedBody(
        offset: Int, count: Int, cutAfter: Int? = nil, channel: (any Channel)? = nil, stats: TestServerStats, path: String
    ) -> ResponseBody {
        ResponseBody(contentLength: count) { writer in
            stats.recordBodyStart(path: path)
            let limit = cutAfter.map { min($0, count) } ?? count
            var sent = 0
            do {
                while sent < limit {
                    let size = min(64 * 1024, limit - sent)
                    let data = DeterministicBytes.data(count: size, offset: offset + sent)
                    try await writer.write(ByteBuffer(bytes: data))
                    sent += size
                }
            } catch {
                stats.recordAbort(path: path)
                throw error
            }
            if cutAfter != nil, limit < count {
                try await Task.sleep(for: .milliseconds(20))
                if let channel { await abortConnection(channel) }
                throw TestServerError("download cut on purpose")
            }
            try await writer.finish(nil)
        }
    }

    /// Closes `channel` at once: an HTTP/2 stream is reset; a TCP connection is closed with
    /// `SO_LINGER` 0, so the client gets an RST rather than a clean end of stream.
    static func abortConnection(_ channel: any Channel) async {
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close()
    }
}
