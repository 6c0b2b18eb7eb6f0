import RunwayCore

/// The one landing point of an API manager: exactly one method for success, one for failure.
///
/// A manager holds its delegate **weakly** (a released view controller is never kept alive by a
/// call in flight, and a delegate gone at landing time simply hears nothing). The methods run on
/// the manager's ``ManagerDelivery`` executor, the main actor by default, so a view controller
/// conforms with an isolated conformance:
/// ```swift
/// extension ListingsViewController: @MainActor APIManagerDelegate {
///     func managerCallAPIDidSucceed(_ manager: any APIManager) {
///         rows = (try? manager.fetchData(with: ListingReformer())) ?? []
///     }
///     func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {
///         showBanner(error.message)
///     }
/// }
/// ```
/// Read the data from the manager (``APIManager/fetchData(with:)``), not from the call.
public protocol APIManagerDelegate: AnyObject {
    /// A call of `manager` succeeded; its raw data is in ``APIManager/rawData``.
    func managerCallAPIDidSucceed(_ manager: any APIManager)
    /// A call of `manager` failed with `error` (also kept in ``APIManager/lastError``).
    func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError)
}

/// Where a manager's parameters come from when `load()`/`loadData()` is called without any.
///
/// Held weakly and asked synchronously, on the calling task, at the moment the call is made
/// (a form screen returns what the user typed).
public protocol APIManagerParamSource: AnyObject {
    /// The parameters for the next call of `manager`.
    func params(for manager: any APIManager) -> [String: JSON]
}
