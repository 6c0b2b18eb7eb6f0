import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// The managers end to end: CurlDispatcher against the in-process Hummingbird server.
@Suite struct ManagerServerTests {
    static let root: ServiceID = "root"
    static let profiles: ServiceID = "profiles"

    /// Runs `body` with a server carrying the manager routes and a registry pointing at it:
    /// `.listings` at `/v1`, `root` at `/`, `profiles` at `/v1` with a token authenticator.
    private func withServer(
        isolation: isolated (any Actor)? = #isolation,
        _ state: ManagerRouteState = ManagerRouteState(),
        _ body: (TestServer, ServiceRegistry, TokenAuthenticator) async throws -> Void
    ) async throws {
        let server = try await TestServer.start(routes: managerRoutes(state))
        let dispatcher = CurlDispatcher(configuration: .init(maxConnectionsPerHost: 128))
        let refreshURL = server.url("/auth/refresh")
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            let response = try await dispatcher.dispatch(Request(method: .post, url: refreshURL), context: RequestContext())
            guard response.status == 200, let token = try JSON(parsing: response.body)["token"]?.string else {
                throw RunwayError(.needsLogin, "refresh answered HTTP \(response.status)")
            }
            return token
        }
        var profiles = TestService(id: Self.profiles, baseURL: server.url("/v1").absoluteString)
        profiles.authenticator = authenticator
        let registry = try makeRegistry(
            dispatcher,
            services: [
                TestService(id: .listings, baseURL: server.url("/v1").absoluteString),
                TestService(id: Self.root, baseURL: server.baseURL.absoluteString),
                profiles,
            ])
        do {
            try await body(server, registry, authenticator)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func releasingAManagerMidFlightAbortsTheTransferAtTheServer() async throws {
        try await withServer { server, registry, _ in
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            weak var weakManager: ItemListAPIManager?
            weak var weakEngine: ManagerEngine?
            do {
                let manager = ItemListAPIManager(registry: registry, apiName: "slow", serviceID: Self.root)
                weakManager = manager
                weakEngine = manager.engine
                manager.delegate = delegate
                #expect(manager.loadData(params: ["ms": 600_000]))
                #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            }
            #expect(weakManager == nil)
            #expect(await server.waitForAbort())
            #expect(server.stats.aborts(path: "/slow") == 1)
            // Nor is its engine, the only holder of the delegate: nothing can be delivered any more.
            #expect(weakEngine == nil)
            #expect(log.events.isEmpty)
        }
    }

    /// A manager whose `engine` is computed gets a new engine on every read: refused as
    /// `.configuration` naming the property, with nothing sent, rather than cancelled as if the
    /// manager had been released.
    @Test func aManagerWhoseEngineIsComputedIsAConfigurationErrorAndNothingIsSent() async throws {
        final class ComputedEngine: APIManager {
            let registry: ServiceRegistry
            var engine: ManagerEngine { ManagerEngine(registry: registry, delivery: .inline) }
            let apiName = "search"
            let serviceID: ServiceID = .listings
            init(registry: ServiceRegistry) { self.registry = registry }
        }
        try await withServer { server, registry, _ in
            let manager = ComputedEngine(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.load(params: ["ms": 0]) }
            #expect(error?.code == .configuration)
            #expect(error?.field == "engine")
            #expect(manager.loadData() == false)
            #expect(server.stats.requests(path: "/v1/search") == 0)
            // The same API through a manager that stores its engine goes out.
            _ = try await ItemListAPIManager(registry: registry, apiName: "search").load(params: ["ms": 0])
            #expect(server.stats.requests(path: "/v1/search") == 1)
        }
    }

    /// The paged calls too: a `PagedAPIManager` whose `engine` is computed is refused as
    /// `.configuration` naming the property, with nothing sent, rather than ending each page as if
    /// the manager had been released.
    @Test func aPagedManagerWhoseEngineIsComputedIsAConfigurationErrorAndNothingIsSent() async throws {
        final class ComputedEnginePages: PagedAPIManager {
            let registry: ServiceRegistry
            var engine: ManagerEngine { ManagerEngine(registry: registry, delivery: .inline) }
            let apiName = "pages"
            let serviceID: ServiceID = .listings
            init(registry: ServiceRegistry) { self.registry = registry }
        }
        let state = ManagerRouteState()
        try await withServer(state) { server, registry, _ in
            let manager = ComputedEnginePages(registry: registry)
            let error = await #expect(throws: RunwayError.self) { try await manager.loadNextPage() }
            #expect(error?.code == .configuration, "\(String(describing: error))")
            #expect(error?.field == "engine")
            #expect(server.stats.requests(path: "/v1/pages") == 0)
            // The same pages through a manager that stores its engine go out.
            _ = try await PagedAPIManagerOverServer(registry: registry).loadNextPage()
            #expect(state.pages.events == ["1"])
        }
    }

    @Test func aSupersededLoadIsAbortedAtTheServerAndLeavesItsCallersTaskAlone() async throws {
        // An awaited call runs in the caller's task: cancelPrevious must stop it at the
        // dispatcher (the server sees the abort) without cancelling that task.
        try await withServer { server, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "slow", serviceID: Self.root, policy: .cancelPrevious)
            let first = Task {
                let result = await outcome { try await manager.load(params: ["ms": 600_000]) }
                return (result, Task.isCancelled)
            }
            #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            let started = ContinuousClock.now
            let second = await outcome { try await manager.load(params: ["ms": 1]) }
            let (result, callerCancelled) = await first.value
            // Long before its ten minutes of body.
            #expect(ContinuousClock.now - started < .seconds(60))
            // `/slow` answers bytes, not JSON: the newer call lands (as a failure of its own).
            #expect(second.failure?.code == .responseInvalid)
            #expect(server.stats.requests(path: "/slow") == 2)
            #expect(result.failure?.code == .cancelled)
            #expect(result.failure?.message.contains("superseded") == true)
            #expect(!callerCancelled)
            #expect(await server.waitForAbort())
            #expect(server.stats.aborts(path: "/slow") == 1)
            #expect(manager.lastError?.code == .responseInvalid)
        }
    }

    @Test func anUnfollowedRedirectIsAFailureNotData() async throws {
        try await withServer { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "redirect-to", serviceID: Self.root)
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            for status in [301, 302, 303, 307, 308] {
                let result = await outcome { try await manager.load(params: ["url": "/elsewhere", "status": .int(Int64(status))]) }
                #expect(result.failure?.code == .responseInvalid, "\(status): \(String(describing: result.failure))")
                #expect(result.failure?.message.contains("HTTP \(status)") == true)
                #expect(result.failure?.message.contains("to /elsewhere") == true)
                #expect(result.failure?.response?.status == status)
            }
            #expect(manager.fetchData() == nil)
            #expect(log.events == Array(repeating: "delegate.fail(responseInvalid)", count: 5))
        }
    }

    @Test func cancelAllStopsAnAwaitedLoadAtTheServer() async throws {
        try await withServer { server, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "slow", serviceID: Self.root)
            let call = Task { await outcome { try await manager.load(params: ["ms": 600_000]) } }
            #expect(await server.stats.wait { $0.requests(path: "/slow") == 1 })
            manager.cancelAll()
            #expect(await call.value.failure?.message.contains("cancelAll") == true)
            #expect(await server.waitForAbort())
            #expect(!manager.isLoading)
            #expect(manager.lastError == nil)
        }
    }

    // The three policies with 100 calls made at once: `/v1/search?hold=1` holds every request
    // until the policy has dealt with every call (``callsAtOnce(_:opening:once:_:)``), so no
    // answer comes before the last call is made, however slowly a loaded machine starts them.

    @Test func dropNewUnderAHundredConcurrentCallsSendsOneRequest() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "search", policy: .dropNew)
            let results = await callsAtOnce(100, opening: state.searchGate, once: .ended(99)) { index in
                await outcome { try await manager.load(params: ["q": .int(Int64(index)), "hold": 1]) }
            }
            #expect(state.searches.value == 1)
            #expect(results.compactMap(\.success).count == 1)
            #expect(results.compactMap(\.failure).filter { $0.code == .cancelled }.count == 99)
        }
    }

    @Test func shareInFlightUnderAHundredConcurrentCallsSendsOneRequest() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "search", policy: .shareInFlight)
            let results = await callsAtOnce(100, opening: state.searchGate, once: .configured(manager, 100)) { _ in
                await outcome { try await manager.load(params: ["q": "loft", "hold": 1]) }
            }
            #expect(state.searches.value == 1)
            #expect(results.compactMap(\.success) == Array(repeating: ["q": "loft"], count: 100))
        }
    }

    @Test func cancelPreviousUnderAHundredConcurrentCallsLandsOnlyTheLast() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "search", policy: .cancelPrevious)
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            let results = await callsAtOnce(100, opening: state.searchGate, once: .ended(99)) { index in
                await outcome { try await manager.load(params: ["q": .int(Int64(index)), "hold": 1]) }
            }
            let successes = results.compactMap(\.success)
            #expect(successes.count == 1)
            #expect(results.compactMap(\.failure).allSatisfy { $0.code == .cancelled })
            #expect(manager.rawData == successes.first)
            #expect(log.events == ["delegate.success"])
            #expect(state.searches.value <= 100)
        }
    }

    @Test("cancelPrevious supersedes a call whose response is in but whose delivery waits: the screen never hears the older search")
    func cancelPreviousReachesACallWaitingForItsDelivery() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            // The delivery queue is busy (suspended here, as a main thread busy with a keystroke would be).
            let queue = DispatchQueue(label: "busy landing")
            queue.suspend()
            let manager = ItemListAPIManager(registry: registry, apiName: "search", policy: .cancelPrevious, delivery: .queue(queue))
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            let older = Task { try await manager.load(params: ["q": "a", "ms": 0]) }
            // Landed: answered, the call no longer loading; its delivery waits (and the state
            // takes its data only when that runs).
            #expect(await eventually { state.searches.value == 1 && !manager.isLoading })
            #expect(manager.rawData == nil)
            let newer = Task { try await manager.load(params: ["q": "ab", "ms": 0]) }
            #expect(await eventually { state.searches.value == 2 && !manager.isLoading })
            queue.resume()
            let olderOutcome = await outcome { try await older.value }
            #expect(olderOutcome.failure?.code == .cancelled, "\(olderOutcome)")
            #expect(olderOutcome.failure?.message.contains("superseded") == true, "\(olderOutcome)")
            let newerValue = try await newer.value
            #expect(newerValue == ["q": "ab"])
            #expect(manager.rawData == ["q": "ab"])
            #expect(log.events == ["delegate.success"])
        }
    }

    @Test("under cancelPrevious a newer call whose parameters are refused still supersedes the search in flight")
    func cancelPreviousBySearchWithInvalidParameters() async throws {
        let state = ManagerRouteState()
        let bound = state.searchGate.open(after: .seconds(120))
        defer { bound.cancel() }
        try await withServer(state) { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "search", policy: .cancelPrevious)
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            let older = Task { try await manager.load(params: ["q": "ab", "ms": 0, "hold": 1]) }
            #expect(await eventually { state.searches.value == 1 })
            // A number no URL can carry: refused before the network, as a validator's refusal is.
            let newer = await outcome { try await manager.load(params: ["q": .double(.nan)]) }
            #expect(newer.failure?.code == .paramsInvalid, "\(newer)")
            let olderOutcome = await outcome { try await older.value }
            #expect(olderOutcome.failure?.code == .cancelled, "\(olderOutcome)")
            #expect(!state.searchGate.isOpened, "the older search waited for the server")
            state.searchGate.open()  // the server's handler, still holding the cut request, ends
            #expect(await eventually { log.events == ["delegate.fail(paramsInvalid)"] }, "\(log.events)")
        }
    }

    @Test func twentyConcurrent401sRefreshTheTokenExactlyOnce() async throws {
        // The server answers the twenty 401s once all twenty requests are in: no call can learn
        // of the expired token (and wait for the refresh instead of being sent) before all are
        // sent, however slowly the machine runs them. A bound of minutes, should one never come.
        let state = ManagerRouteState(holdsUnauthorized: 20)
        let bound = state.unauthorizedGate.open(after: .seconds(120))
        defer { bound.cancel() }
        try await withServer(state) { _, registry, authenticator in
            let manager = ItemListAPIManager(registry: registry, apiName: "profile", serviceID: Self.profiles)
            let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
                for index in 0..<20 {
                    group.addTask { await outcome { try await manager.load(params: ["n": .int(Int64(index))]) } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.compactMap(\.success) == Array(repeating: ["name": "Ann"], count: 20))
            #expect(state.unauthorized.value == 20)
            #expect(state.refreshes.value == 1)
            #expect(authenticator.token == "fresh")
        }
    }

    @Test func aFailedRefreshFailsAllTwentyCallsWithNeedsLogin() async throws {
        let state = ManagerRouteState(refreshFails: true)
        try await withServer(state) { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "profile", serviceID: Self.profiles)
            let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
                for index in 0..<20 {
                    group.addTask { await outcome { try await manager.load(params: ["n": .int(Int64(index))]) } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failures = results.compactMap(\.failure)
            #expect(failures.count == 20)
            #expect(failures.allSatisfy { $0.code == .needsLogin })
            #expect(state.refreshes.value == 1)
        }
    }

    @Test func concurrentNextPageCallsAskTheServerForEachPageOnce() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            let manager = PagedAPIManagerOverServer(registry: registry)
            let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
                for _ in 0..<8 {
                    group.addTask { await outcome { try await manager.loadNextPage() } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(state.pages.events == ["1", "2", "3", "4", "5"])
            let ids = results.compactMap(\.success).flatMap { $0["items"]?.array ?? [] }.compactMap { $0["id"]?.int }
            #expect(ids.sorted() == Array(0..<45))
            #expect(manager.isLastPage)
        }
    }

    @Test("a list refreshed while a page loads never hears of that page: resetPages() cancels it and the next call asks for page 1")
    func resetPagesWhileAPageLoadsCancelsThatPage() async throws {
        let state = ManagerRouteState()
        try await withServer(state) { _, registry, _ in
            let manager = PagedAPIManagerOverServer(registry: registry)
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            try await manager.loadNextPage()
            // Page 2, held by the server; a page queued behind it.
            let held = Task { try await manager.loadNextPage(params: ["hold": 1]) }
            #expect(await eventually { state.pages.events == ["1", "2"] })
            // Asked for before the refresh, on the delegate path (it counts as asked for at once).
            manager.loadNextPageData()
            // Pull to refresh; the server may then answer page 2.
            manager.resetPages()
            state.pageGate.open()
            let heldOutcome = await outcome { try await held.value }
            #expect(heldOutcome.failure?.code == .cancelled, "\(heldOutcome)")
            #expect(heldOutcome.failure?.message.contains("resetPages") == true, "\(heldOutcome)")
            let first = try await manager.loadNextPage()
            #expect(first["items"]?[0]?["id"] == 0)
            #expect(manager.currentPage == 1)
            #expect(manager.rawData == first)
            // Page 1, then page 1 again: never page 2 in between or after.
            #expect(log.events == ["delegate.success", "delegate.success"])
            #expect(state.pages.events == ["1", "2", "1"])
        }
    }

    @Test @MainActor func theDelegatePathLandsOnTheMainActorOverTheNetwork() async throws {
        try await withServer { _, registry, _ in
            let manager = ItemListAPIManager(registry: registry, apiName: "search", delivery: .mainActor)
            let screen = MainActorListScreen()
            manager.delegate = screen
            #expect(manager.loadData(params: ["q": "x", "ms": 10]))
            #expect(manager.isLoading)
            #expect(await eventually { screen.successes == 1 })
            #expect(!manager.isLoading)
            #expect(manager.rawData == ["q": "x"])
        }
    }
}

final class PagedAPIManagerOverServer: PagedAPIManager {
    let engine: ManagerEngine
    let apiName = "pages"
    let serviceID: ServiceID = .listings
    var pageSize: Int { 10 }
    init(registry: ServiceRegistry) { engine = ManagerEngine(registry: registry, delivery: .inline) }
}
