import RunwayCore

/// What a manager does with a new call while one of its calls is in flight.
///
/// Chosen per manager (``APIManager/loadPolicy``); both the delegate path and `load()` obey it.
/// A struct over a private enum so that new policies never break a `switch` in user code.
public struct LoadPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case dropNew, cancelPrevious, shareInFlight, concurrent
    }

    private let base: Base

    /// Keep the call in flight and drop the new one (refreshing a page): the dropped call is
    /// not started; `load()` throws `.cancelled`, the delegate hears nothing for it.
    public static let dropNew = LoadPolicy(base: .dropNew)
    /// Cancel every call in flight and start the new one (filtering, search-as-you-type): the
    /// cancelled calls end with `.cancelled` and are not delivered, a call whose response is in
    /// but whose delivery still waits for the main actor (or the delivery queue) included. A
    /// new call refused before the network (its parameters invalid, the network unreachable)
    /// supersedes them too: the newest input's failure is delivered, never an older result.
    public static let cancelPrevious = LoadPolicy(base: .cancelPrevious)
    /// A call identical to one in flight joins it: one request, one landing for the delegate,
    /// the same result for every `load()`; a different call starts alongside. Identical: the
    /// same parameters, header fields (a service's common headers are read per call, so a call
    /// made after the locale changed is another), user (the service's `TokenAuthenticator`
    /// credential scope) and request options.
    public static let shareInFlight = LoadPolicy(base: .shareInFlight)
    /// Every call starts, independently.
    public static let concurrent = LoadPolicy(base: .concurrent)

    public var description: String { base.rawValue }
}
