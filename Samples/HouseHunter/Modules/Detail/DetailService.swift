import Runway

extension ServiceID {
    /// The shared listing-detail API.
    public static let detail: ServiceID = "detail"
}

/// The listing-detail API, run by the platform team for every kind of listing.
public struct DetailService: Service {
    /// The service's identifier.
    public let id: ServiceID = .detail
    /// The base URL in each environment.
    public let baseURLs = BaseURLs(
        develop: "http://api.dev.househunter.test/api/listings", releaseCandidate: "http://api.rc.househunter.test/api/listings",
        release: "http://api.househunter.test/api/listings")

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if response.status == 404 {
            return RunwayError(.serverError, json?["message"]?.string ?? "no such listing", response: response)
        }
        return defaultError(for: response)
    }
}

/// How the detail API may be cached, for the app's response cache.
public enum DetailCaching {
    /// The API name the cache policy is registered under.
    public static let apiName = ListingDetailAPIManager.name
    /// How long a detail stays fresh: three minutes.
    public static let ttl: Duration = .seconds(180)
}
