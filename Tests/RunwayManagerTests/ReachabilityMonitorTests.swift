import Foundation
import RunwayCurl
import RunwaySync
import RunwayTestServer
import RunwayTesting
import Testing

@testable import Runway

/// A clock that stands still until the test moves it.
final class ManualClock: Sendable {
    private let start = ContinuousClock.now
    private let offset = Locked(Duration.zero)

    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }

    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
}

@Suite struct ReachabilityMonitorTests {
    @Test("an interval of zero or below is the minimum, so the poller never spins; a threshold below 1 is 1")
    func intervalAndThresholdHaveFloors() {
        for interval: Duration in [.zero, .milliseconds(-5), .nanoseconds(1)] {
            let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.reachable), interval: interval, probeFailureThreshold: 0)
            #expect(monitor.interval == ReachabilityMonitor.minimumInterval)
            #expect(monitor.probeFailureThreshold == 1)
        }
        #expect(ReachabilityMonitor(source: ScriptedReachabilitySource(.reachable), interval: .seconds(2)).interval == .seconds(2))
    }

    @Test func updatesAndObserversSeeEveryChange() async throws {
        let source = ScriptedReachabilitySource(.reachable)
        let monitor = ReachabilityMonitor(source: source, interval: .milliseconds(10))
        let seen = EventLog()
        let observation = monitor.observe { seen.append($0.description) }
        var iterator = monitor.updates.makeAsyncIterator()
        #expect(await iterator.next() == .unknown)
        monitor.start()
        #expect(await iterator.next() == .reachable)
        source.set(.unreachable)
        #expect(await iterator.next() == .unreachable)
        source.set(.reachable)
        #expect(await iterator.next() == .reachable)
        #expect(await eventually { seen.events == ["reachable", "unreachable", "reachable"] })
        observation.cancel()
        source.set(.unreachable)
        #expect(await iterator.next() == .unreachable)
        monitor.stop()
        #expect(seen.events.count == 3)
    }

    /// Two changes at once (a probe failure and a success on two threads, as a poll beside a
    /// call's report): observers and streams hear them in the order they happened, so the last
    /// status they hear is the monitor's. The second change was handed to observers while the
    /// first was still being handed over, and heard before it: an observer kept "unreachable"
    /// while the monitor said reachable.
    @Test func changesAtOnceReachObserversInTheOrderTheyHappened() async throws {
        let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.reachable), probeFailureThreshold: 1)
        monitor.refresh()
        let seen = EventLog()
        let inFirst = Gate()
        let release = DispatchSemaphore(value: 0)
        let isFirst = Locked(true)
        let observation = monitor.observe { status in
            let first = isFirst.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            if first {
                inFirst.open()
                release.wait()  // on a thread of the test's own, never one of the cooperative pool
            }
            seen.append(status.description)
        }
        var iterator = monitor.updates.makeAsyncIterator()
        #expect(await iterator.next() == .reachable)
        let failed = Gate()
        let succeeded = Gate()
        Thread {
            monitor.recordProbe(succeeded: false)
            failed.open()
        }.start()
        await inFirst.wait()
        Thread {
            monitor.recordProbe(succeeded: true)
            succeeded.open()
        }.start()
        let published = await eventually { monitor.status == .reachable }
        release.signal()
        await failed.wait()
        await succeeded.wait()
        #expect(published)
        #expect(seen.events == ["unreachable", "reachable"])
        #expect(await iterator.next() == .unreachable)
        #expect(await iterator.next() == .reachable)
        observation.cancel()
    }

    @Test func consecutiveProbeFailuresMakeItUnreachableUntilASuccess() {
        let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.reachable), probeFailureThreshold: 3)
        monitor.refresh()
        #expect(monitor.status == .reachable)
        monitor.recordProbe(succeeded: false)
        monitor.recordProbe(succeeded: false)
        #expect(monitor.status == .reachable)
        monitor.recordProbe(succeeded: false)
        #expect(monitor.status == .unreachable)
        monitor.recordProbe(succeeded: true)
        #expect(monitor.status == .reachable)
    }

    @Test func managersFailFastWithNoNetworkWhileUnreachable() async throws {
        let source = ScriptedReachabilitySource(.unreachable)
        let monitor = ReachabilityMonitor(source: source)
        monitor.refresh()
        let stub = jsonStub("{}")
        let manager = ItemListAPIManager(registry: try makeRegistry(stub, reachability: monitor))
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == .noNetwork)
        #expect(result.failure?.neverSent == true)
        #expect(stub.requests.isEmpty)
        source.set(.reachable)
        monitor.refresh()
        try await manager.load()
        #expect(stub.requests.count == 1)
    }

    /// With no network (only `lo` up: Wi-Fi off, a container without one), a service on this
    /// machine is still called; one elsewhere fails fast.
    @Test func aServiceOnThisMachineIsCalledWithoutANetwork() async throws {
        try await withTestServer { server in
            let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.unreachable))
            monitor.refresh()
            let local = TestService(id: .listings, baseURL: server.url("/").absoluteString)
            let named = TestService(id: .rental, baseURL: server.url("/", hostName: "localhost").absoluteString)
            let remote = TestService(id: .newHome, baseURL: "http://listings.test/v1")
            let registry = try makeRegistry(CurlDispatcher(), services: [local, named, remote], reachability: monitor)
            for service in [ServiceID.listings, .rental] {
                let result = await outcome { try await ItemListAPIManager(registry: registry, apiName: "json", serviceID: service).load() }
                #expect(result.success != nil, "\(service): \(String(describing: result.failure))")
            }
            let far = await outcome { try await ItemListAPIManager(registry: registry, serviceID: .newHome).load() }
            #expect(far.failure?.code == .noNetwork)
        }
    }

    @Test(arguments: [
        ("127.0.0.1:8080", true), ("127.8.9.10:80", true), ("localhost:80", true), ("LOCALHOST.:80", true),
        ("api.localhost:443", true), ("::1:8080", true), ("[::1]:8080", true), ("::ffff:127.0.0.1:80", true), ("localhost", true),
        ("::1", true), ("128.0.0.1:80", false), ("127.0.0.256:80", false), ("127.0.0:80", false), ("localhost.example:80", false),
        ("127.0.0.1.example:80", false), ("::2:80", false), ("10.0.0.1:80", false), ("", false),
    ])
    func whichHostsAreThisMachine(endpoint: String, loopback: Bool) {
        let monitor = ReachabilityMonitor(source: ScriptedReachabilitySource(.unreachable))
        monitor.refresh()
        #expect(monitor.shouldFailFast(host: endpoint) == !loopback)
    }

    /// A dead service must not block a live one, and must be tried again after the interval
    /// even when nobody polls (it blocked every service, and forever without `start()`). The
    /// monitor's clock moves only when the test says: however slow the calls, the dead host fails
    /// fast until the interval has passed, and is tried again once it has.
    @Test func oneDeadServiceNeverBlocksTheOthers() async throws {
        try await withTestServer { server in
            let clock = ManualClock()
            let monitor = ReachabilityMonitor(
                source: ScriptedReachabilitySource(.reachable), interval: .milliseconds(300), probeFailureThreshold: 3,
                now: { clock.now })
            let dead = TestService(id: .rental, baseURL: "http://127.0.0.1:1/v1")
            let alive = TestService(id: .listings, baseURL: server.url("/").absoluteString)
            let registry = try makeRegistry(CurlDispatcher(), services: [dead, alive], reachability: monitor)
            let deadManager = ItemListAPIManager(registry: registry, serviceID: .rental)
            let aliveManager = ItemListAPIManager(registry: registry, apiName: "json")
            for _ in 0..<3 {
                #expect(await outcome { try await deadManager.load() }.failure?.code == .cannotConnect)
            }
            // The dead host fails fast now; the live one is untouched.
            #expect(await outcome { try await deadManager.load() }.failure?.code == .noNetwork)
            let live = await outcome { try await aliveManager.load() }
            #expect(live.success != nil, "\(String(describing: live.failure))")
            #expect(await outcome { try await deadManager.load() }.failure?.code == .noNetwork)
            // Just before the interval has passed it still fails fast; once it has (no poller
            // running), the dead host is tried again.
            clock.advance(by: .milliseconds(299))
            #expect(await outcome { try await deadManager.load() }.failure?.code == .noNetwork)
            clock.advance(by: .milliseconds(1))
            #expect(await outcome { try await deadManager.load() }.failure?.code == .cannotConnect)
        }
    }

    /// A `.cannotConnect` that is not `neverSent` came from where a redirect led: the service
    /// itself answered, so it counts for the service, never against it.
    @Test func aRefusedRedirectTargetNeverBlocksTheServiceThatAnswered() async throws {
        try await withTestServer { server in
            let monitor = ReachabilityMonitor(
                source: ScriptedReachabilitySource(.reachable), interval: .seconds(600), probeFailureThreshold: 3)
            monitor.refresh()
            let registry = try makeRegistry(
                CurlDispatcher(), services: [TestService(id: .listings, baseURL: server.url("/").absoluteString)], reachability: monitor)
            let away = "redirect-to?url=" + "http://127.0.0.1:1/x".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            for _ in 0..<4 {
                await #expect {
                    try await registry.send(api: away, of: .listings, method: .get, options: RequestOptions(redirects: .follow(max: 2)))
                } throws: { ($0 as? RunwayError)?.code == .cannotConnect && ($0 as? RunwayError)?.neverSent == false }
            }
            #expect(monitor.status == .reachable)
            #expect(try await registry.send(api: "json", of: .listings, method: .get).status == 200)
            let manager = ItemListAPIManager(registry: registry, apiName: "json")
            let loaded = await outcome { try await manager.load() }
            #expect(loaded.success != nil, "\(String(describing: loaded.failure))")
        }
    }

    /// An interface with only a link-local address (its DHCP failed, or a tunnel the system
    /// keeps up) reaches no network: it does not make the device reachable.
    @Test func aLinkLocalAddressIsNoNetwork() throws {
        func reaches(_ text: String) throws -> Bool {
            if text.contains(":") {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                #expect(inet_pton(AF_INET6, text, &address.sin6_addr) == 1)
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { NetworkInterfacesSource.reachesBeyondTheLink($0) }
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            #expect(inet_pton(AF_INET, text, &address.sin_addr) == 1)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { NetworkInterfacesSource.reachesBeyondTheLink($0) }
            }
        }
        for linkLocal in ["169.254.0.1", "169.254.255.254", "fe80::1", "fe80::fc:ff:fe00:1", "febf::1"] {
            #expect(try !reaches(linkLocal), "\(linkLocal)")
        }
        for beyond in ["10.0.0.2", "192.168.1.20", "169.253.0.1", "169.255.0.1", "2001:db8::1", "fd00::2", "fec0::1", "127.0.0.1"] {
            #expect(try reaches(beyond), "\(beyond)")
        }
    }

    @Test func theInterfacesSourceReadsThisMachine() throws {
        let interfaces = NetworkInterfacesSource.interfaces()
        let loopback = try #require(interfaces.first { $0.isLoopback })
        #expect(loopback.isUp && loopback.hasAddress)
        // /sys/class/net lists the same interfaces on Linux.
        if let names = try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net") {
            #expect(Set(interfaces.map(\.name)).isSubset(of: Set(names)))
        }
        let expected: ReachabilityStatus =
            interfaces.contains { $0.isUp && !$0.isLoopback && $0.hasAddress } ? .reachable : .unreachable
        #expect(NetworkInterfacesSource().currentStatus() == expected)
        let everythingIgnored = NetworkInterfacesSource(ignoredNames: Set(interfaces.map(\.name)))
        #expect(everythingIgnored.currentStatus() == .unreachable)
    }
}
