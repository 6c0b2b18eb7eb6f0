// A small driver for profilers: runs one scenario N times so that
// `valgrind --tool=callgrind` (stable instruction counts on a noisy machine) or `perf` can
// look at it. Not a benchmark: the numbers to report come from `swift package benchmark`.
//
//   swift build -c release --product Profile
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/load.cg .build/release/Profile load 10000
//   callgrind_annotate /tmp/load.cg | head -40
//
// Scenarios: load, load-params, fetch, cache-manager, cache-pipeline, and
// `http <runway|raw-libcurl|async-http-client|urlsession> <concurrency> [url]` (GETs against the
// benchmarks' nginx, started here unless a URL is given).
import BenchSupport
import Foundation
import Runway
import RunwayCache

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
        // http <client> <concurrency> <count> [base URL]
        let name = arguments.dropFirst().first ?? "runway"
        let concurrency = count(at: 2, default: 16)
        let n = count(at: 3, default: 20_000)
        let server: Nginx? = arguments.count > 4 ? nil : try Nginx()
        defer { server?.stop() }
        let url = (arguments.dropFirst(4).first ?? server!.plainURL) + "/json"
        let setup = ClientSetup(connections: concurrency)
        let client: any BenchClient =
            switch name {
            case "raw-libcurl": RawCurlClient(setup)
            case "async-http-client": try AHCClient(setup)
            case "urlsession": URLSessionClient(setup)
            default: RunwayClient(setup)
            }
        _ = try await client.get(url)
        let start = ContinuousClock.now
        try await run(n, concurrency: concurrency) { _ = try await client.get(url) }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("\(name) c=\(concurrency): \(n) requests in \(elapsed), \(Int(Double(n) / seconds)) req/s")
    default:
        print("unknown scenario \(scenario)")
        exit(2)
    }
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
