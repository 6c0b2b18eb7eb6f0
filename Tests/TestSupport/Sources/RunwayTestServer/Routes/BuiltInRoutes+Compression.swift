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

    /// `/encoded/{n}?as=...`: n bytes of ``DeterministicBytes`` in one of the forms a client
    /// may meet: `gzip`, `x-gzip`, `deflate` (zlib-wrapped, as HTTP means it), `raw-deflate`
    /// (sent as `deflate` without the zlib wrapper, as some servers do), `gzip-twice`
    /// (`Content-Encoding: gzip, gzip`), `truncated` and `corrupt` gzip, `deflate-truncated`
    /// (zlib-wrapped, its last 6 bytes cut) and `deflate-bad-check` (zlib-wrapped, its Adler-32
    /// wrong), `br` (bytes that are not brotli) and `empty` (no body, `Content-Encoding: gzip`).
    /// `&etag=1` adds a strong `ETag`.
    static func addEncodings(to router: Router<TestRequestContext>) {
        router.get("/encoded/:n") { request, context in
            guard let count = context.parameters.get("n", as: Int.self), (0...(64 << 20)).contains(count) else {
                return badRequest("n must be a number from 0 to 64 MiB")
            }
            let plain = DeterministicBytes.data(count: count)
            let gzip = try Gzip.compress(plain)
            // A gzip stream from zlib: a 10-byte header, raw deflate, an 8-byte trailer.
            let raw = gzip.subdata(in: 10..<(gzip.count - 8))
            let form = request.uri.queryParameters.get("as") ?? "gzip"
            let (encoding, body): (String, Data)
            switch form {
            case "gzip", "x-gzip": (encoding, body) = (form, gzip)
            case "deflate": (encoding, body) = ("deflate", Gzip.zlibWrapped(raw: raw, of: plain))
            case "raw-deflate": (encoding, body) = ("deflate", raw)
            case "deflate-truncated": (encoding, body) = ("deflate", Gzip.zlibWrapped(raw: raw, of: plain).dropLast(6))
            case "deflate-bad-check":
                var wrapped = Gzip.zlibWrapped(raw: raw, of: plain)
                wrapped[wrapped.count - 1] ^= 0xFF
                (encoding, body) = ("deflate", wrapped)
            case "gzip-twice": (encoding, body) = ("gzip, gzip", try Gzip.compress(gzip))
            case "truncated": (encoding, body) = ("gzip", gzip.prefix(gzip.count / 2))
            case "corrupt":
                var flipped = gzip
                for index in stride(from: 12, to: flipped.count - 8, by: 7) { flipped[index] ^= 0x5A }
                (encoding, body) = ("gzip", flipped)
            case "br": (encoding, body) = ("br", Data("these bytes are not brotli".utf8))
            case "empty": (encoding, body) = ("gzip", Data())
            default: return badRequest("unknown form \(form)")
            }
            var headers: HTTPFields = [.contentType: "application/octet-stream", .contentEncoding: encoding]
            if request.uri.queryParameters.get("etag") != nil { headers[.eTag] = "\"\(form)\"" }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
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

    /// Built under the lock: concurrent first requests wait for one build rather than each
    /// compressing the same gigabyte on the shared thread pool.
    func bomb(megabytes: Int) throws -> Data {
        try lock.withLock {
            if let cached = bombs[megabytes] { return cached }
            let built = try Gzip.bomb(megabytes: megabytes)
            bombs[megabytes] = built
            return built
        }
    }
}
