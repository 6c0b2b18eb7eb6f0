/// Does the I/O for every request: the single, collective end of the interceptor chain.
///
/// Implementations must
/// - call ``Request/validate()`` first, so bad input is a typed error before any I/O;
/// - throw only ``RunwayError`` (a `.cancelled` one when the task is cancelled);
/// - stop the transfer promptly when the calling task is cancelled, so the server sees the
///   connection abort or stream reset;
/// - finish ``Request/progress`` when the transfer ends, however it ends.
///
/// Runway ships `CurlDispatcher` (libcurl multi interface, module `RunwayCurl`),
/// `URLSessionDispatcher` (module `RunwayURLSession`) and `StubDispatcher` (module
/// `RunwayTesting`).
public protocol Dispatcher: Sendable {
    /// The name used in errors and logs.
    var name: String { get }

    /// Sends the request and returns the response; any status code is a response, not an error.
    func dispatch(_ request: Request, context: RequestContext) async throws -> Response
}

extension Dispatcher {
    public var name: String { String(describing: Self.self) }
}
