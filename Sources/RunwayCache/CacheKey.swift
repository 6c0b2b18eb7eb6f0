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
        let url = request.url
        // Fields separated by NUL, which none of them can contain unescaped.
        var text = context.serviceID ?? ""
        for part in [
            environment, context.apiName ?? "", request.method.rawValue, url.scheme ?? "", url.host ?? "",
            url.port.map(String.init) ?? "", url.path(percentEncoded: true), RequestParameters(request).canonicalForm,
        ] {
            text += "\u{0}"
            text += part
        }
        var hasher = SHA256()
        hasher.update(data: Array(text.utf8))
        if let body = request.body, !body.isEmpty,
            !(request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false)
        {
            hasher.update(data: Array(SHA256.hash(data: body)))
        }
        bytes = Data(hasher.finalize())
    }

    /// Lower-case hex.
    public var description: String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
