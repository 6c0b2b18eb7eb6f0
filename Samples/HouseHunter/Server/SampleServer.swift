import Foundation
import Hummingbird
import RunwaySigning
import RunwayTestServer

/// HouseHunter's API server: the three listing teams' APIs, detail, login with expiring tokens,
/// the action-log upload and the DNS-bypass endpoints, on several loopback addresses at once.
///
/// Every address serves the same API from the same state, each with its own delay, so the app's
/// DNS bypass has a real choice to make. Every request must carry a valid signature (HMAC-SHA256,
/// checked by ``SignatureVerifier``); gzip is spoken both ways.
/// ```swift
/// let server = try await SampleServer.start(.init(secret: secret, hostNames: ["api.househunter.test"]))
/// print(server.url, server.endpoints)     // http://127.0.0.1:40211  ["127.0.0.1:40211", "127.0.0.2:40213", ...]
/// await server.shutdown()
/// ```
/// Each address is a ``TestServer`` (Hummingbird in-process, graceful shutdown through a
/// service group) without its built-in test endpoints.
public final class SampleServer: Sendable {
    /// One loopback address and how long every request to it waits before it is handled.
    public struct Address: Sendable, Equatable {
        /// The IP address to bind, e.g. `127.0.0.2`.
        public var host: String
        /// The artificial latency of this address.
        public var delay: Duration

        /// Creates an address.
        public init(_ host: String, delay: Duration) {
            self.host = host
            self.delay = delay
        }
    }

    /// What the server serves and how.
    public struct Configuration: Sendable {
        /// The addresses, the first being the one the app is pointed at; by default
        /// 127.0.0.1 (150 ms), 127.0.0.2 (1 ms) and 127.0.0.3 (400 ms), so the fastest is not
        /// the one the app was given.
        public var addresses: [Address]
        /// The port of the first address; 0 takes a free one (the others always do).
        public var port: Int
        /// The signing secret shared with the app.
        public var secret: String
        /// The host names the IP list hands out (the services' hosts).
        public var hostNames: [String]
        /// How long an access token lives.
        public var tokenLifetime: Duration
        /// How much longer a filtered list takes than a plain one.
        public var filterDelay: Duration
        /// User names and passwords.
        public var users: [String: String]
        /// The time access tokens are issued and checked at: the system clock, or a test's.
        public var now: @Sendable () -> Date

        /// Creates a configuration; see each property for the defaults.
        public init(
            addresses: [Address] = Configuration.defaultAddresses, port: Int = 0, secret: String, hostNames: [String],
            tokenLifetime: Duration = .seconds(60), filterDelay: Duration = .milliseconds(800),
            users: [String: String] = ["demo": "househunter"], now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.addresses = addresses
            self.port = port
            self.secret = secret
            self.hostNames = hostNames
            self.tokenLifetime = tokenLifetime
            self.filterDelay = filterDelay
            self.users = users
            self.now = now
        }

        /// 127.0.0.1 (150 ms), 127.0.0.2 (1 ms), 127.0.0.3 (400 ms).
        public static let defaultAddresses = [
            Address("127.0.0.1", delay: .milliseconds(150)), Address("127.0.0.2", delay: .milliseconds(1)),
            Address("127.0.0.3", delay: .milliseconds(400)),
        ]
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// One server per address, in the order of ``Configuration/addresses``.
    public let servers: [TestServer]
    /// The action-log uploads received.
    public let actionLog: ActionLogStore
    /// Users and sessions.
    public let accounts: AccountStore

    private init(configuration: Configuration, servers: [TestServer], actionLog: ActionLogStore, accounts: AccountStore) {
        self.configuration = configuration
        self.servers = servers
        self.actionLog = actionLog
        self.accounts = accounts
    }

    /// `http://<first address>:<port>`: where the app is pointed.
    public var url: URL { servers[0].baseURL }

    /// Every address as `ip:port`, in configuration order.
    public var endpoints: [String] { servers.map { "\($0.host):\($0.port)" } }

    /// Requests received for `path` on every address together.
    public func requestCount(path: String) -> Int {
        servers.reduce(0) { $0 + $1.stats.requests(path: path) }
    }

    /// Starts a server on every address and returns once all of them listen.
    /// - Throws: `RunwayError` `.configuration` for an empty secret or no address; whatever
    ///   binding throws (the others are shut down first).
    public static func start(_ configuration: Configuration) async throws -> SampleServer {
        guard !configuration.addresses.isEmpty else { throw SampleServerError("no address to listen on") }
        let verifier = try SignatureVerifier.hmacSHA256(secret: configuration.secret)
        let actionLog = ActionLogStore()
        let accounts = AccountStore(users: configuration.users, tokenLifetime: configuration.tokenLifetime, now: configuration.now)
        let endpoints = EndpointList()
        let hostNames = configuration.hostNames
        let routes: TestServer.Routes = { router in
            let api = router.group().add(middleware: SignatureCheck(verifier: verifier))
            InfrastructureAPI.add(to: api) { Dictionary(uniqueKeysWithValues: hostNames.map { ($0, endpoints.all) }) }
            ListingAPIs.add(to: api, filterDelay: configuration.filterDelay)
            AccountAPI.add(to: api, store: accounts)
            ActionLogAPI.add(to: api, store: actionLog)
        }
        var servers: [TestServer] = []
        do {
            for (index, address) in configuration.addresses.enumerated() {
                servers.append(
                    try await TestServer.start(
                        host: address.host, http2: false, responseDelay: address.delay, port: index == 0 ? configuration.port : 0,
                        builtInRoutes: false, routes: routes))
            }
        } catch {
            for server in servers { await server.shutdown() }
            throw error
        }
        endpoints.set(servers.map { "\($0.host):\($0.port)" })
        return SampleServer(configuration: configuration, servers: servers, actionLog: actionLog, accounts: accounts)
    }

    /// Stops every address, closing their connections.
    public func shutdown() async {
        for server in servers { await server.shutdown() }
    }
}

/// A failure of the sample server itself.
public struct SampleServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    init(_ description: String) { self.description = description }
}

/// The `ip:port` list of the running servers, known only once they are bound.
private final class EndpointList: Sendable {
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var endpoints: [String] = []

    var all: [String] { lock.withLock { endpoints } }

    func set(_ list: [String]) { lock.withLock { endpoints = list } }
}
