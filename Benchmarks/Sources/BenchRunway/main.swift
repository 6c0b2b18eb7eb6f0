// Runway's clients, one per process: `BenchRunway <mode> --url URL --c 16 --n 20000 [...]`
// (see BenchHarness). Modes:
//
// - `bare`: a `Pipeline` with no interceptors and a `CurlDispatcher` (c connections per host).
// - `chain`: the standard chain as an app registers it (`standardChain`), each call sent with the
//   API's context, to `api.bench.test`, which only the DNS bypass resolves (to 127.0.0.1).
// - `manager`: an API manager's `load()` over that chain; one manager per worker (a manager
//   drops a call while its previous one runs), default delivery (the main actor).
// - `manager-inline`: the same with `ManagerDelivery.inline` (a server's or a tool's choice: the
//   landing runs on the task that finished the call, with no hop to the main actor).
// - `bare-loop`, `chain-loop`: `bare` and `chain` with the workers on the dispatcher's loop thread
//   (their executor preference is `CurlDispatcher.loopExecutor`).
// - `one:<interceptor>`: a chain of that one interceptor (`one:none`: no interceptor), to
//   `localhost`, with the chain's context: what each interceptor adds (scripts/interceptors.py).
// - `pair:<interceptor>`: that chain and an empty one over one dispatcher, in alternating blocks
//   of `--n` requests, `--pairs` times: the CPU the interceptor adds (scripts/interceptors.py).
import BenchChain
import BenchHarness
import Dispatch
import Runway
import RunwayCurl

#if canImport(Glibc)
import Glibc
#endif

// Not the whole of Foundation where the essentials exist: the client process then links what
// Runway links, and its peak RSS says what Runway costs.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let options = Options()
let chosen = options.mode ?? "bare"
/// `bare-loop` and `chain-loop` run `bare` and `chain` with the workers on the loop thread.
let onLoop = chosen.hasSuffix("-loop")
let mode = onLoop ? String(chosen.dropLast(5)) : chosen
if onLoop, mode != "bare", mode != "chain" { fail("only bare and chain run on the loop: \(chosen)", code: 2) }
let apiName = benchAPIName
let serviceID: ServiceID = "bench"

let requestOptions = {
    var requestOptions = RequestOptions()
    if let caFile = options.caFile { requestOptions.tls.certificateAuthorities = .file(caFile) }
    requestOptions.httpVersion = options.http2 ? .automatic : .http1
    return requestOptions
}()

/// `options.url` with its host replaced.
func url(host: String) -> String {
    guard var parts = URLComponents(string: options.url) else { fail("bad URL \(options.url)") }
    parts.host = host
    return parts.string ?? options.url
}

/// Each standard interceptor as an app registers it (BenchChain), or the end of the run.
func interceptor(_ name: String, bypassHost: String) async throws -> any Interceptor {
    guard let made = try await BenchChain.interceptor(name, bypassHost: bypassHost) else { fail("unknown interceptor \(name)", code: 2) }
    return made
}

func dispatcher() -> CurlDispatcher {
    CurlDispatcher(configuration: .init(maxConnectionsPerHost: options.concurrency))
}

struct BenchService: Service {
    let id: ServiceID = serviceID
    let baseURLs: BaseURLs
}

final class ItemsAPIManager: APIManager {
    let engine: ManagerEngine
    let apiName = benchAPIName
    let serviceID: ServiceID = "bench"
    let path: String
    let requestOptions: RequestOptions

    init(registry: ServiceRegistry, path: String, options: RequestOptions, delivery: ManagerDelivery) {
        engine = ManagerEngine(registry: registry, delivery: delivery)
        self.path = path
        requestOptions = options
    }
}

let client =
    "runway-"
    + (chosen.hasPrefix("one:") ? "one-" + chosen.dropFirst(4) : chosen.hasPrefix("pair:") ? "pair-" + chosen.dropFirst(5) : chosen)

func runMode() async throws {
    switch mode {
    case "bare":
        let dispatcher = dispatcher()
        let pipeline = Pipeline(interceptors: [], dispatcher: dispatcher)
        let request = try Request(options.url, options: requestOptions)
        await measure(client: client, options, executor: onLoop ? dispatcher.loopExecutor : nil) { _ in
            try await pipeline.send(request).body.count
        }
    case "chain",
        _ where mode.hasPrefix("one:"):
        let host = mode == "chain" ? "api.bench.test" : "localhost"
        var interceptors: [any Interceptor] = []
        for name in mode == "chain" ? standardChain : [String(mode.dropFirst(4))] where name != "none" {
            interceptors.append(try await interceptor(name, bypassHost: host))
        }
        let dispatcher = dispatcher()
        let pipeline = Pipeline(interceptors: interceptors, dispatcher: dispatcher)
        let request = try Request(url(host: host), options: requestOptions)
        let context = RequestContext(apiName: apiName, serviceID: serviceID)
        await measure(client: client, options, executor: onLoop ? dispatcher.loopExecutor : nil) { _ in
            try await pipeline.send(request, context: context).body.count
        }
    case _ where mode.hasPrefix("pair:"):
        // The interceptor against none, in alternating blocks of one process over one
        // dispatcher (`measurePaired`): what the interceptor adds, without the drift between runs.
        let name = String(mode.dropFirst(5))
        let dispatcher = dispatcher()
        let base = Pipeline(interceptors: [], dispatcher: dispatcher)
        // `pair:none` sets the empty chain against itself: the method's own noise.
        let added = name == "none" ? [] : [try await interceptor(name, bypassHost: "localhost")]
        let variant = Pipeline(interceptors: added, dispatcher: dispatcher)
        let request = try Request(url(host: "localhost"), options: requestOptions)
        let context = RequestContext(apiName: apiName, serviceID: serviceID)
        await measurePaired(
            client: client, options, pairs: options.pairs,
            base: { _ in try await base.send(request, context: context).body.count },
            variant: { _ in try await variant.send(request, context: context).body.count })
    case "manager", "manager-inline":
        var interceptors: [any Interceptor] = []
        for name in standardChain { interceptors.append(try await interceptor(name, bypassHost: "api.bench.test")) }
        let pipeline = Pipeline(interceptors: interceptors, dispatcher: dispatcher())
        guard let target = URLComponents(string: url(host: "api.bench.test")) else { fail("bad URL") }
        var base = target
        base.path = ""
        var builder = ServiceRegistry.Builder(environment: .release, pipeline: pipeline)
        builder.register(BenchService(baseURLs: BaseURLs(base.string ?? "")))
        let registry = try builder.build()
        let managers = (0..<options.concurrency).map { _ in
            ItemsAPIManager(
                registry: registry, path: String(target.path.dropFirst()), options: requestOptions,
                delivery: mode == "manager" ? .mainActor : .inline)
        }
        await measure(client: client, options) { worker in
            let manager = managers[worker]
            try await manager.load()
            return manager.lastResponse?.body.count ?? -1
        }
    default:
        fail(
            "unknown mode \(chosen): bare, chain, (bare|chain)-loop, manager, manager-inline, one:<interceptor>, pair:<interceptor>",
            code: 2)
    }
}

// Not top-level `await`: that starts `dispatch_main`, whose signal thread valgrind 3.19 (the
// per-interceptor instruction counts) crashes in. The manager delivers on the main actor, so
// its main thread runs the main queue; the others block it.
Task.detached {
    do {
        try await runMode()
    } catch {
        fail("\(client): \(error)")
    }
    exit(0)
}
if mode == "manager" {
    dispatchMain()
} else {
    DispatchSemaphore(value: 0).wait()
}
