import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns one call (its request, and its response or failure) into a HAR entry, secrets hidden
/// and bodies cut, as the recorder keeps it.
struct HAREntryBuilder {
    let redaction: Redaction
    let bodyLimit: Int

    /// The entry of a call that started at `started` and took `elapsed` through the chain below
    /// the interceptor; `response` is what came back (for a failure, the one the error carries,
    /// if any); `streamed` is how the response's streamed body ended, when it was streamed.
    func entry(
        for request: Request, context: RequestContext, started: Date, elapsed: Duration, response: Response?, failure: RunwayError?,
        streamed: ResponseBodyStream.End? = nil
    ) -> HAR.Entry {
        let fromCache = response.flatMap { Self.cacheName(of: $0.origin) }
        // A hit crossed no network, whatever its metrics say.
        let metrics = fromCache == nil ? response?.metrics ?? TransferMetrics() : TransferMetrics()
        let timings = Self.timings(of: metrics, elapsed: elapsed)
        let version = Self.httpVersion(metrics.httpVersion)
        // The phases are whole microseconds; so is their sum, without the float noise of adding doubles.
        let time = (timings.total * 1000).rounded() / 1000
        return HAR.Entry(
            startedDateTime: started.formatted(Self.dateStyle),
            time: time,
            request: harRequest(request, httpVersion: version),
            response: response.map { harResponse($0, httpVersion: version, fromCache: fromCache != nil, streamed: streamed) }
                ?? Self.noResponse,
            timings: timings,
            serverIPAddress: Self.ipAddress(of: metrics.remoteAddress),
            fromCache: fromCache,
            error: failure.map(Self.describe),
            apiName: context.apiName.map(redaction.apply(toAPIName:)),
            serviceID: context.serviceID?.rawValue)
    }

    /// ISO 8601 in UTC with milliseconds, as HAR wants `startedDateTime`.
    static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// What browsers accept for a call that got no response: status 0, nothing else.
    static let noResponse = HAR.Response(
        status: 0, statusText: "", httpVersion: "", headers: [], content: HAR.Content(size: 0, mimeType: "x-unknown"), bodySize: -1)

    private func harRequest(_ request: Request, httpVersion: String) -> HAR.Request {
        // Decoded, as browsers record them; a name or value whose escapes do not decode to
        // UTF-8 as it was sent, not as an empty string.
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let encoded = components?.percentEncodedQueryItems ?? []
        let query = (components?.queryItems ?? []).enumerated().map { index, item in
            let sent = index < encoded.count ? encoded[index] : item
            return URLQueryItem(
                name: item.name.isEmpty && !sent.name.isEmpty ? sent.name : item.name,
                value: item.value ?? sent.value)
        }
        var postData: HAR.PostData?
        if let body = request.body {
            var kept = keep(body, contentType: request.headers["Content-Type"])
            if kept.isBase64 {
                // HAR has no encoding for a request body: binary bytes are left out.
                kept = KeptBody(text: nil, comment: "\(body.count) bytes of binary, not recorded")
            }
            postData = HAR.PostData(mimeType: request.headers["Content-Type"] ?? "", text: kept.text ?? "", comment: kept.comment)
        } else if let stream = request.bodyStream {
            let size = stream.length.map { "\($0) bytes" } ?? "a body of unknown length"
            postData = HAR.PostData(
                mimeType: request.headers["Content-Type"] ?? "", text: "",
                comment: "\(size) streamed from a file or a sequence, not recorded")
        }
        return HAR.Request(
            method: request.method.rawValue, url: redaction.apply(to: request.url), httpVersion: httpVersion,
            headers: headers(request.headers),
            queryString: query.map { item in
                HAR.NameValue(name: item.name, value: redaction.apply(toQueryItem: item.name, value: item.value ?? ""))
            },
            postData: postData, bodySize: request.body?.count ?? request.bodyStream.map { $0.length ?? -1 } ?? 0)
    }

    private func harResponse(_ response: Response, httpVersion: String, fromCache: Bool, streamed: ResponseBodyStream.End?) -> HAR.Response
    {
        let type = response.headers["Content-Type"]
        var content = HAR.Content(size: streamed?.byteCount ?? response.body.count, mimeType: type ?? "x-unknown")
        let encoding = response.headers["Content-Encoding"]?.lowercased() ?? "identity"
        var bodySize = encoding == "identity" || encoding.isEmpty ? response.body.count : -1
        if let streamed {
            // Handed over as sent (never inflated): its size is the size received too.
            content.comment = "\(streamed.byteCount) bytes streamed to the caller, not recorded"
            bodySize = streamed.byteCount
        } else if let file = response.fileURL {
            content.size = Self.downloadedSize(file, response) ?? 0
            content.comment = "the body was written to \(file.path)"
            bodySize = -1
        } else if !response.body.isEmpty {
            let kept = keep(response.body, contentType: type)
            content.text = kept.text
            content.encoding = kept.isBase64 ? "base64" : nil
            content.comment = kept.comment
        }
        return HAR.Response(
            status: response.status, statusText: Self.reasonPhrase(response.status), httpVersion: httpVersion,
            headers: headers(response.headers), content: content,
            redirectURL: response.headers["Location"].map(redaction.apply(toURLText:)) ?? "", bodySize: fromCache ? 0 : bodySize)
    }

    /// The bytes a download wrote to `file` in this response: the file's size, less the bytes
    /// a resumed download (`206`) had before (where its `Content-Range` starts); `nil` when the
    /// file cannot be read.
    static func downloadedSize(_ file: URL, _ response: Response) -> Int? {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int else { return nil }
        guard response.status == 206, let range = response.headers["Content-Range"].flatMap(DownloadTarget.byteRange) else { return size }
        return max(0, size - Int(range.first))
    }

    private func headers(_ headers: HTTPHeaders) -> [HAR.NameValue] {
        redaction.apply(to: headers).map { HAR.NameValue(name: $0.0, value: $0.1) }
    }

    /// What is kept of a body: its text (redacted, or base64) and why it is cut or left out.
    struct KeptBody: Equatable {
        var text: String?
        var isBase64 = false
        var comment: String?
    }

    /// A body as HAR keeps it: text with hidden values replaced, or the base64 of binary bytes,
    /// cut at the body limit; multipart bodies and, with a limit of 0, every body left out.
    func keep(_ body: Data, contentType: String?) -> KeptBody {
        guard bodyLimit > 0 else { return KeptBody(text: nil, comment: "\(body.count) bytes, not recorded (body limit 0)") }
        switch redaction.apply(toBody: body, contentType: contentType, keeping: bodyLimit) {
        case .multipart:
            return KeptBody(text: nil, comment: "\(body.count) bytes of multipart, not recorded (its parts are not redacted)")
        case .binary where Self.looksLikeText(body, contentType: contentType):
            // Text Redaction cannot read (another charset, a control character): what it would
            // hide is in there, as it is.
            return KeptBody(
                text: nil,
                comment: "\(body.count) bytes of text that is not UTF-8, or holds control characters, not recorded (it cannot be redacted)")
        case .binary:
            let cut = body.count > bodyLimit ? "the first \(bodyLimit) of \(body.count) bytes" : nil
            return KeptBody(text: body.prefix(bodyLimit).base64EncodedString(), isBase64: true, comment: cut)
        case .prefix(let text, let size):
            // A large body, read only as far as the limit needs.
            return KeptBody(text: text, comment: "cut at \(text.utf8.count) of \(size) bytes")
        case .text(let text):
            let size = text.utf8.count
            guard size > bodyLimit else { return KeptBody(text: text) }
            // Cut between two characters: the kept text is a start of the body, never half a character.
            let kept = text.prefix(utf8Bytes: bodyLimit)
            return KeptBody(text: String(kept), comment: "cut at \(kept.utf8.count) of \(size) bytes")
        }
    }

    /// Whether a body Redaction could not read as UTF-8 text is text all the same: its type says
    /// so (JSON, XML, a form, `text/`, JavaScript), it starts as JSON or XML does, or nearly all
    /// of its first bytes are printable ASCII (Latin-1 text, text with one stray control byte).
    static func looksLikeText(_ body: Data, contentType: String?) -> Bool {
        let type = contentType?.lowercased() ?? ""
        if ["json", "xml", "x-www-form-urlencoded", "text/", "javascript"].contains(where: type.contains) { return true }
        let sample = body.prefix(4096)
        if let first = sample.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), [0x7B, 0x5B, 0x3C].contains(first) { return true }
        let printable = sample.count { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return !sample.isEmpty && printable * 10 >= sample.count * 9
    }

    /// `memory` or `disk` for a cache's origin (Chrome's `_fromCache`), `nil` otherwise.
    static func cacheName(of origin: ResponseOrigin) -> String? {
        switch origin {
        case .memoryCache: "memory"
        case .diskCache: "disk"
        default: nil
        }
    }

    /// `HTTP/1.1`, `HTTP/2`; empty when unknown.
    static func httpVersion(_ version: String) -> String {
        version.isEmpty ? "" : "HTTP/\(version)"
    }

    /// The address of `ip:port` or `[ip]:port`, without the port.
    static func ipAddress(of remote: String) -> String? {
        if remote.hasPrefix("["), let end = remote.firstIndex(of: "]") {
            return String(remote[remote.index(after: remote.startIndex)..<end])
        }
        guard let colon = remote.lastIndex(of: ":"), colon != remote.startIndex else { return nil }
        return String(remote[..<colon])
    }

    /// The `_error` text: code, stage and message, as the logging interceptor writes a failure.
    static func describe(_ failure: RunwayError) -> String {
        var text = "\(failure.code)"
        if let stage = failure.stage { text += " at \(stage)" }
        if !failure.message.isEmpty { text += ": \(failure.message)" }
        return text
    }
}
