/// A URL read the way the mediator reads it: scheme, host (the target), decoded path segments,
/// query values (repeated keys become arrays), fragment.
///
/// ```swift
/// let url = try MediatorURL("APP://Listing/a%2Fb/?tag=x&tag=y")
/// url.scheme        // "app"
/// url.host          // "listing"
/// url.pathSegments  // ["a/b"]
/// url.query.strings("tag")  // ["x", "y"]
/// ```
public struct MediatorURL: Sendable {
    /// The scheme, lowercased.
    public let scheme: String
    /// The host, percent-decoded and lowercased.
    public let host: String
    /// The path split on `/`, then each segment percent-decoded; empty segments skipped.
    public let pathSegments: [String]
    /// The query items; a repeated key holds a `[String]`.
    public let query: MediatorParameters
    /// The fragment after `#`, percent-decoded.
    public let fragment: String?

    /// Reads `string`; malformed input is `.malformedURL`.
    public init(_ string: String, options: MediatorURLOptions = MediatorURLOptions()) throws {
        var text = string
        let parts = try text.withUTF8 { bytes -> (String, [String], MediatorParameters, String?) in
            let scan: URLScanner.Scan
            do { scan = try URLScanner.scan(bytes, options: options) } catch var error as MediatorError {
                error.url = string
                throw error
            }
            var query = MediatorParameters()
            try query.addQueryItems(of: scan, in: bytes, options: options)
            let fragment =
                scan.fragmentStart < bytes.count ? URLScanner.decodeLenient(bytes, scan.fragmentStart, bytes.count) : nil
            return (scan.scheme, scan.segments.map(\.value), query, fragment)
        }
        scheme = parts.0
        host = parts.1.first ?? ""
        pathSegments = Array(parts.1.dropFirst())
        query = parts.2
        fragment = parts.3
    }
}
