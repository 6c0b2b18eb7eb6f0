import BenchSupport
import Benchmark
import Foundation

// Side by side in one run against one nginx on 127.0.0.1: Runway (libcurl dispatcher + six
// no-op interceptors), raw libcurl multi from Swift, AsyncHTTPClient and URLSession.
// Each benchmark iteration is 1,000 requests; throughput is requests per second (×1000 → k).

nonisolated(unsafe) var server: Nginx?

let benchmarks: @Sendable () -> Void = {
    Benchmark.setup = { server = try Nginx() }
    Benchmark.teardown = { server?.stop() }

    let config = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .peakMemoryResident],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(5),
        maxIterations: 20
    )

    typealias Factory = @Sendable (ClientSetup) throws -> any BenchClient
    let clients: [(String, Factory)] = [
        ("runway", { RunwayClient($0) }),
        ("raw-libcurl", { RawCurlClient($0) }),
        ("async-http-client", { try AHCClient($0) }),
        ("urlsession", { URLSessionClient($0) }),
    ]

    enum Transport: String { case plain = "", h1 = " tls-h1", h2 = " tls-h2" }

    func register(_ name: String, concurrency: Int, transport: Transport = .plain, path: String, factory: @escaping Factory) {
        let tls = transport != .plain
        Benchmark("\(name) \(path) c=\(concurrency)\(transport.rawValue)", configuration: config) { (benchmark: Benchmark, client: any BenchClient) in
            guard let server else { return }
            let url = (tls ? server.tlsURL : server.plainURL) + path
            try await run(benchmark.scaledIterations.count, concurrency: concurrency) {
                _ = try await client.get(url)
            }
        } setup: {
            guard let server else { throw NSError(domain: "no server", code: 0) }
            let client: any BenchClient = try factory(ClientSetup(connections: concurrency, caFile: tls ? server.caFile : nil, http1Only: transport == .h1))
            _ = try await client.get((tls ? server.tlsURL : server.plainURL) + path)
            return client
        }
    }

    for concurrency in [1, 16, 64] {
        for (name, factory) in clients {
            register(name, concurrency: concurrency, path: "/json", factory: factory)
        }
    }
    for (name, factory) in clients {
        register(name, concurrency: 16, path: "/gzip", factory: factory)
    }
    // URLSession on Linux cannot trust a custom CA, so it sits out the TLS runs.
    for (name, factory) in clients where name != "urlsession" {
        for transport in [Transport.h1, .h2] {
            register(name, concurrency: 16, transport: transport, path: "/json", factory: factory)
            register(name, concurrency: 64, transport: transport, path: "/json", factory: factory)
        }
    }
}
