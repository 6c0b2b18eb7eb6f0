import RunwayCore

/// Merges calls to the same API that arrive while one is in flight into one combined request,
/// then splits the combined response back to each caller: a last-resort connection
/// optimisation. Opt-in per API, with a ``RequestMerger`` that knows the API's batch endpoint.
///
/// ```swift
/// let pipeline = Pipeline(interceptors: [
///     logging, validation, cache,
///     try .merging(["item": ItemMerger(batchURL: itemsBatchURL)]),   // after the cache, before retry and signing
///     .retry(try RetryPolicy(maxAttempts: 3, nonIdempotentAPIs: ["item"])),   // the batch POST only reads
///     signing,
/// ], dispatcher: CurlDispatcher())
/// ```
/// For an API with a merger (matched on `RequestContext.apiName`, one queue per service and
/// caller: calls are combined only when their method, headers, options and
/// `RequestContext.credentialScope` are the same, trace-context headers aside):
/// 1. When nothing of that API is in flight, the call goes on alone, unchanged.
/// 2. Calls that arrive while one is in flight wait. When it ends, the waiting calls (up to
///    ``RequestMerger/maxMerged``) are combined with ``RequestMerger/combine(_:)`` into **one**
///    request that goes down the rest of the chain (so it is retried, compressed, signed like any
///    call: retried by its own method, so a `POST` batch only when its API is in
///    `RetryPolicy.nonIdempotentAPIs` or it carries an `Idempotency-Key`); one waiting call goes
///    on alone. Calls arriving meanwhile wait for the next round.
/// 3. A 2xx combined response is split with ``RequestMerger/split(_:count:)`` and each caller
///    gets its own result.
///
/// Failures are per caller and typed, never a crash or a caller left waiting:
/// - cancelling one waiting call ends only that call (`.cancelled`); the combined request goes on
///   for the others and is cancelled only when all of its callers have gone;
/// - a combined request that throws fails each of its callers with that error; one answered with
///   a non-2xx status fails each with `.serverError` (the response attached);
/// - `combine` throwing is `.invalidRequest`; `split` throwing or returning the wrong number of
///   results is `.responseInvalid`.
///
/// Other APIs pass straight through. Calls with no API name, and calls that stream their
/// response body (`Request.streamsResponseBody`) or their request body (`Request.bodyStream`),
/// are never merged.
///
/// ## Where it belongs
/// After the cache (a hit never waits in the queue) and before retry, compression and signing,
/// so the combined request is retried, compressed and signed as what goes on the wire:
/// `… → cache → merging → retry → compression → signing → …`.
public struct RequestMergingInterceptor: Interceptor {
    /// The merger per API name.
    public let mergers: [String: any RequestMerger]
    private let lanes = MergeLanes()

    /// `"merging"`: the name in errors and logs.
    public var name: String { "merging" }

    /// Creates the interceptor.
    /// - Parameter mergers: The merger of each merge-capable API, by API name.
    /// - Throws: `RunwayError` `.configuration` for an empty API name or a merger whose
    ///   ``RequestMerger/maxMerged`` is below 2.
    public init(_ mergers: [String: any RequestMerger]) throws(RunwayError) {
        for (api, merger) in mergers {
            guard !api.isEmpty else {
                throw RunwayError(.configuration, "a request merger is registered for an empty API name", stage: .interceptor("merging"))
            }
            guard merger.maxMerged >= 2 else {
                throw RunwayError(
                    .configuration, "the merger of \(api) has maxMerged \(merger.maxMerged); it must be at least 2",
                    stage: .interceptor("merging"), field: api)
            }
        }
        self.mergers = mergers
    }

    /// How many calls of `api` (on `serviceID`, if calls carry one) wait for the request in flight.
    public func waitingCount(api: String, serviceID: ServiceID? = nil) -> Int {
        lanes.waitingCount(service: serviceID, api: api)
    }

    /// Sends the call alone, or queues it to be merged (see ``RequestMergingInterceptor``).
    public func intercept(_ request: Request, context: RequestContext, next: Pipeline.Next) async throws -> Response {
        // A streamed body is read once, by its caller: it cannot be split between calls.
        guard !request.streamsResponseBody, request.bodyStream == nil, let api = context.apiName, let merger = mergers[api] else {
            return try await next(request, context)
        }
        let key = MergeLanes.Key(request, context: context, api: api)
        let id = lanes.makeID()
        let admission = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lanes.admit(key, MergeLane.Waiter(id: id, request: request, context: context, next: next, continuation: continuation))
            }
        } onCancel: {
            lanes.cancel(key, id: id)
        }
        switch admission {
        case .sendAlone:
            defer { lanes.finished(key, merger: merger) }
            return try await next(request, context)
        case .done(let result):
            return try result.get()
        }
    }
}

extension Interceptor where Self == RequestMergingInterceptor {
    /// Merges calls to the listed APIs that arrive while one is in flight (see
    /// ``RequestMergingInterceptor``). Belongs after the cache and before retry.
    /// - Throws: `RunwayError` `.configuration` for an empty API name or `maxMerged` below 2.
    public static func merging(_ mergers: [String: any RequestMerger]) throws(RunwayError) -> RequestMergingInterceptor {
        try RequestMergingInterceptor(mergers)
    }
}
