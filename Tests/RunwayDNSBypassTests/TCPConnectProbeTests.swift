import Foundation
import RunwayTestServer
import Testing

@testable import RunwayDNSBypass

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on 127.0.0.1.
final class Listener {
    let fd: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        fd = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

@Suite struct TCPConnectProbeTests {
    @Test func measuresListenersAndReportsRefusedPortsAsNil() async throws {
        let open = try Listener()
        let closed = try RefusingPort()
        let closedPort = closed.port
        let endpoint = try Endpoint("127.0.0.1")
        let times = await TCPConnectProbe.measure(
            [(endpoint, open.port), (endpoint, closedPort), (try Endpoint("::1"), closedPort)], timeout: .seconds(1))
        #expect(times.count == 3)
        #expect(times[0] != nil)
        #expect(times[0].map { $0 < .seconds(1) } == true)
        #expect(times[1] == nil)
        #expect(times[2] == nil)
        withExtendedLifetime(closed) {}
    }

    @Test func anUnansweredAddressTimesOut() async throws {
        // 192.0.2.0/24 is TEST-NET-1: never routed, so the SYN goes nowhere (or is refused at once).
        let start = ContinuousClock.now
        let times = await TCPConnectProbe.measure([(try Endpoint("192.0.2.1"), 443)], timeout: .milliseconds(300))
        #expect(times == [nil])
        // The kernel retries an unanswered SYN for about two minutes (tcp_syn_retries 6): well
        // under that, the probe's own timeout ended it, with room for a busy machine.
        #expect(ContinuousClock.now - start < .seconds(60))
    }

    @Test func theBypassCanProbeByTCP() async throws {
        let open = try Listener()
        let bypass = try DNSBypass(
            .init(hosts: ["api.runway.test": ["127.0.0.1:1", "127.0.0.1:\(open.port)"]], probe: .tcpConnect(), probeTimeout: .seconds(1)))
        await bypass.probe()
        #expect(bypass.endpoints(for: "api.runway.test").map(\.description) == ["127.0.0.1:\(open.port)", "127.0.0.1:1"])
    }
}
