import Crypto
import Foundation
import Runway

/// The text a request's HMAC signature covers, built the same way by the signing client and by
/// ``SignatureVerifier`` on the server.
///
/// Seven lines, joined by `\n`:
/// ```
/// RUNWAY-HMAC-SHA256
/// GET                                  method, upper-case
/// /v1/listings/rent                    path, each segment re-encoded per RFC 3986
/// city=Shanghai&page=2                 query and form parameters, sorted, RFC 3986-encoded
/// e3b0c442...b855                      SHA-256 of the body, lower-case hex
/// 1763772000                           timestamp, Unix seconds
/// 9f1c...                              nonce
/// ```
/// followed by the key ID line (empty when none). Reordering query parameters does not change
/// it; changing any value, the method, the path, the body, the timestamp or the nonce does.
public struct CanonicalRequest: Sendable, Equatable {
    /// The first line, naming the algorithm.
    public static let algorithm = "RUNWAY-HMAC-SHA256"

    /// The upper-case method.
    public var method: String
    /// The path, normalised.
    public var path: String
    /// ``RequestParameters/canonicalForm`` of the query and form parameters.
    public var parameters: String
    /// The SHA-256 of the body, lower-case hex.
    public var bodyHash: String
    /// Unix seconds.
    public var timestamp: String
    /// The one-time nonce.
    public var nonce: String
    /// The key ID, or empty.
    public var keyID: String

    /// Builds the canonical form from the raw parts of a request, as a server receives them.
    /// - Parameters:
    ///   - method: The method token.
    ///   - percentEncodedPath: The path as on the wire (no query).
    ///   - percentEncodedQuery: The query as on the wire, without `?`.
    ///   - contentType: The `Content-Type` header (form bodies contribute parameters).
    ///   - body: The body bytes as received.
    public init(
        method: String, percentEncodedPath: String, percentEncodedQuery: String?, contentType: String?,
        body: Data?, timestamp: String, nonce: String, keyID: String = ""
    ) {
        self.method = method.uppercased()
        self.path = Self.normalise(path: percentEncodedPath)
        self.parameters = RequestParameters(percentEncodedQuery: percentEncodedQuery, contentType: contentType, body: body)
            .canonicalForm
        self.bodyHash = Self.hexSHA256(body ?? Data())
        self.timestamp = timestamp
        self.nonce = nonce
        self.keyID = keyID
    }

    /// Builds the canonical form of a client request.
    public init(_ request: Request, timestamp: String, nonce: String, keyID: String = "") {
        self.init(
            method: request.method.rawValue, percentEncodedPath: request.url.path(percentEncoded: true),
            percentEncodedQuery: request.url.query(percentEncoded: true), contentType: request.headers["Content-Type"],
            body: request.body, timestamp: timestamp, nonce: nonce, keyID: keyID)
    }

    /// The text that is signed.
    public var text: String {
        [Self.algorithm, method, path, parameters, bodyHash, timestamp, nonce, keyID].joined(separator: "\n")
    }

    /// Decodes each path segment and re-encodes it per RFC 3986, so `/a%7eb` and `/a~b` agree;
    /// an empty path is `/`.
    static func normalise(path: String) -> String {
        guard !path.isEmpty else { return "/" }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { RequestParameters.encode($0.removingPercentEncoding ?? String($0)) }
            .joined(separator: "/")
    }

    static func hexSHA256(_ data: Data) -> String {
        SHA256.hash(data: data).hexString
    }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        for byte in self {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
