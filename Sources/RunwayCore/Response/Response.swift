#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP response as it comes back up the interceptor chain.
public struct Response: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields of the final response (after redirects), in order.
    public var headers: HTTPHeaders
    /// The body, decompressed; empty when it was streamed to ``fileURL`` or is read from
    /// ``bodyStream``.
    public var body: Data
    /// Where the body was written, for downloads.
    public var fileURL: URL?
    /// The body as it arrives, for a request with ``Request/streamsResponseBody`` set; `nil` for
    /// a buffered response. Read it once, to its end or until you cancel (see
    /// ``ResponseBodyStream``).
    public var bodyStream: ResponseBodyStream?
    /// Timings and connection facts of the transfer that produced this response.
    public var metrics: TransferMetrics
    /// Where the response came from: the network, a cache, a stub.
    public var origin: ResponseOrigin

    /// Creates a response.
    public init(
        status: Int,
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        fileURL: URL? = nil,
        bodyStream: ResponseBodyStream? = nil,
        metrics: TransferMetrics = TransferMetrics(),
        origin: ResponseOrigin = .network
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.fileURL = fileURL
        self.bodyStream = bodyStream
        self.metrics = metrics
        self.origin = origin
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// Where a response came from.
///
/// A struct over a name so that interceptors in other modules can add origins.
public struct ResponseOrigin: Sendable, Hashable, CustomStringConvertible {
    /// A short name, as shown in logs.
    public let name: String

    public init(_ name: String) {
        self.name = name
    }

    public static let network = ResponseOrigin("network")
    public static let memoryCache = ResponseOrigin("memory-cache")
    public static let diskCache = ResponseOrigin("disk-cache")
    public static let stub = ResponseOrigin("stub")

    public var description: String { name }
}
