import Foundation

/// The JSON body of `/echo`: what the server received.
public struct EchoResponse: Codable, Sendable, Equatable {
    /// The request method.
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The raw query string, if any.
    public var query: String?
    /// The `Host` header or HTTP/2 `:authority`.
    public var authority: String?
    /// Request headers: lower-cased names, repeated fields joined with ", ".
    public var headers: [String: String]
    /// The body as UTF-8 text, when it is valid UTF-8.
    public var body: String?
    /// The body, base64-encoded.
    public var bodyBase64: String
    /// The body's length in bytes.
    public var bodyLength: Int
    /// Whether the request arrived over HTTP/2.
    public var http2: Bool
    /// The client's `address:port`.
    public var remoteAddress: String

    /// The raw body bytes.
    public var bodyData: Data? { Data(base64Encoded: bodyBase64) }
}
