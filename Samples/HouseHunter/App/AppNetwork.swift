import Detail
import Foundation
import Logging
import Runway
import RunwayCache
import RunwayCompression
import RunwayCurl
import RunwayDNSBypass
import RunwayHAR
import RunwayLogging
import RunwaySigning

/// The network half of the composition root: the DNS bypass, the interceptor chain in
/// `DefaultOrder`, and the service registry, bootstrapped once for the process.
struct AppNetwork: Sendable {
    let pipeline: Pipeline
    let bypass: DNSBypass
    let cache: ResponseCache
    let registry: ServiceRegistry
    /// Every call, for the HAR file `--har` names; `nil` without it.
    let recorder: HARRecorder?
    /// The file `--har` names.
    let harFile: URL?

    /// The interceptors by name, in order, ending with the dispatcher.
    var chainDescription: String {
        (pipeline.interceptors.map(\.name) + [pipeline.dispatcher.name]).joined(separator: " -> ")
    }

    /// Builds the chain for the server at `server` (its first address `endpoint`), probes the
    /// addresses, and bootstraps the process-wide ``ServiceRegistry``.
    static func start(server: URL, endpoint: String, options: AppOptions) async throws -> AppNetwork {
        let timeout = options.requestTimeout
        let curl = CurlDispatcher(configuration: .init(userAgent: "HouseHunter/1.0"))
        let signing = try SigningInterceptor.signing(secret: options.secret)
        var quick = RequestOptions()
        quick.timeout = min(timeout, .seconds(2))
        quick.connectTimeout = min(timeout, .seconds(2))
        // The IP-list fetch and the pings bypass the chain's DNS step (they name addresses
        // themselves) but are signed like everything else.
        let signed = SignedDispatcher(pipeline: Pipeline(interceptors: [RequestDefaults(timeout: timeout), signing], dispatcher: curl))

        let hosts = SampleSetup.hostNames
        let bypass = try DNSBypass(
            .init(
                hosts: Dictionary(uniqueKeysWithValues: hosts.map { ($0, [endpoint]) }),
                ipListSource: IPListSource(url: server.appending(path: "ip-list"), dispatcher: signed, options: quick),
                probe: .httpPing(path: "/ping", scheme: "http", samples: 1, dispatcher: signed, options: quick),
                probeTimeout: min(timeout, .seconds(2)), perAddressConnectTimeout: min(timeout, .seconds(1)), fallsBackToDNS: false))
        await bypass.start()

        let cache = try ResponseCache(
            environment: SampleSetup.environment.description,
            policies: [DetailCaching.apiName: .memory(ttl: DetailCaching.ttl)])
        var interceptors: [any Interceptor] = [
            RequestDefaults(timeout: timeout),
            .logging(try logger(level: options.logLevel)),
            try validation(),
            cache.interceptor,
            try .retry(maxAttempts: 3, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1)),
            try .compression(threshold: 512, scope: .services([.actions])),
            signing,
            .dnsBypass(bypass),
        ]
        // --har: a recorder right after logging, where DefaultOrder puts it (cache hits are recorded).
        let recorder = options.harFile == nil ? nil : HARRecorder()
        if let recorder, let logging = interceptors.firstIndex(where: { $0.name == "logging" }) {
            interceptors.insert(HARInterceptor.har(recorder), at: logging + 1)
        }
        let misplaced = DefaultOrder.misplaced(in: interceptors)
        guard misplaced.isEmpty else {
            throw RunwayError(.configuration, "the interceptor chain is out of order: \(misplaced.joined(separator: "; "))")
        }
        let pipeline = Pipeline(interceptors: interceptors, dispatcher: curl)

        var builder = ServiceRegistry.Builder(environment: SampleSetup.environment, pipeline: pipeline)
        for service in SampleSetup.services { builder.register(service) }
        let registry = try builder.build()
        try ServiceRegistry.bootstrap(registry)
        return AppNetwork(
            pipeline: pipeline, bypass: bypass, cache: cache, registry: registry, recorder: recorder,
            harFile: options.harFile.map { URL(fileURLWithPath: $0) })
    }

    /// Writes every recorded call to the `--har` file, as HAR 1.2; nothing without `--har`.
    /// - Throws: `RunwayError` `.fileIO` when the file cannot be written.
    func writeHAR() throws {
        guard let recorder, let harFile else { return }
        try recorder.write(to: harFile)
        Console.error("house-hunter: \(recorder.count) calls written to \(harFile.path) (HAR 1.2)")
    }

    /// Parameter rules checked before anything is sent (the managers check what they must too).
    static func validation() throws -> ValidationInterceptor {
        let page = [ParameterRule("page", .type(.integer), .range(1...100)), ParameterRule("p", .type(.integer), .range(1...100))]
        return try .validation([
            "houses": APIValidation(
                parameters: [ParameterRule("city", .required, .length(1...8)), ParameterRule("page_size", .type(.integer), .range(1...50))]
                    + page,
                response: ResponseRule(contentType: "application/json", json: .object(["code": .integer]))),
            "rentals": APIValidation(
                parameters: [ParameterRule("city", .required, .length(1...8)), ParameterRule("pageSize", .type(.integer), .range(1...50))]
                    + page),
            "projects/search": APIValidation(
                parameters: [ParameterRule("cityCode", .required, .length(1...8)), ParameterRule("size", .type(.integer), .range(1...50))]
                    + page),
            DetailCaching.apiName: APIValidation(parameters: [ParameterRule("id", .required, .type(.integer), .range(1...1_000_000_000))]),
            "login": APIValidation(parameters: [ParameterRule("user", .required, .length(1...64))]),
        ])
    }

    /// A logger writing to stderr at `level`; `critical` (the default) keeps the terminal quiet.
    static func logger(level: String) throws -> Logger {
        guard let parsed = Logger.Level(rawValue: level) else {
            throw RunwayError(.configuration, "unknown log level '\(level)'", field: "logLevel")
        }
        var logger = Logger(label: "househunter.network") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = parsed
        return logger
    }

    /// What the bypass knows about `address` (`ip:port`): whether it is the fastest one.
    func note(for address: String) -> String? {
        guard !address.isEmpty else { return nil }
        for endpoints in bypass.routes.values {
            guard let rank = endpoints.firstIndex(where: { $0.description == address }) else { continue }
            return rank == 0 ? "fastest of \(endpoints.count)" : "#\(rank + 1) of \(endpoints.count)"
        }
        return nil
    }
}
