import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Records every call into a ``HARRecorder``, observing only: it never changes a request or a
/// response.
///
/// Each call is one entry: the request as the application built it (before compression and
/// signing, as the log shows it) and the final response, or the failure (status 0 and an
/// `_error`, as browsers write one). A response a cache gave is marked `_fromCache` (`memory` or
/// `disk`, as Chrome marks it) and has no network phases. A streamed response body
/// (`Response.bodyStream`) is the caller's to read: its entry is kept when the body ends, with
/// its size and, when it failed or was left unread, the error.
///
/// ## Where it belongs
/// Next to logging, before the cache (see `DefaultOrder`, which names it `har`): before the
/// cache, so hits are recorded, and outside retry, so a call is one entry with its final outcome
/// and the phases of the attempt that produced it.
public struct HARInterceptor: Interceptor {
    /// Where the calls go.
    public let recorder: HARRecorder

    /// `"har"`: the name in errors, logs and `DefaultOrder`.
    public var name: String { "har" }

    /// Creates an interceptor that records into `recorder`.
    public init(recorder: HARRecorder) {
        self.recorder = recorder
    }

    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        let started = Date()
        let start = ContinuousClock.now
        let builder = HAREntryBuilder(redaction: recorder.redaction, bodyLimit: recorder.bodyLimit)
        do {
            var response = try await next(request, context)
            let elapsed = ContinuousClock.now - start
            guard let stream = response.bodyStream else {
                let entry = builder.entry(
                    for: request, context: context, started: started, elapsed: elapsed, response: response, failure: nil)
                recorder.record(entry, started: started)
                return response
            }
            // A streamed body is the caller's to read: the entry is kept when it ends, with the
            // bytes the caller got and how it ended. The observer holds the head, not the stream,
            // so a stream dropped unread still aborts its transfer.
            var head = response
            head.bodyStream = nil
            let recorder = self.recorder
            response.bodyStream = stream.observingEnd { [head] end in
                let entry = builder.entry(
                    for: request, context: context, started: started, elapsed: elapsed, response: head, failure: end.error,
                    streamed: end)
                recorder.record(entry, started: started)
            }
            return response
        } catch {
            let failure = RunwayError.attributing(error, to: .interceptor(name), fallback: .transport)
            let entry = builder.entry(
                for: request, context: context, started: started, elapsed: ContinuousClock.now - start, response: failure.response,
                failure: failure)
            recorder.record(entry, started: started)
            throw error
        }
    }
}

extension Interceptor where Self == HARInterceptor {
    /// Records each call into `recorder` (see ``HARInterceptor``). Belongs near the front of
    /// the chain, before the cache.
    public static func har(_ recorder: HARRecorder) -> HARInterceptor {
        HARInterceptor(recorder: recorder)
    }
}
