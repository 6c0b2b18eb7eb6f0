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
