import Foundation
import RunwayTestServer
import RunwayTesting
import Testing

@testable import Runway

@Suite struct TokenAuthenticatorTests {
    struct RefreshFailed: Error {}

    /// Accepts only `Bearer fresh`; 401 otherwise.
    private func tokenStub(requests: Counter) -> StubDispatcher {
        StubDispatcher { request in
            requests.increment()
            try await Task.sleep(for: .milliseconds(20))
            if request.headers["Authorization"] == "Bearer fresh" {
                return Response(status: 200, body: Data(#"{"ok":true}"#.utf8))
            }
            return Response(status: 401, body: Data(#"{"error":"expired"}"#.utf8))
        }
    }

    @Test func twentyConcurrentExpiriesRefreshOnceAndReplay() async throws {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { expired in
            #expect(expired == "stale")
            refreshes.increment()
            try await Task.sleep(for: .milliseconds(100))
            return "fresh"
        }
        var service = TestService()
        service.authenticator = authenticator
        let requests = Counter()
        let registry = try makeRegistry(tokenStub(requests: requests), services: [service])
        let manager = ItemListAPIManager(registry: registry, policy: .concurrent)
        let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
            for index in 0..<20 {
                group.addTask { await outcome { try await manager.load(params: ["n": .int(Int64(index))]) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.compactMap(\.success).count == 20)
        #expect(refreshes.value == 1)
        #expect(authenticator.refreshCount == 1)
        #expect(authenticator.token == "fresh")
        #expect(requests.value == 40)

        // Later calls use the new token straight away.
        try await manager.load()
        #expect(requests.value == 41)
    }

    /// A refresh that calls the same service (its refresh API) through a manager: its call
    /// must not wait for the refresh it is part of (it did, forever).
    @Test(.timeLimit(.minutes(5)))
    func aRefreshThatCallsItsOwnServiceDoesNotWaitForItself() async throws {
        let registryBox = RegistryBox()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            let registry = try #require(registryBox.registry)
            let refreshAPI = ItemListAPIManager(registry: registry, apiName: "refresh")
            return try await refreshAPI.load()["token"]?.string ?? ""
        }
        var service = TestService()
        service.authenticator = authenticator
        let stub = StubDispatcher { request in
            if request.url.path.hasSuffix("/refresh") { return Response(status: 200, body: Data(#"{"token":"fresh"}"#.utf8)) }
            if request.headers["Authorization"] == "Bearer fresh" { return Response(status: 200, body: Data(#"{"ok":true}"#.utf8)) }
            return Response(status: 401, body: Data(#"{"error":"expired"}"#.utf8))
        }
        registryBox.registry = try makeRegistry(stub, services: [service])
        let manager = ItemListAPIManager(registry: try #require(registryBox.registry))
        #expect(try await manager.load() == ["ok": true])
        #expect(authenticator.refreshCount == 1)
        #expect(authenticator.token == "fresh")
    }

    /// The refresh's own call refused as expired fails the refresh (no second refresh, no wait).
    @Test(.timeLimit(.minutes(5)))
    func aRefreshWhoseOwnCallExpiresFailsWithNeedsLogin() async throws {
        let registryBox = RegistryBox()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            let registry = try #require(registryBox.registry)
            return try await ItemListAPIManager(registry: registry, apiName: "refresh").load()["token"]?.string ?? ""
        }
        var service = TestService()
        service.authenticator = authenticator
        let requests = Counter()
        registryBox.registry = try makeRegistry(tokenStub(requests: requests), services: [service])
        let manager = ItemListAPIManager(registry: try #require(registryBox.registry))
        await #expect { try await manager.load() } throws: { ($0 as? RunwayError)?.code == .needsLogin }
        #expect(authenticator.refreshCount == 1)
        #expect(requests.value == 2)
    }

    @Test(arguments: [false, true])
    func aCallWaitingForASlowRefreshEndsAtOnceWhenCancelled(byManager: Bool) async throws {
        // The refresh cannot end before the gate opens, which happens only once the cancelled
        // call has ended (or, should it wait for the refresh, after two minutes: then it fails).
        let gate = Gate()
        let safetyNet = gate.open(after: .seconds(120))
        defer { safetyNet.cancel() }
        let authenticator = staleAuthenticator(refreshedWhen: gate)
        var service = TestService()
        service.authenticator = authenticator
        // The app's interceptors come before token refresh: a call seen here goes on to wait for it.
        let reached = RecordingInterceptor.Log()
        let registry = try makeRegistry(
            tokenStub(requests: Counter()), services: [service], interceptors: [RecordingInterceptor(name: "app", log: reached)])
        let patient = ItemListAPIManager(registry: registry)
        let impatient = ItemListAPIManager(registry: registry)
        let waiting = Task { await outcome { try await patient.load() } }
        #expect(await eventually { authenticator.refreshCount == 1 })
        let cancelled = Task { await outcome { try await impatient.load() } }
        #expect(await eventually { reached.events.count == 2 })
        if byManager { impatient.cancelAll() } else { cancelled.cancel() }
        #expect(await cancelled.value.failure?.code == .cancelled)
        #expect(!gate.isOpened, "the cancelled call waited for the refresh")
        gate.open()
        #expect(await waiting.value.success == ["ok": true])
        #expect(authenticator.refreshCount == 1)
    }

    @Test func aFailedRefreshFailsEveryWaitingCallWithNeedsLogin() async throws {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            refreshes.increment()
            try await Task.sleep(for: .milliseconds(100))
            throw RefreshFailed()
        }
        var service = TestService()
        service.authenticator = authenticator
        let manager = ItemListAPIManager(registry: try makeRegistry(tokenStub(requests: Counter()), services: [service]))
        let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
            for index in 0..<20 {
                group.addTask { await outcome { try await manager.load(params: ["n": .int(Int64(index))]) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let failures = results.compactMap(\.failure)
        #expect(failures.count == 20)
        #expect(failures.allSatisfy { $0.code == .needsLogin })
        #expect(failures.contains { $0.underlying is RefreshFailed })
        #expect(refreshes.value == 1)
        #expect(authenticator.token == "stale")
    }

    /// A call made while a refresh runs waits before it is sent: when the refresh fails, it
    /// ends unsent (`neverSent`), while the call whose 401 asked for the refresh was sent.
    @Test func aCallThatWaitedForAFailedRefreshEndsUnsent() async throws {
        let gate = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            #expect(await eventually { gate.value == 1 })
            throw RefreshFailed()
        }
        var service = TestService()
        service.authenticator = authenticator
        let requests = Counter()
        let manager = ItemListAPIManager(
            registry: try makeRegistry(tokenStub(requests: requests), services: [service]), policy: .concurrent)
        let first = Task { await outcome { try await manager.load(params: ["n": 1]) } }
        #expect(await eventually { authenticator.refreshCount == 1 })
        let second = Task { await outcome { try await manager.load(params: ["n": 2]) } }
        // The second call is waiting for the refresh, unsent: then the refresh fails.
        try await Task.sleep(for: .milliseconds(50))
        gate.increment()
        let (sent, waited) = (await first.value.failure, await second.value.failure)
        #expect(sent?.code == .needsLogin && sent?.neverSent == false, "\(String(describing: sent))")
        #expect(waited?.code == .needsLogin && waited?.neverSent == true, "\(String(describing: waited))")
        #expect(requests.value == 1)
    }

    /// A login or a logout while a refresh runs: the refresh's outcome, for the session just
    /// replaced, never overwrites the token the app set (a logout is not undone), and the
    /// waiting call replays with the app's token, not the refreshed one.
    @Test(arguments: [(false, "fresh"), (true, "fresh"), (false, nil)] as [(Bool, String?)])
    func aTokenSetDuringARefreshIsKept(refreshFails: Bool, newToken: String?) async throws {
        let gate = Gate()
        let safetyNet = gate.open(after: .seconds(120))
        defer { safetyNet.cancel() }
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            await gate.wait()
            if refreshFails { throw RefreshFailed() }
            return "old-session"
        }
        var service = TestService()
        service.authenticator = authenticator
        let stub = StubDispatcher { request in
            if request.headers["Authorization"] == "Bearer fresh" { return Response(status: 200, body: Data(#"{"ok":true}"#.utf8)) }
            return Response(status: 401, body: Data(#"{"error":"expired"}"#.utf8))
        }
        let manager = ItemListAPIManager(registry: try makeRegistry(stub, services: [service]))
        let waiting = Task { await outcome { try await manager.load() } }
        #expect(await eventually { authenticator.refreshCount == 1 })
        authenticator.setToken(newToken, identity: "user-2")
        gate.open()
        let result = await waiting.value
        #expect(await eventually { authenticator.endedRefreshCount == 1 })
        #expect(authenticator.token == newToken && authenticator.identity == "user-2")
        if newToken == nil {
            #expect(result.failure?.code == .needsLogin)
        } else {
            #expect(result.success == ["ok": true])
            #expect(try await manager.load() == ["ok": true])
            #expect(authenticator.refreshCount == 1)
        }
    }

    @Test func aBusinessCodeTriggersTheRefreshToo() async throws {
        let authenticator = TokenAuthenticator(token: "stale", headerName: "X-Token", prefix: "") { _ in "fresh" }
        var service = TestService()
        service.authenticator = authenticator
        service.tokenExpiredCode = 1001
        let stub = StubDispatcher { request in
            let body = request.headers["X-Token"] == "fresh" ? #"{"code":0}"# : #"{"code":1001}"#
            return Response(status: 200, body: Data(body.utf8))
        }
        let manager = ItemListAPIManager(registry: try makeRegistry(stub, services: [service]))
        #expect(try await manager.load() == ["code": 0])
        #expect(authenticator.refreshCount == 1)
    }
}

/// A registry set after the authenticator that needs it is made.
final class RegistryBox: @unchecked Sendable {
    // @unchecked Sendable: set once, before any call reads it.
    var registry: ServiceRegistry?
}
