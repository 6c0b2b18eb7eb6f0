import Foundation
import Runway
import RunwayTestServer
import Testing

/// One suite, every test parameterised over ``DispatcherUnderTest/all``; the tests live in
/// extensions, one file per concern.
@Suite("Dispatchers")
struct DispatcherSuite {}

extension DispatcherUnderTest {
    /// Sends `request` through a fresh context.
    func send(_ dispatcher: any Dispatcher, _ request: Request) async throws -> Response {
        try await dispatcher.dispatch(request, context: RequestContext())
    }
}

/// The `RunwayError` that `body` throws; records an issue if it returns or throws another type.
@discardableResult
func runwayError(
    _ body: () async throws -> Response, sourceLocation: SourceLocation = #_sourceLocation
) async -> RunwayError? {
    do {
        let response = try await body()
        Issue.record("expected a RunwayError, got status \(response.status)", sourceLocation: sourceLocation)
        return nil
    } catch let error as RunwayError {
        return error
    } catch {
        Issue.record("expected a RunwayError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Decodes `/echo`'s body.
func decodeEcho(_ response: Response) throws -> EchoResponse {
    try JSONDecoder().decode(EchoResponse.self, from: response.body)
}

/// A GET request for `url` with options changed by `configure`.
func makeRequest(
    _ url: URL, headers: HTTPHeaders = [:], configure: (inout RequestOptions) -> Void = { _ in }
) -> Request {
    makeRequest(.get, url, headers: headers, configure: configure)
}

/// A request for `url` with options changed by `configure`.
func makeRequest(
    _ method: HTTPMethod, _ url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
    configure: (inout RequestOptions) -> Void = { _ in }
) -> Request {
    var options = RequestOptions()
    configure(&options)
    return Request(method: method, url: url, headers: headers, body: body, options: options)
}
