import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An API provider: where its APIs live and what every call to it shares.
///
/// An app talks to several teams' servers (second-hand, rental, new-home
/// listings), each with its own base URL per environment, keys, headers and error handling.
/// Each is a `Service`; API managers name theirs by `ServiceID`. Only ``id`` and ``baseURLs``
/// are required; everything else has a default.
/// ```swift
/// struct RentalService: Service {
///     let id: ServiceID = .rental
///     let baseURLs = BaseURLs(develop: "https://dev.rent.example.com",
///                             releaseCandidate: "https://rc.rent.example.com",
///                             release: "https://rent.example.com")
///     var commonHeaders: HTTPHeaders { ["X-Client": "househunter"] }
///     func error(for response: Response, json: JSON?) -> RunwayError? {
///         if json?["code"]?.int == 1001 { return RunwayError(.needsLogin, "token expired", response: response) }
///         return defaultError(for: response)
///     }
/// }
/// ```
public protocol Service: Sendable {
    /// The identifier managers use to pick this service.
    var id: ServiceID { get }
    /// The base URL in each environment; API names are appended to it as a path.
    var baseURLs: BaseURLs { get }
    /// Headers sent with every call to this service (default: none). Read for each call, so a
    /// value that changes (a locale, an app version) goes out as it is when the call is made.
    var commonHeaders: HTTPHeaders { get }
    /// Parameters sent with every call; a manager's own parameters win on a clash (default:
    /// none). Read for each call, as ``commonHeaders`` is.
    var commonParameters: [String: JSON] { get }
    /// Interceptors run for this service's calls only, after the app's interceptors and before
    /// the dispatcher (default: none).
    var interceptors: [any Interceptor] { get }
    /// Keeps this service's token and refreshes it once when calls find it expired (default: none).
    var authenticator: TokenAuthenticator? { get }
    /// The proxy this service's calls go through (default `nil`: none). Read once, when the
    /// registry is built, and given to each call whose `RequestOptions.proxy` is `nil`; a
    /// manager or caller that sets its own (`Proxy.direct` included) wins.
    /// ```swift
    /// var proxy: Proxy? { .socks5(host: "127.0.0.1", port: 1080) }
    /// ```
    var proxy: Proxy? { get }
    /// The client certificate this service's calls present when its server asks for one
    /// (mutual TLS; default `nil`: none). Read once, when the registry is built, and given to
    /// each call whose `TLSOptions.clientCertificate` is `nil`; a manager or caller that sets
    /// its own wins.
    /// ```swift
    /// var clientCertificate: ClientCertificate? { .pkcs12File("/etc/app/client.p12", password: secret) }
    /// ```
    var clientCertificate: ClientCertificate? { get }
    /// The common error handling: the error a response stands for, or `nil` when it is a success.
    ///
    /// Map business codes here (for example a body code meaning "token expired" to
    /// `.needsLogin`, which also triggers the ``authenticator``). The default is
    /// ``defaultError(for:)``.
    /// - Parameters:
    ///   - response: The response as the chain returned it.
    ///   - json: The body parsed as JSON, or `nil` when it is empty or not JSON.
    func error(for response: Response, json: JSON?) -> RunwayError?
    /// The decoder of this service's typed results, unless a manager sets its own
    /// (``APIManager/decoder``): where the service's dates and key style are said once.
    /// Default: a plain `JSONDecoder`.
    /// ```swift
    /// let decoder: JSONDecoder = {
    ///     let decoder = JSONDecoder()
    ///     decoder.keyDecodingStrategy = .convertFromSnakeCase
    ///     decoder.dateDecodingStrategy = .iso8601
    ///     return decoder
    /// }()
    /// ```
    var decoder: JSONDecoder { get }
}

/// The default decoder and encoder, shared: they are never mutated, and decoding or encoding
/// through one is safe from any thread.
let plainJSONDecoder = JSONDecoder()
let plainJSONEncoder = JSONEncoder()

extension Service {
    public var commonHeaders: HTTPHeaders { [:] }
    public var commonParameters: [String: JSON] { [:] }
    public var interceptors: [any Interceptor] { [] }
    public var authenticator: TokenAuthenticator? { nil }
    public var proxy: Proxy? { nil }
    public var clientCertificate: ClientCertificate? { nil }
    public var decoder: JSONDecoder { plainJSONDecoder }

    public func error(for response: Response, json: JSON?) -> RunwayError? {
        defaultError(for: response)
    }

    /// The status-code mapping every service starts from: 401 is `.needsLogin`, any other
    /// status of 400 or more is `.serverError`, and a redirect that reached the call unfollowed
    /// (a 3xx other than 304: redirects are off by default; ``RedirectInterceptor`` follows those
    /// to the service's own origin, `RequestOptions.redirects` has the dispatcher follow them) is
    /// `.responseInvalid`, never a success whose body a reformer would read as the API's; the
    /// response is kept in the error.
    public func defaultError(for response: Response) -> RunwayError? {
        switch response.status {
        case 401:
            RunwayError(.needsLogin, "HTTP 401 from service \(id)", response: response)
        case 400...:
            RunwayError(.serverError, "HTTP \(response.status) from service \(id)", response: response)
        case 300..<400 where response.status != 304:
            RunwayError(
                .responseInvalid,
                "HTTP \(response.status) from service \(id): a redirect"
                    + (response.headers["Location"].map { " to \($0.prefix(200))" } ?? "")
                    + ", not followed (RedirectInterceptor, RequestOptions.redirects)",
                response: response)
        default:
            nil
        }
    }
}

extension RunwayError.Stage {
    /// A service's common handling (error mapping, token refresh).
    public static func service(_ id: ServiceID) -> RunwayError.Stage {
        RunwayError.Stage(kind: "service", name: id.rawValue)
    }
}

extension RequestContext {
    /// The service sending the call: set by the ``ServiceRegistry`` on every call a service
    /// sends (an ``APIManager``'s, `send(api:of:)`), `nil` on a call sent through a bare
    /// `Pipeline`. Interceptors read how it maps responses to errors (``Service/error(for:json:)``):
    /// the cache keeps no business error that came with status 200.
    public var service: (any Service)? {
        get { (serviceObject as? ServiceReference)?.service }
        set { serviceObject = newValue.map(ServiceReference.init) }
    }

    /// Sets ``service`` to the service of `entry`, shared by reference: no copy of the service
    /// (an existential) per call.
    mutating func setService(of entry: ServiceEntry) {
        serviceObject = entry.reference
    }
}

/// A service, shared by reference.
final class ServiceReference: Sendable {
    let service: any Service

    init(_ service: any Service) {
        self.service = service
    }
}
