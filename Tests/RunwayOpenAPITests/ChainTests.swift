import Foundation
import OpenAPIRuntime
import Runway
import RunwayCache
import RunwayCurl
import RunwayOpenAPI
import RunwaySigning
import RunwayTestServer
import Testing

/// The chain's per-API policies applied to generated operations: API names, signing verified
/// by the server, a cache hit without the network, a retry after a 503.
@Suite struct ChainTests {
    @Test func theAPINameIsTheOperationIDUnlessMapped() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let recorder = ContextRecorder()
            _ = try await makeClient(server, interceptors: [recorder]).getItem(path: .init(itemID: "1")).ok
            let mapped = makeClient(
                server, interceptors: [recorder], configuration: .init(apiNames: ["getItem": "items.detail"], serviceID: "shop"))
            _ = try await mapped.getItem(path: .init(itemID: "1")).ok
            _ = try await mapped.listItems().ok
            let closure = makeClient(server, interceptors: [recorder], configuration: .init { "catalogue/" + $0 })
            _ = try await closure.listItems().ok
            #expect(
                recorder.seen.all == [
                    .init(apiName: "getItem", operationID: "getItem"),
                    .init(apiName: "items.detail", operationID: "getItem", serviceID: "shop"),
                    .init(apiName: "listItems", operationID: "listItems", serviceID: "shop"),
                    .init(apiName: "catalogue/listItems", operationID: "listItems"),
                ])
        }
    }

    @Test func signedOperationsVerifyAtTheServer() async throws {
        let secret = "openapi-secret-0123456789"
        let routes = ItemRoutes(verifier: try .hmacSHA256(secrets: ["app": secret]))
        try await withTestServer(routes: routes.routes) { server in
            let client = makeClient(server, interceptors: [try .signing(secret: secret, keyID: "app")])
            #expect(try await client.getItem(path: .init(itemID: "5")).ok.body.json.id == "5")
            #expect(try await client.listItems(query: .init(limit: 1, tag: ["a b", "c"])).ok.body.json.items.count == 1)
            #expect(try await client.createItem(body: .json(.init(name: "Signed"))).created.body.json.name == "Signed")
            _ = try await client.deleteItem(path: .init(itemID: "5")).noContent

            // The same calls with another secret are refused: the check is real.
            let forger = makeClient(server, interceptors: [try .signing(secret: "another-secret-98765", keyID: "app")])
            let refused = try await forger.getItem(path: .init(itemID: "5"))
            guard case .undocumented(statusCode: 401, _) = refused else {
                Issue.record("expected a 401, got \(refused)")
                return
            }
        }
    }

    @Test func theSigningScopeIsTheMappedAPIName() async throws {
        // The salted-hash scheme signs the API name: the server must know the same one.
        let secret = "salted-secret"
        let routes = ItemRoutes(verifier: try .saltedHash(secret: secret), signedAPIName: "items.detail")
        try await withTestServer(routes: routes.routes) { server in
            let signing = SigningInterceptor.signing(try .saltedHash(secret: secret))
            let mapped = makeClient(server, interceptors: [signing], configuration: .init(apiNames: ["getItem": "items.detail"]))
            #expect(try await mapped.getItem(path: .init(itemID: "3")).ok.body.json.id == "3")
            let unmapped = makeClient(server, interceptors: [signing])
            let refused = try await unmapped.getItem(path: .init(itemID: "3"))
            guard case .undocumented(statusCode: 401, _) = refused else {
                Issue.record("expected a 401 for a signature over another API name, got \(refused)")
                return
            }
        }
    }

    @Test func aCachedOperationIsAnsweredWithoutTheNetwork() async throws {
        try await withTestServer(routes: ItemRoutes().routes) { server in
            let cache = try ResponseCache(policies: ["items.list": .memory(ttl: .seconds(60))])
            let client = makeClient(server, interceptors: [cache.interceptor], configuration: .init(apiNames: ["listItems": "items.list"]))
            let first = try await client.listItems(query: .init(limit: 2)).ok.body.json
            let second = try await client.listItems(query: .init(limit: 2)).ok.body.json
            #expect(first == second)
            #expect(first.items.count == 2)
            #expect(server.stats.requests(path: "/items") == 1)
            // Other parameters are another key; an operation without a policy is never cached.
            _ = try await client.listItems(query: .init(limit: 1)).ok
            _ = try await client.getItem(path: .init(itemID: "1")).ok
            _ = try await client.getItem(path: .init(itemID: "1")).ok
            #expect(server.stats.requests(path: "/items") == 2)
            #expect(server.stats.requests(path: "/items/1") == 2)
        }
    }

    @Test func aStreamedOperationIsNeverCached() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["downloadBytes": .memory(ttl: .seconds(60))])
            let client = makeClient(server, interceptors: [cache.interceptor])
            for _ in 0..<2 {
                let body = try await client.downloadBytes(path: .init(count: 100)).ok.body.binary
                #expect(try await Data(collecting: body, upTo: 100).count == 100)
            }
            #expect(server.stats.requests(path: "/bytes/100") == 2)
        }
    }

    @Test func aFailedAttemptWith503IsRetried() async throws {
        let routes = ItemRoutes(flakyFailures: 2)
        try await withTestServer(routes: routes.routes) { server in
            let retry = try RetryInterceptor.retry(maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
            let client = makeClient(server, interceptors: [retry])
            #expect(try await client.getFlaky().ok.body.json.attempts == 3)
            #expect(routes.flakyCount.value == 3)

            // Without retry the 503 is the operation's answer (undocumented in the document).
            let once = ItemRoutes(flakyFailures: 1)
            try await withTestServer(routes: once.routes) { other in
                guard case .undocumented(statusCode: 503, _) = try await makeClient(other).getFlaky() else {
                    Issue.record("expected the 503")
                    return
                }
            }
        }
    }
}
