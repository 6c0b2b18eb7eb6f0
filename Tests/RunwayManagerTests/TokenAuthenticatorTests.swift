import Foundation
import Runway
import RunwayTesting
import Testing

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
