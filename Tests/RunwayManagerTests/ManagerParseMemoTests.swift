import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

/// A manager's engine keeps the last body it parsed and its JSON, so a cache hit or an
/// unchanged refresh is not parsed again; it must only ever answer for the same bytes.
@Suite struct ManagerParseMemoTests {
    @Test func eachLoadGetsTheJSONOfItsOwnBody() async throws {
        // Same length, different bytes; repeated; a body that does not parse.
        let bodies = [#"{"v":1}"#, #"{"v":2}"#, #"{"v":2}"#, #"{"v":1}"#, #"{"v":1"#, #"{"v":1}"#]
        let stub = ScriptedBodies(bodies)
        let manager = ItemListAPIManager(registry: try makeRegistry(StubDispatcher { _ in stub.next() }))
        for body in bodies {
            let expected = try? JSON(parsing: body)
            let loaded = try? await manager.load()
            #expect(loaded == expected, "\(body)")
        }
    }
}

/// Hands out the given bodies in turn.
private final class ScriptedBodies: Sendable {
    private let bodies: [String]
    private let counter = Counter()
    init(_ bodies: [String]) { self.bodies = bodies }
    func next() -> Response {
        Response(
            status: 200, headers: ["Content-Type": "application/json"], body: Data(bodies[(counter.increment() - 1) % bodies.count].utf8))
    }
}
