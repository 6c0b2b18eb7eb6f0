import RunwayCore

/// Turns a manager's raw data into exactly what one view needs (a "reformer").
///
/// One API can feed many views (one reformer per view); many APIs can feed one view (one
/// reformer that normalises their different keys; switch on the manager it is given). The
/// reformer is picked by the caller, so the manager never knows the view:
/// ```swift
/// let rows = try manager.fetchData(with: PropertyListReformer())   // [ReformedRecord]
/// ```
/// Output can be anything: a ``ReformedRecord`` list with typed keys, a view model, a view.
public protocol Reformer {
    /// What the reformer produces.
    associatedtype Output

    /// Reforms `data`, the raw data of `manager`.
    /// - Throws: Any error. ``APIManager/fetchData(with:)`` passes a `RunwayError` on as it is
    ///   (so a reformer can say `.responseInvalid` with a `field`), and reports any other error
    ///   as `.responseInvalid` with it as the `underlying` error.
    func reform(_ data: JSON, from manager: any APIManager) throws -> Output
}
