import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One API, as business code calls it: the discrete layer on top of the collective pipeline.
///
/// A concrete manager is a `final class` that conforms to this protocol. Only what the protocol
/// declares can be customised, and the compiler enforces it: ``engine``, ``apiName`` and
/// ``serviceID`` are required; everything else has a default. The base mechanism (``load(params:)``,
/// ``loadData(params:)``, ``cancelAll()``, ``rawData``, ``lastError``, ``isLoading``,
/// ``fetchData(with:)``, ``delegate``, ``paramSource``) lives in extensions and is not a
/// requirement, so it cannot be overridden.
/// ```swift
/// final class RentalListAPIManager: APIManager {
///     let engine = ManagerEngine()
///     let apiName = "listings/rent"
///     let serviceID: ServiceID = .rental
///     var loadPolicy: LoadPolicy { .cancelPrevious }
/// }
/// ```
///
/// ## The life of a call (the order is pinned by a test)
/// 1. Parameters: the explicit ones, else the ``paramSource``'s, else none; the service's common
///    parameters are added under them.
/// 2. ``shouldCallAPI(with:)``: `false` vetoes the call; it is **not started**.
/// 3. ``validate(params:)``: a thrown error fails the call (delivered as a failure) and the
///    network is never touched. Then reachability: unreachable fails with `.noNetwork`.
/// 4. The ``loadPolicy`` decides: drop (not started), cancel the calls in flight, join an
///    identical call in flight, or start.
/// 5. ``afterCallingAPI(with:)``, then the request goes through the app's interceptors, the
///    service's interceptors and the dispatcher.
/// 6. ``didReceiveResponse(_:)`` for any response; then the service's common error handling
///    and ``validate(response:)`` decide success or failure.
/// 7. The manager's state is updated (``isLoading``; ``rawData``, ``lastError`` and
///    ``lastResponse`` on the ``ManagerDelivery`` executor, as the delivery starts), then there
///    either
///    ``beforePerformSuccess(_:)`` → delegate success → ``afterPerformSuccess(_:)``, or
///    ``beforePerformFail(_:)`` → delegate failure → ``afterPerformFail(_:)``. A `before` hook
///    returning `false` stops the delivery: no delegate call and no `after` hook.
/// 8. `load()` returns (or throws) after step 7 has finished.
///
/// ## Calls that do not land
/// A call that is **not started** (vetoed, dropped by ``LoadPolicy/dropNew``, a `load()` from a
/// task that is already cancelled) and a call that is
/// **cancelled** (``cancelAll()``, ``LoadPolicy/cancelPrevious``, the awaiting task cancelled,
/// the manager released) are never delivered to the delegate and run no hook after
/// ``afterCallingAPI(with:)``, and leave ``rawData``, ``lastError`` and ``lastResponse`` as
/// they were, also when the response was in and the delivery waited for a busy executor;
/// `load()` throws `RunwayError` `.cancelled` whose message says which. Releasing the manager
/// cancels its calls at the dispatcher (the server sees the abort).
/// A delivery stopped by a `before` hook makes `load()` throw `.cancelled` too.
public protocol APIManager: AnyObject, Sendable {
    /// The base mechanism's state; declare it as `let engine = ManagerEngine()`. A computed
    /// `engine` (a new one on each read) fails every call with `.configuration`, before anything
    /// is sent.
    var engine: ManagerEngine { get }
    /// The API's name: its identity for the per-API policies (validation, cache, compression,
    /// retry, merging, signing scope), logs, metrics and cache keys, e.g. `"listings/rent"` or
    /// `"product.detail"`. Also its path under the service's base URL, unless ``path`` says
    /// otherwise.
    var apiName: String { get }
    /// The path under the service's base URL (default ``apiName``). Placeholders in braces are
    /// filled for each call from its parameters: `"products/{id}"` with `["id": 42]` goes to
    /// `products/42`, and `id` leaves the query or body. Each value is percent-encoded as one
    /// path segment; a missing or empty one fails the call with `.paramsInvalid` naming it,
    /// before the network. A `..` segment (`../admin`), which would leave the base URL's path,
    /// fails the call with `.invalidURL`, before the network.
    var path: String { get }
    /// The service (API provider) this API belongs to.
    var serviceID: ServiceID { get }
    /// The HTTP method (default GET). GET, HEAD and DELETE send parameters in the query,
    /// others as a JSON body.
    var method: HTTPMethod { get }
    /// What to do with a new call while one is in flight (default ``LoadPolicy/dropNew``).
    var loadPolicy: LoadPolicy { get }
    /// Transport options for this API's requests (default: the defaults).
    var requestOptions: RequestOptions { get }
    /// The decoder of typed results (``load(as:params:)``, ``APIResponse/decode(_:)``);
    /// default `nil`: the service's ``Service/decoder``.
    var decoder: JSONDecoder? { get }
    /// The encoder of typed parameters (``load(as:encoding:)``); default: a plain `JSONEncoder`.
    var encoder: JSONEncoder { get }

    /// The param validator: throw (e.g. `RunwayError.paramsInvalid(field:_:)`) to fail the call
    /// before it touches the network. Default: accepts everything.
    func validate(params: [String: JSON]) throws(RunwayError)
    /// The response validator, after the service's common error handling: check the shape and
    /// business codes. Default: an empty body fails with `.noContent` (but for `HEAD`, whose
    /// responses have none). A cached API's response
    /// is checked before it is stored as well (what the validator refuses is never stored), so
    /// one response may be validated twice: keep the validator free of side effects.
    func validate(response: APIResponse) throws(RunwayError)

    /// Per-call settings for the interceptors: values the call's `RequestContext` carries to
    /// them (a cache policy, a validation, a retry override, compression, a logger), set from
    /// the call's parameters. Runs once per call that passed ``validate(params:)``, before the
    /// ``loadPolicy`` decides whether it starts; what it sets applies to this call only.
    /// Default: nothing.
    /// ```swift
    /// func configure(_ context: inout RequestContext, params: [String: JSON]) {
    ///     context[CachePolicy.Key.self] = params["fresh"]?.bool == true ? .never : .memory(ttl: .seconds(60))
    /// }
    /// ```
    func configure(_ context: inout RequestContext, params: [String: JSON])

    /// Header fields of this call's request, on top of the service's ``Service/commonHeaders``
    /// (a name given here replaces the service's fields of that name). Runs once per call that
    /// passed ``validate(params:)``, with its parameters, so what it makes is the same on every
    /// attempt of the call: a retry, the replay after a token refresh. Give a POST or PATCH an
    /// `Idempotency-Key` here, and the retry interceptor and the token refresh may send it
    /// again. Default: none.
    /// ```swift
    /// func headers(params: [String: JSON]) -> HTTPHeaders {
    ///     ["Idempotency-Key": params["orderID"]?.string ?? UUID().uuidString]
    /// }
    /// ```
    func headers(params: [String: JSON]) -> HTTPHeaders

    /// Hook: return `false` to veto the call (it is not started). Default `true`.
    func shouldCallAPI(with params: [String: JSON]) -> Bool
    /// Hook: the call has been started with `params`. Default: nothing.
    func afterCallingAPI(with params: [String: JSON])
    /// Hook: a response arrived, before any validation. Default: nothing.
    func didReceiveResponse(_ response: Response)
    /// Hook: before the delegate hears of a success; `false` stops the delivery. Default `true`.
    func beforePerformSuccess(_ response: APIResponse) -> Bool
    /// Hook: after the delegate heard of a success. Default: nothing.
    func afterPerformSuccess(_ response: APIResponse)
    /// Hook: before the delegate hears of a failure; `false` stops the delivery. Default `true`.
    func beforePerformFail(_ error: RunwayError) -> Bool
    /// Hook: after the delegate heard of a failure. Default: nothing.
    func afterPerformFail(_ error: RunwayError)
}

extension APIManager {
    public var path: String { apiName }
    public var method: HTTPMethod { .get }
    public var loadPolicy: LoadPolicy { .dropNew }
    public var requestOptions: RequestOptions { ManagerEngine.defaultRequestOptions }
    public var decoder: JSONDecoder? { nil }
    public var encoder: JSONEncoder { plainJSONEncoder }

    public func validate(params: [String: JSON]) throws(RunwayError) {}

    public func validate(response: APIResponse) throws(RunwayError) {
        // A response to HEAD never has a body: its head is the answer.
        if response.response.body.isEmpty, method != .head {
            throw RunwayError(.noContent, "\(apiName) returned an empty body", response: response.response)
        }
    }

    public func configure(_ context: inout RequestContext, params: [String: JSON]) {}
    public func headers(params: [String: JSON]) -> HTTPHeaders { HTTPHeaders() }
    public func shouldCallAPI(with params: [String: JSON]) -> Bool { true }
    public func afterCallingAPI(with params: [String: JSON]) {}
    public func didReceiveResponse(_ response: Response) {}
    public func beforePerformSuccess(_ response: APIResponse) -> Bool { true }
    public func afterPerformSuccess(_ response: APIResponse) {}
    public func beforePerformFail(_ error: RunwayError) -> Bool { true }
    public func afterPerformFail(_ error: RunwayError) {}
}
