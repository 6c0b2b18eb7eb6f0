import Runway

extension ServiceID {
    /// The second-hand team's API.
    public static let secondHand: ServiceID = "second-hand"
    /// The rental team's API.
    public static let rental: ServiceID = "rental"
    /// The new-home team's API.
    public static let newHome: ServiceID = "new-home"
}

/// The second-hand team's API: answers 200 with a non-zero `code` and a `message` on failure.
public struct SecondHandService: Service {
    /// The service's identifier.
    public let id: ServiceID = .secondHand
    /// The base URL in each environment.
    public let baseURLs = BaseURLs(
        develop: "http://esf.dev.househunter.test/esf/v2", releaseCandidate: "http://esf.rc.househunter.test/esf/v2",
        release: "http://esf.househunter.test/esf/v2")
    /// Sent with every call to this service.
    public var commonHeaders: HTTPHeaders { ["X-Team": "second-hand"] }

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if let code = json?["code"]?.int, code != 0 {
            return RunwayError(.serverError, "second-hand API error \(code): \(json?["message"]?.string ?? "")", response: response)
        }
        return defaultError(for: response)
    }
}

/// The rental team's API: answers 4xx with `{"error": "..."}` on failure.
public struct RentalService: Service {
    /// The service's identifier.
    public let id: ServiceID = .rental
    /// The base URL in each environment.
    public let baseURLs = BaseURLs(
        develop: "http://rent.dev.househunter.test/rent/v1", releaseCandidate: "http://rent.rc.househunter.test/rent/v1",
        release: "http://rent.househunter.test/rent/v1")

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if response.status >= 400, response.status != 401, let message = json?["error"]?.string {
            return RunwayError(.serverError, "rental API: \(message)", response: response)
        }
        return defaultError(for: response)
    }
}

/// The new-home team's API: answers 200 with `{"status": "error", "reason": "..."}` on failure.
public struct NewHomeService: Service {
    /// The service's identifier.
    public let id: ServiceID = .newHome
    /// The base URL in each environment.
    public let baseURLs = BaseURLs(
        develop: "http://xf.dev.househunter.test/xf", releaseCandidate: "http://xf.rc.househunter.test/xf",
        release: "http://xf.househunter.test/xf")

    /// Creates the service.
    public init() {}

    /// The team's error convention, mapped to `RunwayError`.
    public func error(for response: Response, json: JSON?) -> RunwayError? {
        if json?["status"]?.string == "error" {
            return RunwayError(.serverError, "new-home API: \(json?["reason"]?.string ?? "error")", response: response)
        }
        return defaultError(for: response)
    }
}

/// The module's namespace. (A type named like its module: the generated registration must
/// still name `Listing::ListingTarget`, which `Listing.ListingTarget` would not.)
public enum Listing {
    /// Every service the listing module calls (the three teams'), for the app to register at start-up.
    public static var services: [any Service] { [SecondHandService(), RentalService(), NewHomeService()] }
}
