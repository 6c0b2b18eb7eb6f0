import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwaySync
import RunwayTestServer
import RunwayTesting
import Testing

/// A stub that waits `delay` (cancellably), counts requests and cancellations, and echoes the
/// `q` query parameter.
func slowEchoStub(delay: Duration, requests: Counter = Counter(), cancellations: Counter = Counter()) -> StubDispatcher {
    heldEchoStub(requests: requests, cancellations: cancellations) { try await Task.sleep(for: delay) }
}

/// A stub that holds every request until `gate` opens (a cancelled call leaves at once, as at a
/// real dispatcher), counts requests and cancellations, and echoes the `q` query parameter.
func gatedEchoStub(_ gate: Gate, requests: Counter = Counter(), cancellations: Counter = Counter()) -> StubDispatcher {
    heldEchoStub(requests: requests, cancellations: cancellations) { try await gate.waitUnlessCancelled() }
}

/// A call that does not end on its own during a test: a stub's wait for an answer that a
/// cancellation must cut short.
let neverDuringATest: Duration = .seconds(600)

private func heldEchoStub(requests: Counter, cancellations: Counter, hold: @escaping @Sendable () async throws -> Void) -> StubDispatcher {
    StubDispatcher { request in
        requests.increment()
        do {
            try await hold()
        } catch {
            cancellations.increment()
            throw error
        }
        let q = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "q" }?.value ?? ""
        return RunwayCore.Response(status: 200, body: Data(#"{"q":"\#(q)"}"#.utf8))
    }
}

/// Each policy with 100 calls made at once, against a stub that holds every request until the
/// policy has dealt with every call (``callsAtOnce(_:opening:once:_:)``): a call in flight never
/// ends before the last one is made, however slowly a loaded machine starts them.
@Suite struct LoadPolicyTests {
    @Test func dropNewKeepsTheCallInFlightAndDropsTheOthers() async throws {
        let requests = Counter()
        let gate = Gate()
        let manager = ItemListAPIManager(registry: try makeRegistry(gatedEchoStub(gate, requests: requests)), policy: .dropNew)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        // The dropped calls end at once; the one in flight waits for the gate.
        let results = await callsAtOnce(100, opening: gate, once: .ended(99)) { index in
            await outcome { try await manager.load(params: ["q": .int(Int64(index))]) }
        }
        #expect(requests.value == 1)
        #expect(results.filter { $0.success != nil }.count == 1)
        let dropped = results.compactMap(\.failure)
        #expect(dropped.count == 99)
        #expect(dropped.allSatisfy { $0.code == .cancelled && $0.message.contains("dropped") })
        #expect(log.events == ["delegate.success"])
        #expect(!manager.isLoading)
    }

    @Test func cancelPreviousLetsOnlyTheLatestCallLand() async throws {
        let cancellations = Counter()
        let requests = Counter()
        let gate = Gate()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(gatedEchoStub(gate, requests: requests, cancellations: cancellations)), policy: .cancelPrevious)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        // Each call supersedes the one before it, which ends at once; the last waits for the gate.
        let results = await callsAtOnce(100, opening: gate, once: .ended(99)) { index in
            await outcome { try await manager.load(params: ["q": .int(Int64(index))]) }
        }
        let successes = results.compactMap(\.success)
        #expect(successes.count == 1)
        #expect(results.compactMap(\.failure).allSatisfy { $0.code == .cancelled && $0.message.contains("superseded") })
        #expect(manager.rawData == successes.first)
        #expect(log.events == ["delegate.success"])
        // Every superseded call that reached the dispatcher was cancelled there.
        #expect(await eventually { cancellations.value == requests.value - 1 })
    }

    @Test func shareInFlightSendsOneRequestForIdenticalCalls() async throws {
        let requests = Counter()
        let gate = Gate()
        let manager = ItemListAPIManager(registry: try makeRegistry(gatedEchoStub(gate, requests: requests)), policy: .shareInFlight)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        // A call joins the one in flight right after `configure`, under the engine's lock: the
        // gate opens once all 101 have got that far.
        let results = await callsAtOnce(101, opening: gate, once: .configured(manager, 101)) { index in
            await outcome { try await manager.load(params: ["q": index == 100 ? "other" : "same"]) }
        }
        #expect(requests.value == 2)
        #expect(results.compactMap(\.success).filter { $0 == ["q": "same"] }.count == 100)
        #expect(results.compactMap(\.success).filter { $0 == ["q": "other"] }.count == 1)
        #expect(log.events == ["delegate.success", "delegate.success"])
    }

    /// A service whose `Accept-Language` follows a setting, with a user's token.
    struct AccountLocaleService: Service {
        let id: ServiceID = .listings
        let baseURLs: BaseURLs
        let locale: EventLog
        let authenticator: TokenAuthenticator?
        var commonHeaders: HTTPHeaders { ["Accept-Language": locale.events.last ?? "none"] }
    }

    /// `GET echo` under `shareInFlight`, with a total timeout the test changes.
    final class OptionsEchoAPIManager: APIManager {
        let engine: ManagerEngine
        let apiName = "held"
        let serviceID: ServiceID = .listings
        let loadPolicy: LoadPolicy = .shareInFlight
        let timeout = Locked<Duration?>(nil)
        var requestOptions: RequestOptions {
            var options = RequestOptions()
            if let timeout = timeout.withLock({ $0 }) { options.timeout = timeout }
            return options
        }

        init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
    }

    @Test("under shareInFlight, a call made after the locale, the user or the options changed does not join the call in flight")
    func shareInFlightKeepsCallsOfAnotherLocaleUserOrOptionsApart() async throws {
        // Every request waits at the server until the gate opens: each call is in flight when the
        // next is made, however slow the machine.
        let gate = Gate()
        let held: TestServer.Routes = { router in
            router.get("/held") { request, _ -> Hummingbird.Response in
                await gate.wait()
                var headers: [String: String] = [:]
                for field in request.headers { headers[field.name.canonicalName] = field.value }
                let body = try JSONEncoder().encode(["headers": headers])
                return Hummingbird.Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
        }
        try await withTestServer(routes: held) { server in
            let base = server.baseURL.absoluteString
            let locale = EventLog()
            locale.append("en")
            let authenticator = TokenAuthenticator(token: "alice-token", identity: "alice") { _ in "refreshed" }
            let service = AccountLocaleService(
                baseURLs: BaseURLs(develop: base, releaseCandidate: base, release: base), locale: locale, authenticator: authenticator)
            let registry = try makeRegistry(CurlDispatcher(), services: [service], environment: .release)
            let manager = ItemListAPIManager(registry: registry, apiName: "held", policy: .shareInFlight)
            func echoed(_ call: Task<JSON, any Error>) async throws -> (language: String?, authorization: String?) {
                let headers = try await call.value["headers"]
                return (headers?["accept-language"]?.string, headers?["authorization"]?.string)
            }

            let first = Task { try await manager.load() }
            #expect(await eventually { server.stats.requests(path: "/held") == 1 })
            let joined = Task { try await manager.load() }
            // Past `configure`, a call has read the headers and joined or started.
            #expect(await eventually { manager.configured.value == 2 })
            locale.append("fr")
            let french = Task { try await manager.load() }
            #expect(await eventually { server.stats.requests(path: "/held") == 2 })
            authenticator.setToken("bob-token", identity: "bob")
            let bob = Task { try await manager.load() }
            #expect(await eventually { server.stats.requests(path: "/held") == 3 })
            // Other request options (here another timeout) make another call too.
            let timed = OptionsEchoAPIManager(registry: registry)
            let withDefaults = Task { try await timed.load() }
            #expect(await eventually { server.stats.requests(path: "/held") == 4 })
            timed.timeout.withLock { $0 = .seconds(30) }
            let withTimeout = Task { try await timed.load() }
            #expect(await eventually { server.stats.requests(path: "/held") == 5 })
            gate.open()
            _ = try await (withDefaults.value, withTimeout.value)

            #expect(try await echoed(first) == ("en", "Bearer alice-token"))
            #expect(try await echoed(joined) == ("en", "Bearer alice-token"))
            #expect(try await echoed(french) == ("fr", "Bearer alice-token"))
            #expect(try await echoed(bob) == ("fr", "Bearer bob-token"))
            #expect(server.stats.requests(path: "/held") == 5)
        }
    }

    @Test func underShareInFlightACancelledCallerLeavesAtOnceAndTheSharedCallGoesOn() async throws {
        let requests = Counter()
        let cancellations = Counter()
        let gate = Gate()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(gatedEchoStub(gate, requests: requests, cancellations: cancellations)), policy: .shareInFlight)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let first = Task { await outcome { try await manager.load(params: ["q": "same"]) } }
        #expect(await eventually { requests.value == 1 })
        // Joins the call in flight before returning (the delegate path), so it is shared.
        #expect(manager.loadData(params: ["q": "same"]))
        first.cancel()
        let cancelled = await first.value
        #expect(cancelled.failure?.code == .cancelled)
        // It left without waiting for the shared call (held at the gate), which goes on for the delegate.
        #expect(log.events.isEmpty)
        #expect(manager.isLoading)
        gate.open()
        #expect(await eventually { log.events == ["delegate.success"] })
        #expect(requests.value == 1)
        #expect(cancellations.value == 0)
    }

    @Test func underShareInFlightTheLastCancelledCallerCancelsTheCall() async throws {
        let requests = Counter()
        let cancellations = Counter()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(slowEchoStub(delay: neverDuringATest, requests: requests, cancellations: cancellations)),
            policy: .shareInFlight)
        let callers = (0..<3).map { _ in Task { await outcome { try await manager.load(params: ["q": "same"]) } } }
        #expect(await eventually { requests.value == 1 })
        for caller in callers { caller.cancel() }
        for caller in callers { #expect(await caller.value.failure?.code == .cancelled) }
        #expect(await eventually { cancellations.value == 1 })
        #expect(await eventually { !manager.isLoading })
        #expect(requests.value == 1)
    }

    @Test func concurrentStartsEveryCall() async throws {
        let requests = Counter()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(slowEchoStub(delay: .milliseconds(50), requests: requests)), policy: .concurrent)
        let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
            for index in 0..<20 {
                group.addTask { await outcome { try await manager.load(params: ["q": .int(Int64(index))]) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(requests.value == 20)
        #expect(results.compactMap(\.success).count == 20)
    }

    @Test func thePolicyAlsoGovernsTheDelegatePath() async throws {
        let requests = Counter()
        let gate = Gate()
        let manager = ItemListAPIManager(registry: try makeRegistry(gatedEchoStub(gate, requests: requests)), policy: .dropNew)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        #expect(manager.loadData())
        #expect(manager.isLoading)
        #expect(manager.loadData() == false)
        let awaited = await outcome { try await manager.load() }
        #expect(awaited.failure?.code == .cancelled)
        gate.open()
        #expect(await eventually { !manager.isLoading })
        #expect(requests.value == 1)
        #expect(log.events == ["delegate.success"])
    }

    @Test func cancellingTheAwaitingTaskCancelsTheCallAtTheDispatcher() async throws {
        let cancellations = Counter()
        let requests = Counter()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(slowEchoStub(delay: neverDuringATest, requests: requests, cancellations: cancellations)))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let task = Task { await outcome { try await manager.load() } }
        #expect(await eventually { requests.value == 1 })
        task.cancel()
        let result = await task.value
        #expect(result.failure?.code == .cancelled)
        #expect(await eventually { cancellations.value == 1 })
        #expect(!manager.isLoading)
        #expect(log.events.isEmpty)
    }

    @Test func aLoadFromACancelledTaskIsNotStartedEvenWhenTheChainAnswersAtOnce() async throws {
        let requests = Counter()
        let stub = StubDispatcher { _ in
            requests.increment()
            return RunwayCore.Response(status: 200, body: Data(#"{"ok":true}"#.utf8))
        }
        let manager = ItemListAPIManager(registry: try makeRegistry(stub))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await outcome { try await manager.load() }
        }
        let result = await task.value
        #expect(result.failure?.code == .cancelled)
        #expect(result.failure?.message.contains("not started") == true)
        #expect(requests.value == 0)
        #expect(log.events.isEmpty)
        #expect(!manager.isLoading)
        // The manager still works for a caller that is not cancelled.
        #expect(await outcome { try await manager.load() }.success == ["ok": true])
        #expect(requests.value == 1)
    }

    @Test func cancelAllEndsEveryCallWithoutDelivery() async throws {
        let cancellations = Counter()
        let requests = Counter()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(slowEchoStub(delay: neverDuringATest, requests: requests, cancellations: cancellations)))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let task = Task { await outcome { try await manager.load() } }
        #expect(manager.loadData())
        #expect(await eventually { requests.value == 2 })
        manager.cancelAll()
        #expect(!manager.isLoading)
        let result = await task.value
        #expect(result.failure?.code == .cancelled)
        #expect(await eventually { cancellations.value == 2 })
        #expect(log.events.isEmpty)
    }
}
