// A small driver for profilers: runs one scenario N times so that
// `valgrind --tool=callgrind` (stable instruction counts on a noisy machine) or `perf` can
// look at it. Not a benchmark: the numbers to report come from `swift package benchmark`.
//
//   swift build -c release --product Profile
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/load.cg .build/release/Profile load 10000
//   callgrind_annotate /tmp/load.cg | head -40
//
// Scenarios: load, load-params, fetch, cache-manager, cache-pipeline,
// `compare <concurrency> <requests> [rounds]` (wrk and the four clients against one nginx),
// `post <concurrency> <requests> <body bytes> [rounds]` (what guarding a POST against libcurl's
// silent re-send costs),
// `http <runway|raw-libcurl|async-http-client|urlsession|runway-2|raw-libcurl-2> <concurrency>
// <count> [url|plain|tls-h1|tls-h2]` (GETs against the benchmarks' nginx, started here unless a
// URL is given; `-2`: two instances called in turn, two loop threads), and `http-busy` (the same while many
// requests hang on a server that never answers; any listener that reads and stays silent, such
// as `python3 -c` with asyncio, will do).
import BenchSupport
import Foundation
import Runway
import RunwayCache
import RunwayCurl
import Synchronization

let arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.first else {
    print("usage: Profile <scenario> [count] ...")
    exit(2)
}

func count(at index: Int, default value: Int) -> Int {
    arguments.dropFirst(index).first.flatMap(Int.init) ?? value
}

// Nonisolated, so the loop runs on the global executor like a benchmark's, not on the main actor.
func runScenario(_ scenario: String) async throws {
    switch scenario {
    case "load", "load-params":
        let n = count(at: 1, default: 10_000)
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: #"{"ok":true}"#))
        let params: [String: JSON]? = scenario == "load" ? nil : ["page": 2, "city": "Shanghai"]
        for _ in 0..<n { _ = try await manager.load(params: params) }
    case "fetch":
        let n = count(at: 1, default: 1_000)
        let manager = BenchItemsAPIManager(registry: benchRegistry(body: hundredItems))
        try await manager.load()
        let reformer = BenchListReformer()
        var total = 0
        for _ in 0..<n { total &+= try manager.fetchData(with: reformer).count }
        print(total)
    case "cache-manager":
        let n = count(at: 1, default: 10_000)
        let manager = try CacheFixture(policy: .memory(), diskFile: nil).manager()
        for _ in 0..<n { _ = try await manager.load(params: CacheFixture.params) }
    case "cache-pipeline":
        let n = count(at: 1, default: 10_000)
        let fixture = try CacheFixture(policy: .memory(), diskFile: nil)
        for _ in 0..<n { _ = try await fixture.pipeline.send(fixture.request, context: fixture.context) }
    case "http":
        // http <client> <concurrency> <count> [base URL | plain | tls-h1 | tls-h2]: against the
        // given server, or the benchmarks' nginx (started here) over the given transport.
        let name = arguments.dropFirst().first ?? "runway"
        let concurrency = count(at: 2, default: 16)
        let n = count(at: 3, default: 20_000)
        let target = arguments.dropFirst(4).first ?? "plain"
        let server: Nginx? = target.contains("://") ? nil : try Nginx()
        defer { server?.stop() }
        let tls = target.hasPrefix("tls")
        let url = (server.map { tls ? $0.tlsURL : $0.plainURL } ?? target) + "/json"
        let setup = ClientSetup(connections: concurrency, caFile: tls ? server?.caFile : nil, http1Only: target == "tls-h1")
        let client = try makeClient(name, setup)
        let (elapsed, rate) = try await timedGets(client, url, n, concurrency: concurrency)
        print("\(name) c=\(concurrency): \(n) requests in \(elapsed), \(Int(rate)) req/s")
    case "http-busy":
        // http-busy <client> <concurrency> <count> <base URL> <hanging URL> <hanging count>: the
        // same GETs while <hanging count> requests to a server that never answers stay in flight
        // (long polls, slow downloads): what a turn of a dispatcher's loop costs per open transfer.
        let name = arguments.dropFirst().first ?? "runway"
        let concurrency = count(at: 2, default: 16)
        let n = count(at: 3, default: 20_000)
        guard let base = arguments.dropFirst(4).first, let hangingURL = arguments.dropFirst(5).first else {
            print("usage: Profile http-busy <client> <concurrency> <count> <base URL> <hanging URL> [hanging count]")
            exit(2)
        }
        let url = base + "/json"
        let hanging = count(at: 6, default: 200)
        let client = try makeClient(name, ClientSetup(connections: concurrency + hanging))
        let stalled = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<hanging { group.addTask { _ = try? await client.get(hangingURL) } }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .seconds(1))
        let (elapsed, rate) = try await timedGets(client, url, n, concurrency: concurrency)
        print("\(name) c=\(concurrency) with \(hanging) hanging: \(n) requests in \(elapsed), \(Int(rate)) req/s")
        stalled.cancel()
        exit(0)
    case "post":
        // post <concurrency> <requests> <body bytes> [rounds]: POSTs through a bare Runway
        // pipeline against the benchmarks' nginx, guarded by the pre-request callback that refuses
        // libcurl's silent re-send (the default for a POST), against the same with an
        // Idempotency-Key header (no guard: libcurl may send it again), interleaved.
        let concurrency = count(at: 1, default: 16)
        let n = count(at: 2, default: 20_000)
        let size = count(at: 3, default: 1024)
        let rounds = count(at: 4, default: 5)
        let server = try Nginx()
        defer { server.stop() }
        let pipeline = Pipeline(
            interceptors: [], dispatcher: CurlDispatcher(configuration: .init(maxConnectionsPerHost: concurrency)))
        let body = Data(repeating: 0x61, count: size)
        var rates: [String: [Double]] = [:]
        let variants = [("guarded", HTTPHeaders()), ("idempotency-key", ["Idempotency-Key": "k"] as HTTPHeaders)]
        for round in 0..<rounds {
            // Each goes first in every other round, so neither always warms up for the other.
            for (name, headers) in round % 2 == 0 ? variants : variants.reversed() {
                let request = try Request(method: .post, server.plainURL + "/post", headers: headers, body: body)
                _ = try await pipeline.send(request)
                let start = ContinuousClock.now
                try await run(n, concurrency: concurrency) {
                    let response = try await pipeline.send(request)
                    guard response.status == 200 else { throw RunwayError(.serverError, "status \(response.status)") }
                }
                let elapsed = ContinuousClock.now - start
                rates[name, default: []].append(Double(n) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            }
        }
        let median = { (name: String) in rates[name, default: [0]].sorted()[rates[name, default: [0]].count / 2] }
        print("POST \(size) B, c=\(concurrency), \(n) requests, median of \(rounds) interleaved rounds:")
        print("  guarded (never sent twice):  \(Int(median("guarded"))) req/s")
        print("  Idempotency-Key (no guard):  \(Int(median("idempotency-key"))) req/s")
        print("  ratio: \(String(format: "%.3f", median("guarded") / median("idempotency-key")))")
    case "compare":
        // compare <concurrency> <requests> [rounds] [path] [plain|tls-h1|tls-h2]: one nginx; wrk
        // (the ceiling: C, no Swift), then each Swift client, interleaved round after round so
        // that a machine whose load changes affects them alike; medians and ratios.
        let concurrency = count(at: 1, default: 16)
        let n = count(at: 2, default: 20_000)
        let rounds = count(at: 3, default: 3)
        let path = arguments.dropFirst(4).first ?? "/json"
        let transport = arguments.dropFirst(5).first ?? "plain"
        let server = try Nginx()
        defer { server.stop() }
        let tls = transport != "plain"
        let url = (tls ? server.tlsURL : server.plainURL) + path
        let setup = ClientSetup(connections: concurrency, caFile: tls ? server.caFile : nil, http1Only: transport == "tls-h1")
        var clients: [(String, any BenchClient)] = [
            ("raw-libcurl", RawCurlClient(setup)), ("runway", RunwayClient(setup)), ("async-http-client", try AHCClient(setup)),
        ]
        if path == "/gzip" {
            // The same stack inflating on the loop thread as the body arrives (the default inflates on the awaiting task).
            var loopDecodes = setup
            loopDecodes.responseDecoding = .loopThread
            clients.append(("runway-loop-decodes", RunwayClient(loopDecodes)))
        }
        // URLSession on Linux cannot trust a custom CA.
        if !tls { clients.append(("urlsession", URLSessionClient(setup))) }
        var rates: [String: [Double]] = [:]
        for _ in 0..<rounds {
            rates["wrk", default: []].append(wrk(url: url, connections: concurrency, gzip: path == "/gzip"))
            for (name, client) in clients {
                _ = try await client.get(url)
                let start = ContinuousClock.now
                try await run(name == "urlsession" ? n / 10 : n, concurrency: concurrency) { _ = try await client.get(url) }
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                rates[name, default: []].append(Double(name == "urlsession" ? n / 10 : n) / seconds)
            }
        }
        func median(_ name: String) -> Double { rates[name, default: [0]].sorted()[rates[name, default: [0]].count / 2] }
        print("\(path) c=\(concurrency) \(transport), median of \(rounds) rounds (req/s):")
        for name in ["wrk", "raw-libcurl", "runway", "runway-loop-decodes", "async-http-client", "urlsession"] where rates[name] != nil {
            print("  \(name): \(Int(median(name)))  [\(rates[name, default: []].map { String(Int($0)) }.joined(separator: " "))]")
        }
        let runway = median("runway")
        print(String(format: "  runway ÷ raw %.2f, ÷ AHC %.2f, ÷ URLSession %.2f; raw ÷ wrk %.2f, raw ÷ AHC %.2f",
            runway / median("raw-libcurl"), runway / median("async-http-client"), tls ? 0.0 : runway / median("urlsession"),
            median("raw-libcurl") / median("wrk"), median("raw-libcurl") / median("async-http-client")))
    default:
        print("unknown scenario \(scenario)")
        exit(2)
    }
}

/// The client called `name` on the command line.
func makeClient(_ name: String, _ setup: ClientSetup) throws -> any BenchClient {
    switch name {
    case "raw-libcurl": RawCurlClient(setup)
    case "raw-libcurl-2": Sharded([RawCurlClient(setup), RawCurlClient(setup)])
    case "runway-2": Sharded([RunwayClient(setup), RunwayClient(setup)])
    case "async-http-client": try AHCClient(setup)
    case "urlsession": URLSessionClient(setup)
    default: RunwayClient(setup)
    }
}

/// One warm-up GET, then `n` GETs of `url` with `concurrency` in flight: the time and the rate.
func timedGets(_ client: any BenchClient, _ url: String, _ n: Int, concurrency: Int) async throws -> (Duration, Double) {
    _ = try await client.get(url)
    let start = ContinuousClock.now
    try await run(n, concurrency: concurrency) { _ = try await client.get(url) }
    let elapsed = ContinuousClock.now - start
    return (elapsed, Double(n) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
}

/// Requests per second `wrk` (one thread) reaches against `url` in two seconds; 0 without wrk.
func wrk(url: String, connections: Int, gzip: Bool) -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
    process.arguments = ["-t1", "-c\(connections)", "-d2s"] + (gzip ? ["-H", "Accept-Encoding: gzip"] : []) + [url]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return 0 }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let line = output.split(separator: "\n").first { $0.hasPrefix("Requests/sec:") }
    return line.flatMap { Double($0.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
}

// Blocks the main thread on a semaphore rather than top-level `await`: valgrind 3.19 crashes in
// the signal thread that `dispatch_main` starts once Foundation is loaded.
let done = DispatchSemaphore(value: 0)
Task.detached {
    do {
        try await runScenario(scenario)
    } catch {
        print("failed: \(error)")
        exit(1)
    }
    done.signal()
}
done.wait()

/// Two or more clients of one kind, called in turn: what a second multi handle (a second loop
/// thread) would give. `http raw-libcurl-2` and `http runway-2`.
final class Sharded: BenchClient {
    let clients: [any BenchClient]
    let next = Atomic<Int>(0)

    init(_ clients: [any BenchClient]) {
        self.clients = clients
    }

    func get(_ url: String) async throws -> Int {
        try await clients[next.add(1, ordering: .relaxed).oldValue % clients.count].get(url)
    }
}
