import Foundation
import Runway
import RunwayActionLog
import RunwayCurl
import RunwaySync
import RunwayTestServer

extension ServiceID {
    static let analytics: ServiceID = "analytics"
}

/// The analytics service of the tests: the test server's `/v1`, with a common header.
struct AnalyticsService: Service {
    let id: ServiceID = .analytics
    let baseURLs: BaseURLs
    var commonHeaders: HTTPHeaders { ["X-Client": "runway-tests"] }
}

/// A fresh folder under the temporary directory, removed by ``remove()``.
struct TestFolder {
    let url = FileManager.default.temporaryDirectory.appending(path: "runway-actions-\(UUID().uuidString)")

    var outbox: URL { url.appending(path: "actions.sqlite") }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A registry with the analytics service on `server`, through `interceptors` and libcurl.
func analyticsRegistry(_ server: TestServer, interceptors: [any Interceptor] = []) throws -> ServiceRegistry {
    try analyticsRegistry(server.url("/v1"), interceptors: interceptors)
}

/// The analytics service at `base`: for a host that refuses connections, say.
func analyticsRegistry(_ base: URL, interceptors: [any Interceptor] = []) throws -> ServiceRegistry {
    var builder = ServiceRegistry.Builder(
        environment: .release, pipeline: Pipeline(interceptors: interceptors, dispatcher: CurlDispatcher()))
    builder.register(AnalyticsService(baseURLs: BaseURLs(base.absoluteString)))
    return try builder.build()
}

/// The configuration most tests use: batches of 30, no interval, a fast backoff. The request
/// timeout is long: a test that counts requests or failures must not see an upload time out
/// because the in-process server waited for a thread on a loaded machine (the tests of
/// timeouts set their own).
func testConfiguration(_ folder: TestFolder, registry: ServiceRegistry, events: EventRecorder? = nil) -> ActionLogger.Configuration {
    var configuration = ActionLogger.Configuration(file: folder.outbox, serviceID: .analytics)
    configuration.registry = registry
    configuration.flushInterval = nil
    configuration.initialBackoff = .milliseconds(20)
    configuration.maxBackoff = .milliseconds(200)
    configuration.requestOptions = RequestOptions(connectTimeout: .seconds(60), timeout: .seconds(120))
    if let events { configuration.onEvent = { events.append($0) } }
    return configuration
}

/// A logger on `registry` whose failed uploads back off from `initialBackoff` up to
/// `maxBackoff`, the events it reports, and one batch (30 actions, `n` 0-29) recorded.
func loggerWithOneBatch(
    _ folder: TestFolder, registry: ServiceRegistry, initialBackoff: Duration, maxBackoff: Duration
) throws -> (ActionLogger, EventRecorder) {
    let events = EventRecorder()
    var configuration = testConfiguration(folder, registry: registry, events: events)
    configuration.initialBackoff = initialBackoff
    configuration.maxBackoff = maxBackoff
    let actions = try ActionLogger(configuration)
    for n in 0..<30 { actions.record("tap", attributes: ["n": String(n)]) }
    return (actions, events)
}

/// Every event a logger reported, thread-safe.
final class EventRecorder: Sendable {
    private let stored = Locked<[ActionLogEvent]>([])

    func append(_ event: ActionLogEvent) { stored.withLock { $0.append(event) } }

    var events: [ActionLogEvent] { stored.withLock { $0 } }

    func of(_ kind: ActionLogEvent.Kind) -> [ActionLogEvent] { events.filter { $0.kind == kind } }

    func total(_ kind: ActionLogEvent.Kind) -> Int { of(kind).reduce(0) { $0 + $1.count } }
}

/// The outcome of an async call, as a value.
func outcome(_ body: () async throws -> Void) async -> RunwayError? {
    do {
        try await body()
        return nil
    } catch let error as RunwayError {
        return error
    } catch {
        return RunwayError(.transport, "not a RunwayError: \(error)", underlying: error)
    }
}

extension ActionBatch.Record {
    /// The `n` attribute the tests number actions with.
    var n: Int? { attributes["n"].flatMap { Int($0) } }
}
