import Foundation
import Hummingbird
import NIOCore

extension BuiltInRoutes {
    /// `/download/{n}`: n bytes of ``DeterministicBytes``, with `Accept-Ranges: bytes`.
    /// `Range: bytes=a-` answers 206 with `Content-Range` and the bytes from a.
    /// `?cut=KEY`: the first request with that key is reset after half of its bytes; later
    /// ones are served in full, so a client can resume.
    /// `?badRange=1`: a `Range` request gets 206 with the whole body and `Content-Range: bytes
    /// 0-…` (a broken cache or proxy), which a client must not append.
    static func addDownload(to router: Router<TestRequestContext>) {
        router.get("/download/:n") { request, context in
            guard let total = context.parameters.get("n", as: Int.self), total >= 0 else {
                return badRequest("n must be a non-negative number")
            }
            var start = 0
            var status = HTTPResponse.Status.ok
            var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
            if let range = request.headers[.range] {
                guard let from = parseOpenRange(range) else { return badRequest("only Range: bytes=a- is supported") }
                guard from < total else {
                    return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(total)"])
                }
                start = request.uri.queryParameters.get("badRange") == nil ? from : 0
                status = .partialContent
                headers[.contentRange] = "bytes \(start)-\(total - 1)/\(total)"
            }
            let count = total - start
            var cutAfter: Int?
            if let key = request.uri.queryParameters.get("cut"), context.stats.claimFirstCut(key: key) {
                cutAfter = count / 2
            }
            return Response(
                status: status, headers: headers,
                body: streamedBody(
                    offset: start, count: count, cutAfter: cutAfter, channel: context.channel,
                    stats: context.stats, path: request.uri.path))
        }
    }

    /// The `a` of `bytes=a-`, or `nil` for any other range form.
    static func parseOpenRange(_ value: String) -> Int? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("bytes="), trimmed.hasSuffix("-") else { return nil }
        let number = trimmed.dropFirst("bytes=".count).dropLast()
        guard let from = Int(number), from >= 0 else { return nil }
        return from
    }
}
