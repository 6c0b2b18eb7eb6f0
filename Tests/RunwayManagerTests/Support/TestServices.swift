import Foundation
import Runway
import RunwaySync
import RunwayTestServer
import RunwayTesting

extension ServiceID {
    static let listings: ServiceID = "listings"
    static let secondHand: ServiceID = "second-hand"
    static let rental: ServiceID = "rental"
    static let newHome: ServiceID = "new-home"
}

/// A service at one base URL with optional extras, for tests.
struct TestService: Service {
    let id: ServiceID
    let baseURLs: BaseURLs
    var commonHeaders: HTTPHeaders = [:]
    var commonParameters: [String: JSON] = [:]
    var interceptors: [any Interceptor] = []
    var authenticator: TokenAuthenticator?
    /// A business code in the body's `code` member that means "token expired".
    var tokenExpiredCode: Int?

    init(id: ServiceID = .listings, baseURL: String = "http://listings.test/v1") {
        self.id = id
        self.baseURLs = BaseURLs(baseURL)
    }

    func error(for response: Response, json: JSON?) -> RunwayError? {
        if let tokenExpiredCode, json?["code"]?.int == tokenExpiredCode {
            return RunwayError(.needsLogin, "token expired (code \(tokenExpiredCode))", response: response)
        }
        return defaultError(for: response)
    }
}

/// An authenticator holding the token `stale`, whose refresh returns `fresh` once `gate` opens.
func staleAuthenticator(refreshedWhen gate: Gate) -> TokenAuthenticator {
    TokenAuthenticator(token: "stale") { _ in
        await gate.wait()
        return "fresh"
    }
}

/// Builds a registry around a dispatcher.
func makeRegistry(
    _ dispatcher: any Dispatcher, services: [any Service] = [TestService()], interceptors: [any Interceptor] = [],
    environment: ServiceEnvironment = .release, reachability: ReachabilityMonitor? = nil
) throws -> ServiceRegistry {
    var builder = ServiceRegistry.Builder(
        environment: environment, pipeline: Pipeline(interceptors: interceptors, dispatcher: dispatcher),
        reachability: reachability)
    for service in services { builder.register(service) }
    return try builder.build()
}

/// A stub answering every request with the JSON `body`.
func jsonStub(_ body: String, status: Int = 200) -> StubDispatcher {
    StubDispatcher(status: status, body: Data(body.utf8), headers: ["Content-Type": "application/json"])
}

/// A thread-safe list of strings, for pinning orders.
final class EventLog: Sendable {
    private let stored = Locked<[String]>([])

    func append(_ event: String) { stored.withLock { $0.append(event) } }
    var events: [String] { stored.withLock { $0 } }
}

/// A plain manager over `.listings` with a configurable policy, for tests.
final class ItemListAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName: String
    let serviceID: ServiceID
    let loadPolicy: LoadPolicy
    let method: HTTPMethod
    /// Counts the calls that reached `configure(_:params:)`, the step just before the load
    /// policy starts, joins or drops a call (under the engine's lock, without a suspension).
    let configured = Counter()

    init(
        registry: ServiceRegistry, apiName: String = "items", serviceID: ServiceID = .listings,
        policy: LoadPolicy = .concurrent, method: HTTPMethod = .get, delivery: ManagerDelivery = .inline
    ) {
        self.engine = ManagerEngine(registry: registry, delivery: delivery)
        self.apiName = apiName
        self.serviceID = serviceID
        self.loadPolicy = policy
        self.method = method
    }

    func configure(_ context: inout RequestContext, params: [String: JSON]) {
        configured.increment()
    }
}

/// When ``callsAtOnce(_:opening:once:_:)`` opens its gate.
enum GateOpening: Sendable {
    /// Once this many calls have ended (dropped or superseded calls end at once).
    case ended(Int)
    /// Once this many calls have reached the manager's `configure(_:params:)` (a call joins one
    /// in flight right after, under the engine's lock, without a suspension).
    case configured(ItemListAPIManager, Int)

    func holds(ended: Int) -> Bool {
        switch self {
        case .ended(let count): ended >= count
        case .configured(let manager, let count): manager.configured.value >= count
        }
    }
}

/// `count` calls made at once (`call(index)`), their outcomes in the order they ended.
///
/// The calls run while a server or stub holds every request at `gate`; it opens once `opening`
/// holds (the policy under test has started, joined or dropped every call), or after two
/// minutes, when the policy let through calls it should not have held back: then the
/// assertions on the outcomes fail instead of the test hanging. So no answer can come before
/// the last call is made, however slowly a loaded machine starts them.
func callsAtOnce(
    _ count: Int, opening gate: Gate, once opening: GateOpening, _ call: @escaping @Sendable (Int) async -> Result<JSON, RunwayError>
) async -> [Result<JSON, RunwayError>] {
    let ended = Counter()
    let opener = Task {
        _ = await eventually(timeout: .seconds(120)) { opening.holds(ended: ended.value) }
        gate.open()
    }
    defer { opener.cancel() }
    return await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
        for index in 0..<count {
            group.addTask {
                let result = await call(index)
                ended.increment()
                return result
            }
        }
        return await group.reduce(into: []) { $0.append($1) }
    }
}

/// A delegate that records landings; thread-safe, for `.inline` delivery.
final class RecordingDelegate: APIManagerDelegate, Sendable {
    let log: EventLog

    init(log: EventLog = EventLog()) {
        self.log = log
    }

    func managerCallAPIDidSucceed(_ manager: any APIManager) {
        log.append("delegate.success")
    }

    func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {
        log.append("delegate.fail(\(error.code))")
    }
}

/// The outcome of a load, as a value.
func outcome(_ body: @Sendable () async throws -> JSON) async -> Result<JSON, RunwayError> {
    do {
        return .success(try await body())
    } catch let error as RunwayError {
        return .failure(error)
    } catch {
        return .failure(RunwayError(.transport, "not a RunwayError: \(error)", underlying: error))
    }
}
