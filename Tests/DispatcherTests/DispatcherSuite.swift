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
