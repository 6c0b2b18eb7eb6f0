/// The addresses known for each host and what is known about them: a value-type state machine
/// that ``DNSBypass`` keeps under its lock.
///
/// Order for a host: addresses that answered the last probe, fastest first; then those not yet
/// probed, in list order; then those that failed the probe; then those demoted after a failed
/// connection, the longest-demoted first. A new probe result clears a demotion.
struct RouteTable: Sendable {
    struct Route: Sendable, Equatable {
        var endpoint: Endpoint
        /// The last probe's round trip; `nil` when not probed yet or the probe failed.
        var latency: Duration?
        var probed = false
        /// When set, the order in which the route was demoted (a counter, not a time).
        var demotion: UInt64?
    }

    /// Changed through ``set(_:for:)`` only, which keeps ``ordered`` in step.
    private(set) var routes: [String: [Route]] = [:]
    private var demotions: UInt64 = 0

    /// Every host and its addresses, in current order: sorted when a host's routes change (a
    /// probe, a demotion, a new list: rarely), one host at a time, not when a request asks for
    /// them (every request to a bypassed host). An IP list of thousands of hosts is applied in
    /// time linear in its size.
    private(set) var ordered: [String: [Endpoint]] = [:]

    /// Sets the routes of `host` (`nil`: forgets it) and its order.
    private mutating func set(_ list: [Route]?, for host: String) {
        routes[host] = list
        ordered[host] = list.map { Self.sort($0).map(\.endpoint) }
    }

    /// The addresses for `host`, best first; empty when the host is not bypassed.
    func endpoints(for host: String) -> [Endpoint] {
        ordered[host] ?? []
    }

    /// Replaces the address list of `host`, keeping what is known about addresses still listed.
    mutating func setAddresses(_ endpoints: [Endpoint], for host: String) {
        let old = routes[host] ?? []
        var seen = Set<Endpoint>()
        let list = endpoints.compactMap { endpoint -> Route? in
            guard seen.insert(endpoint).inserted else { return nil }
            return old.first { $0.endpoint == endpoint } ?? Route(endpoint: endpoint)
        }
        guard list != old || routes[host] == nil else { return }
        set(list, for: host)
    }

    /// Forgets every host not in `hosts`.
    mutating func keepHosts(_ hosts: Set<String>) {
        for host in routes.keys where !hosts.contains(host) { set(nil, for: host) }
    }

    /// Records probe results: a latency, or `nil` for an address that did not answer.
    mutating func applyProbe(_ results: [String: [Endpoint: Duration?]]) {
        for (host, measured) in results {
            guard var list = routes[host] else { continue }
            for index in list.indices {
                guard let result = measured[list[index].endpoint] else { continue }
                list[index].latency = result
                list[index].probed = true
                list[index].demotion = nil
            }
            set(list, for: host)
        }
    }

    /// Moves `endpoint` of `host` behind every live address after a failed connection.
    mutating func demote(_ endpoint: Endpoint, of host: String) {
        guard let index = routes[host]?.firstIndex(where: { $0.endpoint == endpoint }) else { return }
        demotions += 1
        var list = routes[host] ?? []
        list[index].demotion = demotions
        set(list, for: host)
    }

    /// Forgets every demotion (the network changed: old failures say nothing now).
    mutating func clearDemotions() {
        for (host, list) in routes where list.contains(where: { $0.demotion != nil }) {
            var cleared = list
            for index in cleared.indices { cleared[index].demotion = nil }
            set(cleared, for: host)
        }
    }

    private static func sort(_ list: [Route]) -> [Route] {
        func rank(_ route: Route) -> Int {
            if route.demotion != nil { return 3 }
            if route.latency != nil { return 0 }
            return route.probed ? 2 : 1
        }
        return list.enumerated().sorted { a, b in
            let (ra, rb) = (rank(a.element), rank(b.element))
            if ra != rb { return ra < rb }
            switch ra {
            case 0:
                let (la, lb) = (a.element.latency ?? .zero, b.element.latency ?? .zero)
                if la != lb { return la < lb }
            case 3: return (a.element.demotion ?? 0) < (b.element.demotion ?? 0)
            default: break
            }
            return a.offset < b.offset
        }.map(\.element)
    }
}
