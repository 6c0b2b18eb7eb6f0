import Foundation
import RunwayCore
import RunwaySync

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request in flight: where its body goes, how far it got, and how it ends.
///
/// The delegate queue feeds it (`receive`, `redirect`, `complete`); the caller's task waits in
/// ``run(_:)``; a timer or task cancellation may ``abort(_:)`` it from any thread. The first
/// ending wins. An abort releases the caller at once with its error, whatever `URLSession` is
/// doing, and cancels the task from the delegate queue, never from elsewhere:
/// swift-corelibs-foundation traps when a task is cancelled while it waits for the answer to a
/// redirect and that answer then comes. On the delegate queue a cancel comes either before the
/// redirect callback, which then gets no answer at all, or after the answer, which corelibs has
/// queued ahead of the cancel.
///
/// `@unchecked Sendable`: the mutable fields (`state`) and the sink are read and written only
/// inside `state.withLock`.
final class Transfer: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        /// How it ended, left under the lock for the resumed caller to read under the lock too: that
        /// pair orders the hand-over for the thread sanitizer, which does not see the runtime's
        /// own when the continuation is resumed before the caller has suspended (a refused
        /// connection can end that fast).
        var outcome: Result<Response, RunwayError>?
        var task: URLSessionTask?
        var abortError: RunwayError?
        var redirectError: RunwayError?
        var finished = false
        var redirectCount = 0
        var status = 0
        var headers = HTTPHeaders()
        var bytesReceived: Int64 = 0
        var expectedBytes: Int64?
        var bytesSent: Int64 = 0
        var bytesToSend: Int64?
        /// When a byte last moved either way (or the transfer started), for the idle timeout.
        var lastActivity = ContinuousClock.now
    }

    let request: Request
    private let started = ContinuousClock.now
    private let state = Locked(State())
    private let sink: ResponseSink
    /// The session's delegate queue (serial), where the task is cancelled.
    private let delegateQueue: OperationQueue

    init(request: Request, sink: ResponseSink, delegateQueue: OperationQueue) {
        self.request = request
        self.sink = sink
        self.delegateQueue = delegateQueue
    }

    /// Starts `task` and waits until the transfer ends.
    func run(_ task: URLSessionDataTask) async throws(RunwayError) -> Response {
        await withCheckedContinuation { continuation in
            let early: Bool = state.withLock { state in
                if let abortError = state.abortError {
                    state.finished = true
                    state.outcome = .failure(abortError)
                    return true
                }
                state.continuation = continuation
                state.task = task
                return false
            }
            if early {
                task.cancel()
                sink.end()
                continuation.resume()
            } else {
                task.resume()
            }
        }
        let outcome = state.withLock { $0.outcome }
        guard let outcome else { throw RunwayError(.transport, "the transfer ended without an outcome") }
        return try outcome.get()
    }

    /// Ends the transfer with `error` unless it has already ended: the caller is released at once
    /// and the task is cancelled on the delegate queue (see the type's documentation).
    func abort(_ error: RunwayError) {
        let (task, continuation) = state.withLock { state -> (URLSessionTask?, CheckedContinuation<Void, Never>?) in
            guard !state.finished, state.abortError == nil else { return (nil, nil) }
            state.abortError = error
            // Not started yet: `run` finds the error and never starts the task.
            guard let continuation = state.continuation else { return (nil, nil) }
            state.finished = true
            state.outcome = .failure(error)
            state.continuation = nil
            // Nothing more is written (every callback finds the transfer finished): the partial
            // file is let go at once, for a download to the same destination that follows.
            sink.end()
            return (state.task, continuation)
        }
        if let task { delegateQueue.addOperation { task.cancel() } }
        continuation?.resume()
    }

    /// Whether the transfer was aborted (the delegate then leaves a redirect unanswered).
    var isAborted: Bool { state.withLock { $0.abortError != nil } }

    /// How long until the transfer has gone `limit` without a byte moving either way (zero or
    /// less: it has).
    func idleTimeLeft(of limit: Duration) -> Duration {
        let last = state.withLock { $0.lastActivity }
        return limit - (ContinuousClock.now - last)
    }

    // MARK: Delegate callbacks

    func receive(_ response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        let headers = Self.headers(of: http)
        let failure = state.withLock { state -> RunwayError? in
            guard !state.finished, state.abortError == nil else { return nil }
            state.lastActivity = .now
            state.status = http.statusCode
            state.headers = headers
            state.expectedBytes = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
            state.bytesReceived = 0
            do throws(RunwayError) {
                try Self.checkHead(status: http.statusCode, headers: headers)
                try Self.checkProtocolSwitch(status: http.statusCode, request: request)
                try sink.begin(status: http.statusCode, headers: headers, asksOwnRange: request.headers["Range"] != nil)
                return nil
            } catch {
                return error
            }
        }
        if let failure { abort(failure) }
    }

    func receive(_ data: Data) {
        let outcome = state.withLock { state -> Result<TransferProgress, RunwayError>? in
            guard !state.finished, state.abortError == nil else { return nil }
            do throws(RunwayError) {
                try sink.append(data)
            } catch {
                return .failure(error)
            }
            state.bytesReceived += Int64(data.count)
            state.lastActivity = .now
            return .success(progress(state))
        }
        switch outcome {
        case .success(let progress): request.progress?.report(progress)
        case .failure(let error): abort(error)
        case nil: break
        }
    }

    func sent(total: Int64, expected: Int64) {
        let progress = state.withLock { state -> TransferProgress in
            state.bytesSent = total
            state.lastActivity = .now
            if expected >= 0 { state.bytesToSend = expected }
            return self.progress(state)
        }
        request.progress?.report(progress)
    }

    /// The request to follow a redirect with, or `nil` to stop and return the 3xx response.
    ///
    /// A refused redirect does not cancel the task (see the type's documentation): the 3xx
    /// response completes the transfer and ``complete(error:response:)`` turns it into the
    /// recorded error. The target is read from the response's `Location` as the server wrote it,
    /// since FoundationNetworking rewrites a `file:` or `mailto:` target into a path on the same
    /// host. Credentials (`Authorization`, `Proxy-Authorization`, `Cookie`) do not follow to
    /// another origin. A 307 or 308, and a 301 or 302 of a method other than POST, sends the
    /// request's body again, as libcurl does, where URLSession can (not FoundationNetworking:
    /// there it is `.configuration`).
    func redirect(to next: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        let limit = request.options.redirects.maxRedirects
        return state.withLock { state -> URLRequest? in
            guard limit > 0, state.abortError == nil else { return nil }
            // Only what is a redirect (FoundationNetworking also follows a 305 or 306's
            // `Location`): any other 3xx is the response, as `CurlDispatcher` returns it.
            guard RedirectPolicy.isFollowed(response.statusCode) else { return nil }
            let location = response.value(forHTTPHeaderField: "Location") ?? ""
            guard let target = URL(string: location, relativeTo: response.url ?? request.url)?.absoluteURL else {
                state.redirectError = RunwayError(
                    .invalidURL, "redirect to a URL that cannot be read: \"\(RunwayError.text(forURL: location))\"")
                return nil
            }
            guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                state.redirectError = RunwayError(.unsupportedScheme, "redirect to a non-HTTP URL: \(RunwayError.text(forURL: location))")
                return nil
            }
            guard target.host?.isEmpty == false else {
                state.redirectError = RunwayError(
                    .invalidURL, "redirect to a URL without a host: \"\(RunwayError.text(forURL: location))\"")
                return nil
            }
            guard state.redirectCount < limit else {
                state.redirectError = RunwayError(.tooManyRedirects, "more than \(limit) redirects")
                return nil
            }
            state.redirectCount += 1
            var next = next
            next.url = target
            if let from = response.url ?? Optional(request.url), !from.isSameOrigin(as: target) {
                for name in ["Authorization", "Proxy-Authorization", "Cookie"] { next.setValue(nil, forHTTPHeaderField: name) }
            }
            // The redirects that keep the method, and so the body, as libcurl follows them: a 307
            // or 308, and a 301 or 302 of any method but POST (which becomes a GET).
            let keepsMethod =
                [307, 308].contains(response.statusCode) || ([301, 302].contains(response.statusCode) && request.method != .post)
            if keepsMethod, let body = request.body {
                #if canImport(FoundationNetworking)
                // FoundationNetworking sends the next request with an empty body (and the old
                // Content-Type): refused rather than sent wrong.
                state.redirectError = RunwayError(
                    .configuration,
                    "URLSessionDispatcher cannot send a request body again on a \(response.statusCode) redirect of a \(request.method) "
                        + "(FoundationNetworking sends it empty); use CurlDispatcher, or send the request to "
                        + RunwayError.text(forURL: target),
                    field: "redirects")
                return nil
                #else
                next.httpMethod = request.method.rawValue
                next.httpBody = body
                #endif
            }
            // A HEAD stays a HEAD, a 303 included, as libcurl follows it: a GET would fetch the
            // body the caller did not ask for (and could fail for its size).
            if request.method == .head {
                next.httpMethod = "HEAD"
                next.httpBody = nil
            }
            return next
        }
    }

    func complete(error: (any Error)?, response: HTTPURLResponse?) {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            let result = finish(error: error, response: response, state: &state)
            sink.end()
            state.outcome = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }

    /// How the transfer ends, once URLSession says it has; call inside `state.withLock`.
    private func finish(error: (any Error)?, response: HTTPURLResponse?, state: inout State) -> Result<Response, RunwayError> {
        if let abortError = state.abortError ?? state.redirectError {
            sink.discard()
            return .failure(abortError)
        }
        if let error {
            sink.discard()
            // FoundationNetworking fails a coding it cannot decode with an error of its own.
            do throws(RunwayError) {
                try Self.checkEncoding(of: state.headers, for: request)
            } catch {
                return .failure(error)
            }
            var failure = URLErrorMapping.runwayError(for: error, bodyIsEncoded: state.headers["Content-Encoding"] != nil)
            // A redirect was followed, so the request went out: a refused target says nothing
            // about whether the server acted on it.
            if state.redirectCount > 0 { failure.neverSent = false }
            return .failure(failure)
        }
        if state.status == 0, let response {
            state.status = response.statusCode
            state.headers = Self.headers(of: response)
        }
        do throws(RunwayError) {
            let length = try Self.checkHead(status: state.status, headers: state.headers)
            try Self.checkProtocolSwitch(status: state.status, request: request)
            try Self.checkEncoding(of: state.headers, for: request)
            try Self.checkBodyDelivered(
                status: state.status, length: length, headers: state.headers, received: state.bytesReceived, for: request)
            let (body, fileURL, completed) = try sink.finish()
            let metrics = TransferMetrics(total: ContinuousClock.now - started, redirectCount: state.redirectCount)
            // A 416 at the end of the partial file: the download is complete, as a 200 would be.
            return .success(
                Response(status: completed ? 200 : state.status, headers: state.headers, body: body, fileURL: fileURL, metrics: metrics))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Helpers

    /// What a request that leaves `Accept-Encoding` to the dispatcher asks for (``URLRequestBuilder``).
    static let acceptEncoding = "gzip, deflate"

    /// Refuses a body in a coding the request did not ask for. FoundationNetworking decodes more
    /// than it is asked for (brotli, zstd) and passes a body its decoder could not read as an
    /// empty one: a 200 with no body where the server sent five bytes.
    static func checkEncoding(of headers: HTTPHeaders, for request: Request) throws(RunwayError) {
        guard request.options.acceptCompressedResponses, request.headers["Accept-Encoding"] == nil,
            let field = headers["Content-Encoding"]
        else { return }
        for token in field.split(separator: ",") {
            let coding = token.trimmingCharacters(in: .whitespaces).lowercased()
            if coding.isEmpty || coding == "identity" || coding == "gzip" || coding == "x-gzip" || coding == "deflate" { continue }
            throw RunwayError(
                .responseInvalid, "the response is \(coding)-encoded, which was not asked for (Accept-Encoding: \(acceptEncoding))")
        }
    }

    /// Refuses a head that does not frame its body faithfully, which FoundationNetworking passes:
    /// a status outside 100–599, or a `Content-Length` that is not one number (repeated fields
    /// reach here joined by commas, and must then all be that number; RFC 9110 §8.6).
    /// - Returns: That number, or `nil` when there is no `Content-Length`.
    @discardableResult
    static func checkHead(status: Int, headers: HTTPHeaders) throws(RunwayError) -> Int64? {
        guard (100...599).contains(status) else {
            throw RunwayError(.responseInvalid, "the server answered with status \(status), outside 100–599")
        }
        guard let field = headers["Content-Length"] else { return nil }
        var length: Int64?
        for part in field.split(separator: ",", omittingEmptySubsequences: false) {
            let text = part.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let value = Int64(text), length == nil || length == value
            else {
                throw RunwayError(.responseInvalid, "the response's Content-Length is not one number: \"\(field)\"")
            }
            length = value
        }
        return length
    }

    /// Refuses a body handed over shorter than its `Content-Length` with no error, which
    /// FoundationNetworking does with the body of a redirect status that has no `Location` (a
    /// `301` with a page and nowhere to go): a cut connection fails the task, so fewer bytes here
    /// are bytes it held back, and the response would pass as a shorter one. `length` is the
    /// `Content-Length` as ``checkHead(status:headers:)`` read it from the header fields (such a
    /// response never reaches the delegate). An encoded body is counted once decoded, so it
    /// cannot be compared.
    static func checkBodyDelivered(
        status: Int, length: Int64?, headers: HTTPHeaders, received: Int64, for request: Request
    ) throws(RunwayError) {
        guard let expected = length, received < expected, request.method != .head, status >= 200, status != 204, status != 304
        else { return }
        if let coding = headers["Content-Encoding"], coding.trimmingCharacters(in: .whitespaces).lowercased() != "identity" { return }
        throw RunwayError(
            .responseInvalid,
            "FoundationNetworking handed over \(received) of the \(expected) bytes the \(status) response's Content-Length "
                + "announces (it holds back the body of a redirect status without a Location); CurlDispatcher reads it whole")
    }

    /// Refuses a `101 Switching Protocols` the request did not ask for (it has no `Upgrade`
    /// field), as `CurlDispatcher` does: what the connection carries after it is another
    /// protocol's bytes, not a response, and FoundationNetworking would hand the 101 over as the
    /// response, with those bytes as its body.
    static func checkProtocolSwitch(status: Int, request: Request) throws(RunwayError) {
        guard status == 101, request.headers["Upgrade"] == nil else { return }
        throw RunwayError(
            .responseInvalid,
            "the server switched protocols (101), which the request did not ask for: what follows is not its response "
                + "(\(request.method) \(RunwayError.text(forURL: request.url)))")
    }

    /// Progress so far; call inside `state.withLock`.
    private func progress(_ state: State) -> TransferProgress {
        let offset = sink.appendOffset
        return TransferProgress(
            bytesSent: state.bytesSent, totalBytesToSend: state.bytesToSend ?? request.body.map { Int64($0.count) },
            bytesReceived: offset + state.bytesReceived,
            totalBytesToReceive: state.expectedBytes.map { offset + $0 })
    }

    /// The response's header fields, sorted by name (Foundation keeps them in a dictionary).
    /// Foundation joins repeated fields with commas; `Set-Cookie`, which a cookie jar reads one
    /// field at a time, is split back into one field per cookie (see ``splitSetCookie(_:)``).
    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var pairs: [(String, String)] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String else { continue }
            let text = value as? String ?? "\(value)"
            if name.caseInsensitiveEquals("set-cookie") {
                pairs += splitSetCookie(text).map { (name, $0) }
            } else {
                pairs.append((name, text))
            }
        }
        // By name, keeping the order of the cookies of one field.
        let sorted = pairs.enumerated().sorted { ($0.element.0.lowercased(), $0.offset) < ($1.element.0.lowercased(), $1.offset) }
        return HTTPHeaders(sorted.map(\.element))
    }

    /// The cookies of `Set-Cookie` fields Foundation joined: split at each comma a cookie's
    /// `name=` follows, not at the comma of a date (`Expires=Wed, 21 Oct 2026 07:28:00 GMT`). A
    /// value with a comma followed by `name=` of its own (not allowed by RFC 6265) is split too:
    /// the join left no way to tell.
    static func splitSetCookie(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        var cookies: [String] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: ",") && startsCookie(bytes[(index + 1)...]) {
            cookies.append(String(decoding: bytes[start..<index], as: UTF8.self).trimmingCharacters(in: .whitespaces))
            start = index + 1
        }
        cookies.append(String(decoding: bytes[start...], as: UTF8.self).trimmingCharacters(in: .whitespaces))
        return cookies.filter { !$0.isEmpty }
    }

    /// Whether `rest`, spaces aside, starts with a name and `=`: a cookie, not the rest of a date.
    private static func startsCookie(_ rest: ArraySlice<UInt8>) -> Bool {
        let text = rest.drop { $0 == 0x20 || $0 == 0x09 }
        guard let end = text.firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ",") })
        else { return false }
        let name = text[..<end]
        return text[end] == UInt8(ascii: "=") && !name.isEmpty && !name.contains(0x20) && !name.contains(0x09)
    }
}
