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
/// ending wins: an abort decides the error even though `URLSession` then reports "cancelled".
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
    }

    let request: Request
    private let started = ContinuousClock.now
    private let state = Locked(State())
    private let sink: ResponseSink

    init(request: Request, sink: ResponseSink) {
        self.request = request
        self.sink = sink
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
                sink.discard()
                continuation.resume()
            } else {
                task.resume()
            }
        }
        let outcome = state.withLock { $0.outcome }
        guard let outcome else { throw RunwayError(.transport, "the transfer ended without an outcome") }
        return try outcome.get()
    }

    /// Ends the transfer with `error` unless it has already ended, and cancels the task.
    func abort(_ error: RunwayError) {
        let task: URLSessionTask? = state.withLock { state in
            guard !state.finished, state.abortError == nil else { return nil }
            state.abortError = error
            return state.task
        }
        task?.cancel()
    }

    // MARK: Delegate callbacks

    func receive(_ response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        let headers = Self.headers(of: http)
        let failure = state.withLock { state -> RunwayError? in
            guard !state.finished, state.abortError == nil else { return nil }
            state.status = http.statusCode
            state.headers = headers
            state.expectedBytes = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
            do throws(RunwayError) {
                try sink.begin(status: http.statusCode, headers: headers)
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
            if expected >= 0 { state.bytesToSend = expected }
            return self.progress(state)
        }
        request.progress?.report(progress)
    }

    /// The request to follow a redirect with, or `nil` to stop and return the 3xx response.
    ///
    /// A refused redirect does not cancel the task: swift-corelibs-foundation traps if the task
    /// is cancelled while it waits for this answer. The 3xx response completes the transfer and
    /// ``complete(error:response:)`` turns it into the recorded error.
    func redirect(to next: URLRequest) -> URLRequest? {
        let limit = request.options.redirects.maxRedirects
        return state.withLock { state -> URLRequest? in
            guard limit > 0, state.abortError == nil else { return nil }
            guard let scheme = next.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                state.redirectError = RunwayError(.unsupportedScheme, "redirect to a non-HTTP URL: \(next.url?.absoluteString ?? "?")")
                return nil
            }
            guard state.redirectCount < limit else {
                state.redirectError = RunwayError(.tooManyRedirects, "more than \(limit) redirects")
                return nil
            }
            state.redirectCount += 1
            return next
        }
    }

    func complete(error: (any Error)?, response: HTTPURLResponse?) {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            let result = finish(error: error, response: response, state: &state)
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
            return .failure(URLErrorMapping.runwayError(for: error))
        }
        if state.status == 0, let response {
            state.status = response.statusCode
            state.headers = Self.headers(of: response)
        }
        do throws(RunwayError) {
            let (body, fileURL) = try sink.finish()
            let metrics = TransferMetrics(total: ContinuousClock.now - started, redirectCount: state.redirectCount)
            return .success(Response(status: state.status, headers: state.headers, body: body, fileURL: fileURL, metrics: metrics))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Helpers

    /// Progress so far; call inside `state.withLock`.
    private func progress(_ state: State) -> TransferProgress {
        let offset = sink.appendOffset
        return TransferProgress(
            bytesSent: state.bytesSent, totalBytesToSend: state.bytesToSend ?? request.body.map { Int64($0.count) },
            bytesReceived: offset + state.bytesReceived,
            totalBytesToReceive: state.expectedBytes.map { offset + $0 })
    }

    /// The response's header fields, sorted by name (Foundation keeps them in a dictionary).
    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var pairs: [(String, String)] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String else { continue }
            pairs.append((name, value as? String ?? "\(value)"))
        }
        pairs.sort { $0.0.lowercased() < $1.0.lowercased() }
        return HTTPHeaders(pairs)
    }
}
