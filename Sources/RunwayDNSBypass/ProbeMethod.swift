import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How ``DNSBypass`` measures each address.
public struct ProbeMethod: Sendable {
    enum Kind: Sendable {
        case tcpConnect(defaultPort: Int)
        case httpPing(path: String, scheme: String, samples: Int, dispatcher: any Dispatcher, options: RequestOptions)
    }

    let kind: Kind

    /// The time to open a TCP connection (non-blocking sockets, all addresses at once). Cheap
    /// and needs no server support; says nothing about how busy the server is.
    /// - Parameter defaultPort: The port for addresses listed without one, 1...65535 (another is
    ///   `.configuration`, field `probe`, when the ``DNSBypass`` is made).
    public static func tcpConnect(defaultPort: Int = 443) -> ProbeMethod {
        ProbeMethod(kind: .tcpConnect(defaultPort: defaultPort))
    }

    /// The round trip of a small `GET scheme://host/path` sent to each address through
    /// `dispatcher`, with the host name kept (so TLS is verified for the real name and a server
    /// answering slowly ranks low). An answer below 500 counts; anything else is a failure.
    /// Each address is pinged `samples` times in a row and its fastest round trip kept: the
    /// first pays for the TCP and TLS handshakes, the later ones reuse the connection and
    /// measure the path and the server.
    /// - Parameters:
    ///   - path: The path pinged on each address.
    ///   - scheme: `https` (the default) or `http`.
    ///   - samples: Pings per address, at least 1.
    ///   - options: Timeouts and TLS settings (a private CA, say) for the ping; its connect and
    ///     total timeouts are replaced by the probe timeout.
    ///   - dispatcher: What sends the pings (the app's dispatcher, say).
    public static func httpPing(
        path: String = "/", scheme: String = "https", samples: Int = 2, dispatcher: any Dispatcher,
        options: RequestOptions = RequestOptions()
    ) -> ProbeMethod {
        ProbeMethod(kind: .httpPing(path: path, scheme: scheme, samples: samples, dispatcher: dispatcher, options: options))
    }

    /// Measures every address of every host concurrently.
    func measure(_ hosts: [String: [Endpoint]], timeout: Duration) async -> [String: [Endpoint: Duration?]] {
        switch kind {
        case .tcpConnect(let defaultPort):
            // One connect per address and port, however many hosts list it (an IP list often
            // names a few addresses for many hosts): a socket each would run out of descriptors.
            let targets = hosts.flatMap { host, endpoints in endpoints.map { (host: host, endpoint: $0) } }
            var slots: [Endpoint: Int] = [:]
            var unique: [(endpoint: Endpoint, port: Int)] = []
            for target in targets where slots[target.endpoint] == nil {
                slots[target.endpoint] = unique.count
                unique.append((target.endpoint, target.endpoint.port ?? defaultPort))
            }
            let times = await TCPConnectProbe.measure(unique, timeout: timeout)
            var results: [String: [Endpoint: Duration?]] = [:]
            for target in targets {
                guard let slot = slots[target.endpoint] else { continue }
                results[target.host, default: [:]][target.endpoint] = .some(times[slot])
            }
            return results
        case .httpPing(let path, let scheme, let samples, let dispatcher, let options):
            return await withTaskGroup(of: (String, Endpoint, Duration?).self) { group in
                for (host, endpoints) in hosts {
                    for endpoint in endpoints {
                        group.addTask {
                            var best: Duration?
                            for _ in 0..<max(1, samples) {
                                guard
                                    let time = await Self.ping(
                                        host: host, endpoint: endpoint, path: path, scheme: scheme, dispatcher: dispatcher,
                                        options: options, timeout: timeout)
                                else { return (host, endpoint, nil) }
                                best = min(best ?? time, time)
                            }
                            return (host, endpoint, best)
                        }
                    }
                }
                var results: [String: [Endpoint: Duration?]] = [:]
                for await (host, endpoint, time) in group { results[host, default: [:]][endpoint] = .some(time) }
                return results
            }
        }
    }

    private static func ping(
        host: String, endpoint: Endpoint, path: String, scheme: String, dispatcher: any Dispatcher, options: RequestOptions,
        timeout: Duration
    ) async -> Duration? {
        guard let url = URL(string: "\(scheme)://\(host)\(path.hasPrefix("/") ? path : "/" + path)") else { return nil }
        var options = options
        options.connectTimeout = timeout
        options.timeout = timeout
        options.connectOverrides = [ConnectOverride(host: host, connectHost: endpoint.address, connectPort: endpoint.port)]
        let request = Request(method: .get, url: url, headers: ["Cache-Control": "no-cache"], options: options)
        let start = ContinuousClock.now
        guard let response = try? await dispatcher.dispatch(request, context: RequestContext()), response.status < 500 else { return nil }
        return ContinuousClock.now - start
    }
}
