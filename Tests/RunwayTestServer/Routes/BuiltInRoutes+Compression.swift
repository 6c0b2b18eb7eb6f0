import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension BuiltInRoutes {
    /// Compressed bombs already built, by size in MiB (building one costs CPU).
    private static let bombs = BombCache()

    /// `/gzip/{n}`: n bytes of ``DeterministicBytes``, gzip-encoded (`Content-Encoding: gzip`,
    /// `X-Uncompressed-Length: n`).
    /// `/gzip-bomb/{mb}`: mb MiB of zeros, gzip-encoded into about 1 KiB per MiB.
    static func addCompression(to router: Router<TestRequestContext>) {
        router.get("/gzip/:n") { _, context in
            guard let count = context.parameters.get("n", as: Int.self), (0...(256 << 20)).contains(count) else {
                return badRequest("n must be a number from 0 to 256 MiB")
            }
            let body = try Gzip.compress(DeterministicBytes.data(count: count))
            return gzipResponse(body, uncompressedLength: count)
        }
        router.get("/gzip-bomb/:mb") { _, context in
            guard let megabytes = context.parameters.get("mb", as: Int.self), (1...4096).contains(megabytes) else {
                return badRequest("mb must be a number from 1 to 4096")
            }
            let body = try bombs.bomb(megabytes: megabytes)
            return gzipResponse(body, uncompressedLength: megabytes << 20)
        }
    }

    private static func gzipResponse(_ body: Data, uncompressedLength: Int) -> Response {
        var headers: HTTPFields = [.contentType: "application/octet-stream", .contentEncoding: "gzip"]
        headers.append(customField("X-Uncompressed-Length", String(uncompressedLength)))
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Gzip bombs by size, built once each.
private final class BombCache: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var bombs: [Int: Data] = [:]

    func bomb(megabytes: Int) throws -> Data {
        if let cached = lock.withLock({ bombs[megabytes] }) { return cached }
        let built = try Gzip.bomb(megabytes: megabytes)
        lock.withLock { bombs[megabytes] = built }
        return built
    }
}
