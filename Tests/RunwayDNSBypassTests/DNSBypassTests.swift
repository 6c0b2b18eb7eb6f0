import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

@testable import RunwayDNSBypass

/// A dispatcher standing in for the network: each address answers after its own delay, or
/// refuses connections once killed.
///
/// The bypass ranks addresses by the round trips it measures, and on a loaded machine a task can
/// wait far longer for a thread than any delay here: slept delays alone would rank by scheduling
/// noise. So pings (`/ping`) keep the order the delays give whatever the noise: an address
/// answers a ping only once every faster live address has answered one, and no sooner than
/// ``rankGap`` after the slowest of their answers so far, measured from the moment each ping
/// arrived, as the bypass measures it.
final class FakeNetwork: Dispatcher, @unchecked Sendable {
    /// How much longer than any faster address's slowest ping an address takes to answer one.
    static let rankGap: Duration = .milliseconds(100)

    // @unchecked: every stored var is read and written under `lock`.
    private let lock = NSLock()
    private var delays: [String: Duration]
    private var dead: Set<String> = []
    private var seen: [Request] = []
    /// The slowest ping each address has answered since the delays last changed.
    private var slowestPing: [String: Duration] = [:]
    var ipList: Data?

    init(delays: [String: Duration]) { self.delays = delays }

    var requests: [Request] { lock.withLock { seen } }
    func kill(_ address: String) { lock.withLock { _ = dead.insert(address) } }
    func revive(_ address: String) { lock.withLock { _ = dead.remove(address) } }
    func setDelay(_ address: String, _ delay: Duration) {
        lock.withLock {
            delays[address] = delay
            slowestPing = [:]
        }
    }

    func dispatch(_ request: Request, context: RequestContext) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        try request.validate()
        lock.withLock { seen.append(request) }
        if request.url.path == "/iplist" {
            try await Task.sleep(for: .milliseconds(50))
            guard let body = lock.withLock({ ipList }) else { return Response(status: 503) }
            return Response(status: 200, body: body)
        }
        guard let target = request.options.connectOverrides.first(where: { $0.host == request.url.host }) else {
            throw RunwayError(.dnsFailure, "no DNS for \(request.url.host ?? "")")
        }
        let address = target.connectHost
        let (delay, isDead) = lock.withLock { (delays[address], dead.contains(address)) }
        guard let delay, !isDead else { throw RunwayError(.cannotConnect, "connection refused by \(address)", neverSent: true) }
        guard request.url.path == "/ping" else {
            try await Task.sleep(for: delay)
            return Response(status: 200, body: Data(address.utf8))
        }
        while true {
            // nil while a faster live address has not answered a ping yet.
            let earliest: Duration? = lock.withLock {
                var earliest = delay
                for (other, otherDelay) in delays where otherDelay < delay && !dead.contains(other) {
                    guard let slowest = slowestPing[other] else { return nil }
                    earliest = max(earliest, slowest + Self.rankGap)
                }
                return earliest
            }
            let elapsed = clock.now - start
            if let earliest, elapsed >= earliest {
                lock.withLock { slowestPing[address] = max(slowestPing[address] ?? .zero, elapsed) }
                return Response(status: 200, body: Data(address.utf8))
            }
            try await Task.sleep(for: earliest.map { min($0 - elapsed, .milliseconds(5)) } ?? .milliseconds(5))
        }
    }
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }
}

@Suite struct DNSBypassTests {
    let host = "api.runway.test"

    func makeBypass(
        _ network: FakeNetwork, storeFile: URL? = nil, source: Bool = false, onProblem: (@Sendable (DNSBypassError) -> Void)? = nil
    ) throws -> DNSBypass {
        try DNSBypass(
            .init(
                hosts: [host: ["127.0.0.4", "127.0.0.3", "127.0.0.2"]],
                ipListSource: source ? IPListSource(url: URL(string: "https://config.runway.test/iplist")!, dispatcher: network) : nil,
                storeFile: storeFile,
                probe: .httpPing(path: "/ping", dispatcher: network),
                probeTimeout: .seconds(5),
                fallsBackToDNS: false,
                onProblem: onProblem))
    }

    func network() -> FakeNetwork {
        FakeNetwork(delays: ["127.0.0.2": .milliseconds(1), "127.0.0.3": .milliseconds(150), "127.0.0.4": .milliseconds(400)])
    }

    @Test func probeOrdersByLatencyAndRequestsGoToTheFastest() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        #expect(bypass.endpoints(for: host).map(\.address) == ["127.0.0.4", "127.0.0.3", "127.0.0.2"])
        await bypass.start()
        #expect(bypass.endpoints(for: "API.runway.test").map(\.address) == ["127.0.0.2", "127.0.0.3", "127.0.0.4"])
        let pings = network.requests.filter { $0.url.path == "/ping" }
        #expect(pings.count == 6)  // two samples per address
        #expect(pings.allSatisfy { $0.url.host == host && $0.options.connectTimeout == .seconds(5) })

        let pipeline = Pipeline(interceptors: [DNSBypassInterceptor.dnsBypass(bypass)], dispatcher: network)
        let response = try await pipeline.send(try Request("https://api.runway.test/whoami"))
        #expect(response.text == "127.0.0.2")
        let sent = try #require(network.requests.last)
        #expect(sent.url.host == host)
        #expect(sent.options.connectOverrides == [ConnectOverride(host: host, connectHost: "127.0.0.2")])
    }

    @Test func aDeadAddressFailsOverAndIsDemoted() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        await bypass.start()
        let pipeline = Pipeline(interceptors: [DNSBypassInterceptor(bypass)], dispatcher: network)
        network.kill("127.0.0.2")
        #expect(
            try await pipeline.send(try Request(method: .post, "https://api.runway.test/orders", body: Data("{}".utf8))).text == "127.0.0.3"
        )
        #expect(bypass.endpoints(for: host).map(\.address) == ["127.0.0.3", "127.0.0.4", "127.0.0.2"])
        // The next request goes straight to the new best address.
        let before = network.requests.count
        #expect(try await pipeline.send(try Request("https://api.runway.test/a")).text == "127.0.0.3")
        #expect(network.requests.count == before + 1)
    }

    @Test func everyAddressDeadIsTheLastConnectError() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        await bypass.start()
        for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] { network.kill(address) }
        await #expect {
            try await Pipeline(interceptors: [DNSBypassInterceptor(bypass)], dispatcher: network).send(
                try Request("https://api.runway.test/a"))
        } throws: { ($0 as? RunwayError)?.code == .cannotConnect }
    }

    @Test func otherHostsAndOtherErrorsPassThrough() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        let pipeline = Pipeline(interceptors: [DNSBypassInterceptor(bypass)], dispatcher: network)
        await #expect { try await pipeline.send(try Request("https://elsewhere.test/")) } throws: {
            ($0 as? RunwayError)?.code == .dnsFailure
        }
        let tlsFailing = StubDispatcher { _ in throw RunwayError(.tls, "certificate does not match") }
        let strict = Pipeline(interceptors: [DNSBypassInterceptor(bypass)], dispatcher: tlsFailing)
        await #expect { try await strict.send(try Request("https://api.runway.test/")) } throws: { ($0 as? RunwayError)?.code == .tls }
        #expect(tlsFailing.requests.count == 1)
    }

    @Test func reachabilityChangeForgetsDemotionsAndReprobes() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        await bypass.start()
        bypass.demote(try Endpoint("127.0.0.2"), of: host)
        #expect(bypass.endpoints(for: host).first?.address == "127.0.0.3")
        network.setDelay("127.0.0.4", .zero)
        network.setDelay("127.0.0.3", .milliseconds(200))
        network.setDelay("127.0.0.2", .milliseconds(450))
        await bypass.reachabilityChanged()
        #expect(bypass.endpoints(for: host).map(\.address) == ["127.0.0.4", "127.0.0.3", "127.0.0.2"])
    }

    @Test func followingAMonitorReprobesWhenTheNetworkComesBack() async throws {
        let network = network()
        let bypass = try makeBypass(network)
        await bypass.start()
        let source = ScriptedReachabilitySource(.reachable)
        let monitor = ReachabilityMonitor(source: source, interval: .seconds(3600))
        monitor.refresh()
        let following = bypass.followReachability(of: monitor)
        bypass.demote(try Endpoint("127.0.0.2"), of: host)
        network.setDelay("127.0.0.4", .zero)
        network.setDelay("127.0.0.3", .milliseconds(200))
        network.setDelay("127.0.0.2", .milliseconds(450))

        // Going offline changes nothing; coming back re-probes and forgets the demotion.
        source.set(.unreachable)
        monitor.refresh()
        #expect(bypass.endpoints(for: host).map(\.address) == ["127.0.0.3", "127.0.0.4", "127.0.0.2"])
        source.set(.reachable)
        monitor.refresh()
        #expect(await eventually { bypass.endpoints(for: host).map(\.address) == ["127.0.0.4", "127.0.0.3", "127.0.0.2"] })

        // Once the observation is cancelled the bypass no longer follows. A re-probe it started
        // would begin (in a task of its own) as the network comes back, before the probe made
        // here: when this one has pinged each address twice, such a re-probe would have pinged too.
        following.cancel()
        let pings = network.requests.count
        source.set(.unreachable)
        monitor.refresh()
        source.set(.reachable)
        monitor.refresh()
        await bypass.probe()
        #expect(network.requests.count == pings + 6)
    }

    @Test func ipListIsFetchedPersistedAndNotRefetchedWithinADay() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dnsbypass-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("addresses.json")
        let network = network()
        network.setDelay("127.0.0.9", .milliseconds(800))
        network.ipList = Data(#"{"hosts": {"api.runway.test": ["127.0.0.9"], "img.runway.test": ["127.0.0.2"]}}"#.utf8)

        let first = try makeBypass(network, storeFile: file, source: true)
        await first.start()
        #expect(first.problems.isEmpty)
        #expect(first.endpoints(for: host).map(\.address) == ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.9"])
        #expect(first.endpoints(for: "img.runway.test").map(\.address) == ["127.0.0.2"])
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(await first.refreshIPListIfDue() == false)

        // A new run reads the file and does not fetch again.
        let fetches = network.requests.filter { $0.url.path == "/iplist" }.count
        let second = try makeBypass(network, storeFile: file, source: true)
        await second.start()
        #expect(network.requests.filter { $0.url.path == "/iplist" }.count == fetches)
        #expect(second.endpoints(for: "img.runway.test").map(\.address) == ["127.0.0.2"])
        // A day later it does.
        #expect(await second.refreshIPListIfDue(now: Date().addingTimeInterval(86_401)))
        #expect(network.requests.filter { $0.url.path == "/iplist" }.count == fetches + 1)
    }

    /// Applying a list sorted every host's addresses again for each host it changed, under the
    /// lock every call's routing takes: 2,000 hosts held calls for seconds, 20,000 for more than
    /// ten minutes. Each host is now sorted when its own routes change. The bound stands against
    /// those minutes (this takes about a second in a debug build), not a measure of speed.
    @Test func aTableOfTwentyThousandHostsIsBuiltProbedAndClearedAtOnce() async throws {
        let finished = Counter()
        Task.detached {
            var table = RouteTable()
            let endpoints = [try! Endpoint("127.0.0.1:1"), try! Endpoint("127.0.0.2:1")]
            let hosts = (0..<20_000).map { "h\($0).runway.test" }
            for host in hosts { table.setAddresses(endpoints, for: host) }
            table.keepHosts(Set(hosts))
            let measured: [Endpoint: Duration?] = [endpoints[0]: nil, endpoints[1]: .milliseconds(1)]
            table.applyProbe(Dictionary(uniqueKeysWithValues: hosts.map { ($0, measured) }))
            for host in hosts { table.demote(endpoints[1], of: host) }
            table.clearDemotions()
            table.keepHosts(Set(hosts.prefix(10)))
            let ranked = table.ordered.values.allSatisfy { $0 == [endpoints[1], endpoints[0]] }
            _ = finished.add(table.ordered.count == 10 && ranked ? 1 : 2)
        }
        #expect(await eventually(timeout: .seconds(120)) { finished.value != 0 }, "not done within two minutes")
        #expect(finished.value == 1)
    }

    @Test func concurrentRefreshesFetchOnce() async throws {
        let network = network()
        network.ipList = Data(#"{"hosts": {"api.runway.test": ["127.0.0.9"]}}"#.utf8)
        let bypass = try makeBypass(network, source: true)
        async let first = bypass.refreshIPListIfDue()
        async let second = bypass.refreshIPListIfDue()
        let results = await [first, second]
        #expect(results.filter { $0 }.count == 1)
        #expect(network.requests.filter { $0.url.path == "/iplist" }.count == 1)
        #expect(bypass.lastFetch != nil)
    }

    @Test(arguments: [
        Data("{not json".utf8), Data(), Data(#"{"version": 2, "fetchedAt": 0, "hosts": {}}"#.utf8),
        Data(#"{"version": 1, "fetchedAt": 0, "hosts": {"api.runway.test": ["not-an-ip"]}}"#.utf8),
        Data(#"{"version": 1, "fetchedAt": 0, "hosts": {"api.runway.test": []}}"#.utf8),
    ])
    func aCorruptStoreIsIgnoredWithAReason(contents: Data) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dnsbypass-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("addresses.json")
        try contents.write(to: file)
        let reported = ProblemLog()
        let network = network()
        let bypass = try makeBypass(network, storeFile: file, onProblem: { reported.add($0) })
        await bypass.start()
        #expect(bypass.problems.count == 1)
        #expect(bypass.problems.first?.isCorruptStore == true)
        #expect(reported.all.first?.isCorruptStore == true)
        #expect(bypass.endpoints(for: host).first?.address == "127.0.0.2")
    }

    @Test func aFailedOrGarbageFetchIsReportedAndKeepsTheOldList() async throws {
        let network = network()
        let bypass = try makeBypass(network, source: true)
        await bypass.start()
        #expect(bypass.problems.first?.isIPListProblem == true)
        network.ipList = Data(#"{"hosts": {"api.runway.test": ["evil.example.com"]}}"#.utf8)
        #expect(await bypass.refreshIPListIfDue() == false)
        #expect(bypass.problems.last == .ipListInvalid(""))
        #expect(bypass.endpoints(for: host).count == 3)
    }

    @Test func anInternationalizedNameIsKeptInTheASCIIFormURLsCarry() throws {
        let bypass = try DNSBypass(.init(hosts: ["BÜCHER.test.": ["127.0.0.2"], "例え.テスト": ["127.0.0.3"]]))
        #expect(bypass.routes.keys.sorted() == ["xn--bcher-kva.test", "xn--r8jz45g.xn--zckzah"])
        for name in ["bücher.test", "Bücher.Test.", "xn--bcher-kva.test", "XN--BCHER-KVA.test"] {
            #expect(bypass.endpoints(for: name).map(\.address) == ["127.0.0.2"], "\(name)")
        }
        #expect(bypass.endpoints(for: "例え.テスト").map(\.address) == ["127.0.0.3"])
        // The key is what FoundationEssentials' parser makes of the host of a URL.
        #expect(try Runway.Request("https://例え.テスト/x").url.host == "xn--r8jz45g.xn--zckzah")
        #expect(bypass.endpoints(for: "bucher.test").isEmpty)
    }

    @Test func badConfigurationIsRejectedAtRegistration() {
        func field(_ configuration: DNSBypass.Configuration) -> String? {
            do {
                _ = try DNSBypass(configuration)
                return nil
            } catch { return error.code == .configuration ? error.field : "wrong code" }
        }
        let ping = ProbeMethod.tcpConnect()
        #expect(field(.init(hosts: [host: []])) == "hosts")
        #expect(field(.init(hosts: [:])) == "hosts")
        #expect(field(.init(hosts: [host: ["api.example.com"]])) == "hosts")
        #expect(field(.init(hosts: ["https://api.runway.test": ["127.0.0.1"]])) == "hosts")
        #expect(field(.init(hosts: [host: ["127.0.0.1"]], refreshInterval: .seconds(5))) == "refreshInterval")
        #expect(field(.init(hosts: [host: ["127.0.0.1"]], probe: ping, probeTimeout: .zero)) == "probeTimeout")
        #expect(field(.init(hosts: [host: ["127.0.0.1"]], perAddressConnectTimeout: .seconds(-1))) == "perAddressConnectTimeout")
        #expect(
            field(.init(hosts: [host: ["127.0.0.1"]], probe: .httpPing(scheme: "ftp", dispatcher: StubDispatcher(status: 200)))) == "probe")
        for port in [0, -1, 65536, 70000] {
            #expect(field(.init(hosts: [host: ["127.0.0.1"]], probe: .tcpConnect(defaultPort: port))) == "probe", "\(port)")
        }
        #expect(field(.init(hosts: [host: ["127.0.0.1"]], probe: .tcpConnect(defaultPort: 65535))) == nil)
        #expect(field(.init(hosts: [host: ["127.0.0.1", "[::1]:8443"]])) == nil)
        // Host names: labels of 1 to 63 letters, digits and inner hyphens; one trailing dot is the same name.
        let label63 = String(repeating: "a", count: 63)
        for bad in [
            "api..runway.test", ".api.runway.test", "api.runway.test..", "-api.runway.test", "api-.runway.test",
            "api.-runway.test", label63 + "a.test", "api_1.runway.test", "api runway.test", ".",
            // An internationalized name with a character no host holds: never read as a user or a path.
            "ü@evil.test", "bü/cher.test", "bü:80.test", "bü_cher.test",
        ] {
            #expect(field(.init(hosts: [bad: ["127.0.0.1"]])) == "hosts", "\(bad)")
        }
        for good in ["API.Runway.Test.", "a-b.c", label63 + ".test", "x", "10.0.0.1", "bücher.test", "例え.テスト"] {
            #expect(field(.init(hosts: [good: ["127.0.0.1"]])) == nil, "\(good)")
        }
        do {
            _ = try DNSBypass(.init(hosts: [host: []]))
        } catch {
            #expect(error.underlying as? DNSBypassError == .emptyAddressList(host))
        }
    }
}

final class ProblemLog: Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private var problems: [DNSBypassError] = []
    var all: [DNSBypassError] { lock.withLock { problems } }
    func add(_ problem: DNSBypassError) { lock.withLock { problems.append(problem) } }
}
