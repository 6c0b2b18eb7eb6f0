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
    ///
    /// Versions: `?version=v` (default 0) serves ``DeterministicBytes`` from position `7 × v`,
    /// with `ETag: "v<v>"`; `?validator=date` sends a `Last-Modified` of that version instead,
    /// `weak` a weak `ETag`, `none` neither. An `If-Range` that is not the version's validator
    /// gets the whole body (200), as RFC 9110 asks; `?ignoreIfRange=1` serves the range anyway
    /// (a server that does not know `If-Range`). `?validator=date-recent` sends a `Last-Modified`
    /// after the response's `Date` (a weak one).
    ///
    /// Broken servers: `?shortRange=1` answers a range with one byte less than the rest;
    /// `?unaskedRange=a` answers a request without `Range` with 206 from byte a. `?bare416=1`
    /// sends a 416 with `Content-Range` alone, no validator (as nginx does).
    static func addDownload(to router: Router<TestRequestContext>) {
        router.get("/download/:n") { request, context in
            guard let total = context.parameters.get("n", as: Int.self), total >= 0 else {
                return badRequest("n must be a non-negative number")
            }
            let query = request.uri.queryParameters
            let version = query.get("version", as: Int.self) ?? 0
            var start = 0
            var status = HTTPResponse.Status.ok
            var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
            var validator: String?
            switch query.get("validator") {
            case "none": validator = nil
            case "weak": headers[.eTag] = "W/\"v\(version)\""
            case "date":
                validator = "Thu, 01 Jan 2026 00:00:\(String(format: "%02d", version % 60)) GMT"
                headers[.lastModified] = validator
            case "date-recent":
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                validator = formatter.string(from: Date().addingTimeInterval(5))
                headers[.lastModified] = validator
            default:
                validator = "\"v\(version)\""
                headers[.eTag] = validator
            }
            let ifRange = request.headers[.ifRange]
            let rangeApplies = ifRange == nil || ifRange == validator || query.get("ignoreIfRange") != nil
            if let range = request.headers[.range], rangeApplies {
                guard let from = parseOpenRange(range) else { return badRequest("only Range: bytes=a- is supported") }
                guard from < total else {
                    // `bare416`: only the range, as nginx sends it.
                    if query.get("bare416") != nil { headers = [:] }
                    headers[.contentRange] = "bytes */\(total)"
                    return Response(status: .rangeNotSatisfiable, headers: headers)
                }
                start = query.get("badRange") == nil ? from : 0
                status = .partialContent
            } else if request.headers[.range] == nil, let from = query.get("unaskedRange", as: Int.self), from < total {
                start = from
                status = .partialContent
            }
            var last = total - 1
            if status == .partialContent {
                if query.get("shortRange") != nil { last -= 1 }
                headers[.contentRange] = "bytes \(start)-\(last)/\(total)"
            }
            let count = last + 1 - start
            var cutAfter: Int?
            if let key = query.get("cut"), context.stats.claimFirstCut(key: key) {
                cutAfter = count / 2
            }
            return Response(
                status: status, headers: headers,
                body: streamedBody(
                    offset: 7 * version + start, count: count, cutAfter: cutAfter, channel: context.channel,
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
