import Runway

/// One listing's detail. Identical calls in flight share one request; the app caches the
/// answers (``DetailCaching``).
public final class ListingDetailAPIManager: APIManager {
    /// The API name.
    public static let name = "detail"

    /// The base mechanism's state.
    public let engine = ManagerEngine()
    /// The API name, `detail`.
    public let apiName = ListingDetailAPIManager.name
    /// The detail service.
    public let serviceID: ServiceID = .detail
    /// Identical calls in flight share one request.
    public var loadPolicy: LoadPolicy { .shareInFlight }

    /// Creates the manager.
    public init() {}

    /// A listing id is a positive number.
    public func validate(params: [String: JSON]) throws(RunwayError) {
        guard let id = params["id"]?.int, id > 0 else {
            throw .paramsInvalid(field: "id", "a listing id is a positive number")
        }
    }

    /// The answer must carry `listing.id`.
    public func validate(response: APIResponse) throws(RunwayError) {
        guard response.json["listing"]?["id"]?.int != nil else {
            throw .responseInvalid("the detail API answered without listing.id", response: response)
        }
    }
}
