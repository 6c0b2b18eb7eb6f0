import Hummingbird
import NIOCore

/// The request context of every ``TestServer`` route, built-in or added by a test.
///
/// Besides Hummingbird's core storage it carries the channel the request came on (to close a
/// connection abruptly) and the server's ``TestServerStats`` (to record aborts).
public struct TestRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The channel the request arrived on: the TCP connection for HTTP/1.1, the stream for HTTP/2.
    public let channel: any Channel
    /// The counters of the server handling this request; set by the server before any route runs.
    public internal(set) var stats: TestServerStats

    /// Creates the context from Hummingbird's source.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
        // Replaced by `StatsMiddleware` before any route sees the context.
        self.stats = TestServerStats()
    }

    /// Whether the request arrived on an HTTP/2 stream.
    ///
    /// An HTTP/2 stream channel's parent is the connection, whose parent is the listening
    /// socket; an HTTP/1.1 connection's parent is the listening socket itself.
    public var isHTTP2: Bool { channel.parent?.parent != nil }

    /// The TCP connection the request arrived on.
    public var connection: any Channel { isHTTP2 ? (channel.parent ?? channel) : channel }

    /// Resets the connection (HTTP/1.1, with `SO_LINGER` 0) or the stream (HTTP/2) at once,
    /// for routes that simulate a broken peer; throw afterwards to end the handler.
    public func abortConnection() async {
        await BuiltInRoutes.abortConnection(channel)
    }

    /// The client's address as `host:port`, or an empty string when unknown.
    public var remoteAddress: String {
        guard let address = connection.remoteAddress else { return "" }
        return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
    }
}

/// Puts the server's stats into every context, counts the request, and applies the artificial
/// response delay.
struct StatsMiddleware: RouterMiddleware {
    typealias Context = TestRequestContext

    let stats: TestServerStats
    let responseDelay: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.stats = stats
        stats.recordRequest(path: request.uri.path, http2: context.isHTTP2)
        if responseDelay > .zero {
            try await Task.sleep(for: responseDelay)
        }
        return try await next(request, context)
    }
}
