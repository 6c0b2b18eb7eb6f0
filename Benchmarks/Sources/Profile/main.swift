// A small driver for profilers: runs one in-process scenario N times so that
// `valgrind --tool=callgrind` (stable instruction counts on a noisy machine) or `perf` can
// look at it. Not a benchmark.
//
//   swift build -c release --product Profile
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/load.cg .build/release/Profile load 10000
//   callgrind_annotate /tmp/load.cg | head -40
//
// Scenarios: load, load-params, fetch, cache-manager, cache-pipeline, sign (the signing
// interceptor's work on the benchmarks' GET, without I/O). The HTTP clients are
// measured one process each by `scripts/bench.py` (see README.md).
import BenchSupport
import Foundation
import Runway
import RunwayCache
import RunwaySigning

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
    case "sign":
        let n = count(at: 1, default: 10_000)
        let signing = try SigningInterceptor.signing(secret: "bench-secret-0123456789abcdef", keyID: "bench")
        let request = try Request("http://api.bench.test:8080/json")
        var total = 0
        for _ in 0..<n { total &+= try signing.sign(request, apiName: "bench.items").headers.count }
        print(total)
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
