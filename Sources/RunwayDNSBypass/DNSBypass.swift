import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends requests for some hosts straight to the fastest of a list of known IP addresses,
/// skipping DNS, with the host name kept for SNI, `Host` and certificate checks.
///
/// Mobile DNS is slow and sometimes wrong; the answer is to keep the servers' addresses
/// locally, measure each at start-up and use the fastest. Build one at start-up, start it, and
/// register its interceptor:
/// ```swift
/// let bypass = try DNSBypass(.init(
///     hosts: ["api.example.com": ["203.0.113.7", "198.51.100.9"]],
///     ipListSource: IPListSource(url: ipListURL, dispatcher: curl),
///     storeFile: cachesDirectory.appendingPathComponent("runway-addresses.json"),
///     probe: .httpPing(path: "/ping", dispatcher: curl)))
/// await bypass.start()
/// let pipeline = Pipeline(dispatcher: curl) { .dnsBypass(bypass) }
/// ```
/// - ``start()`` loads the stored list, fetches a new one when the last fetch is older than
///   the refresh interval (a day), and probes every address concurrently.
/// - The interceptor routes each request to the best address through
///   `RequestOptions.connectOverrides`; a failed connection demotes the address and the
///   request moves to the next one, all within the request's connect timeout.
/// - ``followReachability(of:)`` re-probes whenever a `ReachabilityMonitor` sees the network
///   come back; or call ``reachabilityChanged()`` yourself, or ``probe()`` whenever.
///
/// Thread-safe: state is a value (`RouteTable`) changed under a lock.
public final class DNSBypass: Sendable {
    /// The configuration in force.
    public let configuration: Configuration
    private let configured: [String: [Endpoint]]
    private let store: AddressStore?
    private let state: Locked<State>

    /// Creates a bypass; nothing is probed or fetched until ``start()``.
    /// - Throws: `RunwayError` `.configuration` (wrapping a ``DNSBypassError``) for an empty
    ///   address list, an address that is not an IP, a bad host name, a refresh interval under
    ///   a minute or a non-positive timeout.
    public init(_ configuration: Configuration) throws(RunwayError) {
        self.configured = try configuration.validated()
        self.configuration = configuration
        self.store = configuration.storeFile.map(AddressStore.init(url:))
        var table = RouteTable()
        for (host, endpoints) in configured { table.setAddresses(endpoints, for: host) }
        self.state = Locked(State(table: table))
    }

    // MARK: State

    struct State: Sendable {
        var table: RouteTable
        var lastFetch: Date?
        var fetching = false
        var fetched: [String: [Endpoint]] = [:]
        var problems: [DNSBypassError] = []
    }

    // MARK: Reading

    /// The addresses for `host` (in any case, with or without the trailing dot of a fully
    /// qualified name), best first; empty when the host is not bypassed.
    public func endpoints(for host: String) -> [Endpoint] {
        endpoints(forKey: Self.key(host))
    }

    /// The addresses for a host already in its ``key(_:)`` form (the interceptor's path).
    func endpoints(forKey key: String) -> [Endpoint] {
        state.withLock { $0.table.endpoints(for: key) }
    }

    /// The name a host is known by here: lower case, without the trailing dot of a fully
    /// qualified name (`API.Test.` and `api.test` are one host), and an internationalized name in
    /// the ASCII form a URL carries it in (`bücher.test` is `xn--bcher-kva.test`).
    static func key(_ host: String) -> String {
        // Most names are their own key (ASCII without capitals or a trailing dot): kept as they
        // are, without making a new string for every request.
        if host.utf8.last != UInt8(ascii: "."), host.allBytes({ $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) {
            return host
        }
        let name = host.allBytes { $0 < 0x80 } ? host : asciiForm(host) ?? host
        let lowered = name.lowercased()
        return lowered.utf8.last == UInt8(ascii: ".") ? String(lowered.dropLast()) : lowered
    }

    /// The ASCII form (IDNA: each label with other letters in Punycode, `xn--…`) of an
    /// internationalized host name, as the URL parser makes a URL's host, so a configured
    /// `bücher.test` matches a request to `https://bücher.test/`. `nil` when the name holds an
    /// ASCII character no host name has (the parser would read `ü@evil.test` as a user and a
    /// host) or does not convert.
    private static func asciiForm(_ name: String) -> String? {
        let hostBytes = name.allBytes { byte in
            byte >= 0x80 || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard hostBytes, let converted = URL(string: "http://" + name + "/")?.host, converted.allBytes({ $0 < 0x80 }) else {
            return nil
        }
        return converted
    }

    /// Every bypassed host and its addresses, best first.
    public var routes: [String: [Endpoint]] {
        state.withLock { $0.table.ordered }
    }

    /// Problems seen so far that did not fail a request (corrupt store, failed fetch), oldest first.
    public var problems: [DNSBypassError] {
        state.withLock { $0.problems }
    }

    /// When the IP list was last fetched (by this process or a previous run), if ever.
    public var lastFetch: Date? {
        state.withLock { $0.lastFetch }
    }

    // MARK: Lifecycle

    /// Loads the stored IP list, fetches a fresh one if the stored one is older than the
    /// refresh interval, and probes every address.
    public func start() async {
        if let store {
            switch store.load() {
            case .success(let snapshot?):
                state.withLock { state in
                    state.lastFetch = snapshot.fetchedAt
                    state.fetched = snapshot.hosts
                    merge(into: &state)
                }
            case .success(nil):
                break
            case .failure(let problem):
                report(problem)
            }
        }
        await refreshIPListIfDue()
        await probe()
    }

    /// Fetches the IP list unless it was fetched less than the refresh interval ago (or a
    /// fetch is under way).
    /// - Returns: Whether a fetch was made and succeeded.
    @discardableResult
    public func refreshIPListIfDue(now: Date = Date()) async -> Bool {
        guard let source = configuration.ipListSource else { return false }
        let interval = configuration.refreshInterval.timeInterval
        let due = state.withLock { state in
            guard !state.fetching else { return false }
            if let last = state.lastFetch, now.timeIntervalSince(last) < interval, now >= last { return false }
            state.fetching = true
            return true
        }
        guard due else { return false }
        let result = await source.fetch()
        state.withLock { $0.fetching = false }
        switch result {
        case .success(let hosts):
            let snapshot = state.withLock { state in
                state.lastFetch = now
                state.fetched = hosts
                merge(into: &state)
                return AddressStore.Snapshot(fetchedAt: now, hosts: hosts)
            }
            if let store, let problem = store.save(snapshot) { report(problem) }
            return true
        case .failure(let problem):
            report(problem)
            return false
        }
    }

    /// Measures every address of every host concurrently and reorders them by latency;
    /// clears demotions of the addresses that answered.
    public func probe() async {
        let hosts = state.withLock { state in state.table.routes.mapValues { $0.map(\.endpoint) } }
        let results = await configuration.probe.measure(hosts, timeout: configuration.probeTimeout)
        state.withLock { $0.table.applyProbe(results) }
    }

    /// Tells the bypass the network changed (Wi-Fi ↔ cellular, back online): forgets
    /// demotions, fetches the IP list if due, and probes again.
    public func reachabilityChanged() async {
        state.withLock { $0.table.clearDemotions() }
        await refreshIPListIfDue()
        await probe()
    }

    /// Calls ``reachabilityChanged()`` every time `monitor` publishes `.reachable` after another
    /// status (back online, or a new network after a gap), so the next requests go to the
    /// fastest address of the network the device is on now.
    ///
    /// The bypass follows the monitor until the returned observation is cancelled or released;
    /// the observation does not keep the bypass alive.
    /// ```swift
    /// let reachability = ReachabilityMonitor()
    /// reachability.start()
    /// let following = bypass.followReachability(of: reachability)   // keep it
    /// ```
    public func followReachability(of monitor: ReachabilityMonitor) -> ReachabilityObservation {
        monitor.observe { [weak self] status in
            guard status == .reachable, let self else { return }
            Task { await self.reachabilityChanged() }
        }
    }

    /// Moves `endpoint` behind the live addresses of `host` after a failed connection.
    public func demote(_ endpoint: Endpoint, of host: String) {
        state.withLock { $0.table.demote(endpoint, of: Self.key(host)) }
    }

    // MARK: Helpers

    /// Configured addresses first, then fetched ones not already listed. A host that neither
    /// names any more (dropped from the latest IP list) leaves the table: it goes back to DNS.
    private func merge(into state: inout State) {
        let hosts = Set(configured.keys).union(state.fetched.keys)
        for host in hosts {
            let list = (configured[host] ?? []) + (state.fetched[host] ?? [])
            state.table.setAddresses(list, for: host)
        }
        state.table.keepHosts(hosts)
    }

    private func report(_ problem: DNSBypassError) {
        state.withLock { state in
            state.problems.append(problem)
            if state.problems.count > 32 { state.problems.removeFirst() }
        }
        configuration.onProblem?(problem)
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
