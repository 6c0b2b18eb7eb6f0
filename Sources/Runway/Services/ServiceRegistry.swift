import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every ``Service`` of the app, the environment, and the app's pipeline: built once at
/// start-up and frozen.
///
/// ```swift
/// var builder = ServiceRegistry.Builder(environment: .release, pipeline: pipeline)
/// builder.register(RentalService())
/// builder.register(NewHomeService())
/// try ServiceRegistry.bootstrap(builder.build())
/// ```
/// API managers use the bootstrapped registry unless their ``ManagerEngine`` was given one
/// (tests give each manager its own).
public struct ServiceRegistry: Sendable {
    /// The environment every service's base URL is taken for.
    public let environment: ServiceEnvironment
    /// The app's pipeline; each service's chain is this one with the service's interceptors
    /// appended.
    public let pipeline: Pipeline
    /// The monitor consulted before each call; when it reports unreachable, managers fail with
    /// `.noNetwork` without touching the network.
    public let reachability: ReachabilityMonitor?
    let entries: [ServiceID: ServiceEntry]

    init(environment: ServiceEnvironment, pipeline: Pipeline, reachability: ReachabilityMonitor?, entries: [ServiceID: ServiceEntry]) {
        self.environment = environment
        self.pipeline = pipeline
        self.reachability = reachability
        self.entries = entries
    }

    /// The IDs of the registered services.
    public var serviceIDs: Set<ServiceID> { Set(entries.keys) }

    /// The service registered under `id`, if any.
    public func service(_ id: ServiceID) -> (any Service)? { entries[id]?.service }

    /// The base URL `id` resolves to in this registry's environment.
    public func baseURL(of id: ServiceID) -> URL? { entries[id]?.baseURL }

    func entry(_ id: ServiceID) throws(RunwayError) -> ServiceEntry {
        guard let entry = entries[id] else {
            throw RunwayError(.configuration, "no service \"\(id)\" is registered", stage: .service(id))
        }
        return entry
    }
}

extension ServiceRegistry {
    /// Written once by `bootstrap`.
    private static let installed = Locked<ServiceRegistry?>(nil)

    /// Installs the process-wide registry; allowed once.
    /// - Throws: `RunwayError` `.configuration` if a registry is already installed.
    public static func bootstrap(_ registry: ServiceRegistry) throws(RunwayError) {
        try installed.withLock { (installed) throws(RunwayError) in
            guard installed == nil else {
                throw RunwayError(.configuration, "ServiceRegistry.bootstrap was already called")
            }
            installed = registry
        }
    }

    /// The process-wide registry, or `nil` before ``bootstrap(_:)``.
    public static var shared: ServiceRegistry? {
        installed.withLock { $0 }
    }
}
