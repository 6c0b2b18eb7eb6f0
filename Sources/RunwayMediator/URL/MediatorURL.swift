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
        let bytes = Array(string.utf8)
        let scan: URLScanner.Scan
        do { scan = try URLScanner.scan(bytes, options: options) } catch var error as MediatorError {
            error.url = string
            throw error
        }
        var query = MediatorParameters()
        do { try query.addQueryItems(of: scan, in: bytes, options: options) } catch var error as MediatorError {
            error.url = string
            throw error
        }
        scheme = scan.scheme
        host = scan.segments.first?.value ?? ""
        pathSegments = scan.segments.dropFirst().map(\.value)
        self.query = query
        fragment =
            scan.fragmentStart < bytes.count ? URLScanner.decodeLenient(bytes, scan.fragmentStart, bytes.count) : nil
    }
}
