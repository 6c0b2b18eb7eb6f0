import RunwayCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceRegistry {
    /// Collects services at start-up; ``build()`` checks them and freezes the registry.
    public struct Builder: Sendable {
        /// The environment base URLs are taken for.
        public var environment: ServiceEnvironment
        /// The app's pipeline (interceptors shared by every service, and the dispatcher).
        public var pipeline: Pipeline
        /// Consulted before every call when set (see ``ServiceRegistry/reachability``).
        public var reachability: ReachabilityMonitor?
        private var services: [any Service] = []

        /// Starts a registry for `environment` whose calls go through `pipeline`.
        public init(environment: ServiceEnvironment, pipeline: Pipeline, reachability: ReachabilityMonitor? = nil) {
            self.environment = environment
            self.pipeline = pipeline
            self.reachability = reachability
        }

        /// Adds a service.
        public mutating func register(_ service: any Service) {
            services.append(service)
        }

        /// Checks every service and returns the frozen registry.
        /// - Throws: `RunwayError` `.configuration` for a duplicate ID, an empty ID, or a base
        ///   URL (in any environment, not only the chosen one) that is not an absolute `http(s)`
        ///   URL with a host; `RunwayError.field` names the service and environment.
        public func build() throws(RunwayError) -> ServiceRegistry {
            var entries: [ServiceID: ServiceEntry] = [:]
            for service in services {
                let id = service.id
                guard !id.rawValue.isEmpty else {
                    throw RunwayError(.configuration, "a service has an empty ID", field: "id")
                }
                guard entries[id] == nil else {
                    throw RunwayError(.configuration, "service \"\(id)\" is registered twice", stage: .service(id), field: "id")
                }
                var chosen: URL?
                for environment in ServiceEnvironment.all {
                    let url = try Self.checkedBaseURL(service.baseURLs[environment], service: id, environment: environment)
                    if environment == self.environment { chosen = url }
                }
                guard let chosen else {
                    throw RunwayError(.configuration, "no base URL for \(self.environment)", stage: .service(id))
                }
                var chain = pipeline.interceptors
                if let authenticator = service.authenticator {
                    // Before the app's per-attempt interceptors (retry, compression, signing, DNS
                    // bypass): the replay after a refresh is signed again with a fresh nonce and
                    // the new token is inside the signature.
                    let slot = chain.firstIndex { $0 is any PerAttemptInterceptor } ?? chain.endIndex
                    chain.insert(TokenRefreshInterceptor(service: service, authenticator: authenticator), at: slot)
                }
                chain += service.interceptors
                if let authenticator = service.authenticator {
                    chain.insert(CredentialScopeInterceptor(authenticator: authenticator), at: 0)
                }
                entries[id] = ServiceEntry(
                    service: service, baseURL: chosen, pipeline: Pipeline(interceptors: chain, dispatcher: pipeline.dispatcher))
            }
            return ServiceRegistry(environment: environment, pipeline: pipeline, reachability: reachability, entries: entries)
        }

        private static func checkedBaseURL(_ text: String, service: ServiceID, environment: ServiceEnvironment) throws(RunwayError) -> URL {
            let field = "\(service).baseURLs.\(environment)"
            do {
                try Request.checkURLText(text, what: "base URL")
                try Request.checkAuthorityText(text, what: "base URL")
                if let url = URL(string: text), url.host != nil { try Request.checkHostAndPort(of: url, absolute: url.absoluteString) }
            } catch {
                throw RunwayError(.configuration, error.message, stage: .service(service), field: field)
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty,
                url.query == nil, url.fragment == nil
            else {
                throw RunwayError(
                    .configuration, "base URL \"\(text)\" is not an absolute http(s) URL without query",
                    stage: .service(service), field: field)
            }
            // The URL parser takes any digits for a port; a socket takes 65535 at most.
            if let port = url.port, !(1...65535).contains(port) {
                throw RunwayError(
                    .configuration, "base URL \"\(text)\" has port \(port), outside 1-65535", stage: .service(service), field: field)
            }
            return url
        }
    }
}
