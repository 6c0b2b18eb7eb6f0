import Foundation
import Runway
import RunwayTestServer
import Testing

// Helpers the dispatcher tests of every module share (package: test targets only).

/// The `RunwayError` that `body` throws; records an issue if it returns or throws another type.
@discardableResult
package func runwayError(
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

/// The `RunwayError` that `body` throws, or `nil` if it returns: for calls that may
/// legitimately finish first, such as a race against a short timeout. Records an issue if
/// `body` throws another type.
package func runwayErrorUnlessItSucceeds(
    _ body: () async throws -> Response, sourceLocation: SourceLocation = #_sourceLocation
) async -> RunwayError? {
    do {
        _ = try await body()
        return nil
    } catch let error as RunwayError {
        return error
    } catch {
        Issue.record("expected a RunwayError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Decodes `/echo`'s body.
package func decodeEcho(_ response: Response) throws -> EchoResponse {
    try JSONDecoder().decode(EchoResponse.self, from: response.body)
}

/// A GET request for `url` with options changed by `configure`.
package func makeRequest(
    _ url: URL, headers: HTTPHeaders = [:], configure: (inout RequestOptions) -> Void = { _ in }
) -> Request {
    makeRequest(.get, url, headers: headers, configure: configure)
}

/// A request for `url` with options changed by `configure`.
package func makeRequest(
    _ method: HTTPMethod, _ url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
    configure: (inout RequestOptions) -> Void = { _ in }
) -> Request {
    var options = RequestOptions()
    configure(&options)
    return Request(method: method, url: url, headers: headers, body: body, options: options)
}
