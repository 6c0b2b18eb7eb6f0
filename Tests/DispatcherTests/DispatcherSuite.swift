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

/// Sends `request` through a fresh context and reads a streamed body to its end, so that a
/// failure found in the body is thrown here as one found in the head is.
func sendReadingTheBody(_ dispatcher: any Dispatcher, _ request: Request) async throws -> Response {
    let response = try await dispatcher.dispatch(request, context: RequestContext())
    guard let stream = response.bodyStream else { return response }
    for try await _ in stream {}
    return response
}
