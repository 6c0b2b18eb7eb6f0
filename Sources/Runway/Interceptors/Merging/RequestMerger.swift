import RunwayCore

/// How one merge-capable API combines several calls into one request to a batch endpoint, and
/// splits the combined response back: what you give ``RequestMergingInterceptor`` per API.
///
/// ```swift
/// /// `GET item?id=N` calls merged into `POST items/batch {"ids": [...]}`, answered `{"items": [...]}`.
/// struct ItemMerger: RequestMerger {
///     let batchURL: URL
///     func combine(_ requests: [Request]) throws -> Request {
///         let ids = requests.map { RequestParameters($0).values(for: "id").first ?? "" }
///         let body = JSON.object(["ids": .array(ids.map { .string($0) })]).serializedData()
///         var headers = requests[0].headers          // the callers' own (Authorization...): all alike
///         headers["Content-Type"] = "application/json"
///         return Request(method: .post, url: batchURL, headers: headers, body: body)
///     }
///     func split(_ response: Response, count: Int) throws -> [Result<Response, RunwayError>] {
///         let items = try JSON(parsing: response.body)["items"]?.array ?? []
///         return items.map { .success(Response(status: 200, headers: response.headers, body: $0.serializedData(),
///                                               metrics: response.metrics, origin: response.origin)) }
///     }
/// }
/// ```
/// The contract:
/// - ``combine(_:)`` receives the queued requests in arrival order (at least two, at most
///   ``maxMerged``) and returns one request; throwing fails each of those calls with
///   `.invalidRequest`.
/// - ``split(_:count:)`` receives the combined response when its status is 2xx and returns one
///   result per request, **in the same order**; a result may be a failure of its own (one item
///   not found). Throwing, or returning a different number of results, fails each call with
///   `.responseInvalid` — never a crash, never a caller left waiting.
public protocol RequestMerger: Sendable {
    /// The most calls merged into one request (default 50, at least 2); more wait for the next.
    var maxMerged: Int { get }

    /// One request that carries all of `requests`, in order.
    func combine(_ requests: [Request]) throws -> Request

    /// One result per merged request, in the order ``combine(_:)`` received them.
    /// - Parameters:
    ///   - response: The combined request's response (2xx).
    ///   - count: How many requests were merged: the number of results expected.
    func split(_ response: Response, count: Int) throws -> [Result<Response, RunwayError>]
}

extension RequestMerger {
    /// 50.
    public var maxMerged: Int { 50 }
}
