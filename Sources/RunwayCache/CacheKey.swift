import Crypto
import Foundation
import Runway

/// Identifies one cached response: a SHA-256 of service, environment, API, method, URL and
/// canonical parameters.
///
/// Parameters are in canonical order (``RequestParameters/canonicalForm``), so `?a=1&b=2` and
/// `?b=2&a=1` share an entry; a non-form body contributes its SHA-256. Headers (and so any
/// signature or nonce) are not part of the key.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: Data

    init(bytes: Data) {
        self.bytes = bytes
    }

    /// The key of `request` in `environment`, for the API and service named in `context`.
    public init(_ request: Request, context: RequestContext, environment: String) {
        var hasher = SHA256()
        func add(_ text: String) {
            hasher.update(data: Data(text.utf8))
            hasher.update(data: [0])
        }
        add(context.serviceID ?? "")
        add(environment)
        add(context.apiName ?? "")
        add(request.method.rawValue)
        let url = request.url
        add("\(url.scheme ?? "")://\(url.host ?? ""):\(url.port.map(String.init) ?? "")\(url.path(percentEncoded: true))")
        add(RequestParameters(request).canonicalForm)
        if let body = request.body, !body.isEmpty,
            !(request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false)
        {
            hasher.update(data: Data(SHA256.hash(data: body)))
        }
        bytes = Data(hasher.finalize())
    }

    /// Lower-case hex.
    public var description: String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
