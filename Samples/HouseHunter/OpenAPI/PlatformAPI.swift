import Foundation
import OpenAPIRuntime
import Runway
import RunwayOpenAPI

/// The platform API (OpenAPI/openapi.yaml) through the ``Client`` swift-openapi-generator made
/// from it, on the app's chain.
///
/// The generated code stays internal to this module (what it exports is this type and its
/// values), so the app depends on two calls, not on the generated types. Each operation is a call
/// of the app's pipeline under the API name the app's managers use for the same endpoint, so the
/// same policies hold: the detail is cached for three minutes and its `id` validated, the
/// login's `user` validated, and every call signed, routed by the DNS bypass and logged.
public struct PlatformAPI: Sendable {
    /// The app's API names, by operation ID (`getListingDetail` is the detail manager's `detail`).
    public static let apiNames = ["getListingDetail": "detail", "login": "login"]

    /// The platform API's base URL in the release environment (its host is routed by the DNS bypass).
    public static let serverURL = URL(string: "http://api.househunter.test/api")!

    /// One listing, as the detail operation answers it.
    public struct Listing: Sendable, Equatable {
        /// The listing's ID.
        public var id: Int
        /// `sale`, `rent` or `new`.
        public var kind: String
        /// The title.
        public var title: String
        /// The city's name.
        public var cityName: String
        /// The price, in `priceUnit`s.
        public var price: Int
        /// `total`, `month` or `m2`.
        public var priceUnit: String
    }

    /// A documented answer other than success: the status and the server's `code` and `message`.
    public struct Refusal: Error, Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The server's error code (4030: the signature does not verify; 1002: wrong password).
        public var code: Int
        /// The server's message.
        public var message: String

        /// Creates a refusal.
        public init(status: Int, code: Int, message: String) {
            self.status = status
            self.code = code
            self.message = message
        }
    }

    /// The generated client.
    let client: Client

    /// The client of the platform API at `serverURL`, sending through `pipeline`.
    public init(pipeline: Pipeline, serverURL: URL = PlatformAPI.serverURL) {
        client = Client(serverURL: serverURL, transport: RunwayTransport(pipeline: pipeline, configuration: .init(apiNames: Self.apiNames)))
    }

    /// The listing `id`, or `nil` when the server has none (404).
    /// - Throws: ``Refusal`` for a 400 or 403, `ClientError` when the call failed (its
    ///   `runwayError` says how) or the answer was not the documented one.
    public func listing(id: Int) async throws -> Listing? {
        switch try await client.getListingDetail(query: .init(id: id)) {
        case .ok(let ok):
            let listing = try ok.body.json.listing
            return Listing(
                id: listing.id, kind: listing.kind.rawValue, title: listing.title, cityName: listing.cityName, price: listing.price,
                priceUnit: listing.priceUnit.rawValue)
        case .notFound:
            return nil
        case .badRequest(let answer):
            throw Refusal(status: 400, try answer.body.json)
        case .forbidden(let answer):
            throw Refusal(status: 403, try answer.body.json)
        case .undocumented(let status, _):
            throw Refusal(status: status, code: 0, message: "undocumented status \(status)")
        }
    }

    /// Logs `user` in; returns the user the tokens are for and how long the access token lives.
    /// - Throws: ``Refusal`` for a wrong password (401, code 1002) or a bad signature (403),
    ///   `ClientError` when the call failed.
    public func logIn(user: String, password: String) async throws -> (user: String, expiresIn: Int) {
        switch try await client.login(body: .json(.init(user: user, password: password))) {
        case .ok(let ok):
            let tokens = try ok.body.json
            return (tokens.user, tokens.expiresIn)
        case .unauthorized(let answer):
            throw Refusal(status: 401, try answer.body.json)
        case .forbidden(let answer):
            throw Refusal(status: 403, try answer.body.json)
        case .undocumented(let status, _):
            throw Refusal(status: status, code: 0, message: "undocumented status \(status)")
        }
    }
}

extension PlatformAPI.Refusal {
    /// A refusal from the generated `Problem` body.
    init(status: Int, _ problem: Components.Schemas.Problem) {
        self.init(status: status, code: problem.code, message: problem.message)
    }
}
