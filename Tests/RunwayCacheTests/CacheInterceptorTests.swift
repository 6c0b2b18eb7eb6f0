import Crypto
import Foundation
import Runway
import RunwayCurl
import RunwayTestServer
import RunwayTesting
import Testing

@testable import RunwayCache

@Suite(.timeLimit(.minutes(5))) struct CacheInterceptorTests {
    let clock = TestClock()

    func makeCache(
        _ policies: [String: CachePolicy], file: URL? = nil, limits: ResponseCache.Limits = ResponseCache.Limits()
    ) throws -> ResponseCache {
        let clock = self.clock
        return try ResponseCache(
            environment: "test", policies: policies, defaultPolicy: .never, diskFile: file, limits: limits,
            clock: { clock.now })
    }

    func call(_ pipeline: Pipeline, _ url: String, api: String, context: RequestContext? = nil) async throws -> Response {
        try await pipeline.send(try Request(url), context: context ?? RequestContext(apiName: api, serviceID: "listings"))
    }

    @Test func memoryHitSkipsTheNetwork() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["detail": .memory()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        let first = try await call(pipeline, "https://api.test/detail?id=1&lang=zh", api: "detail")
        let second = try await call(pipeline, "https://api.test/detail?lang=zh&id=1", api: "detail")
        #expect(stub.count == 1)
        #expect(first.origin == .stub)
        #expect(second.origin == .memoryCache)
        #expect(second.body == first.body)
        #expect(second.headers["Content-Type"] == "application/json")
        let other = try await call(pipeline, "https://api.test/detail?id=2&lang=zh", api: "detail")
        #expect(stub.count == 2)
        #expect(other.origin == .stub)
    }

    /// `?a=1&a=2` and `?a=2&a=1` are different requests to a server that reads the first value:
    /// they never share an entry (the second got the first's body).
    @Test func theValuesOfOneNameInAnotherOrderAreAnotherEntry() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["list": .memory()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        let first = try await call(pipeline, "https://api.test/list?a=1&a=2", api: "list")
        let turned = try await call(pipeline, "https://api.test/list?a=2&a=1", api: "list")
        #expect(stub.count == 2)
        #expect(first.origin == .stub)
        #expect(turned.origin == .stub)
        // Names in another order are the same request.
        let moved = try await call(pipeline, "https://api.test/list?b=0&a=1&a=2", api: "list")
        let again = try await call(pipeline, "https://api.test/list?a=1&b=0&a=2", api: "list")
        #expect(moved.origin == .stub)
        #expect(again.origin == .memoryCache)
        #expect(stub.count == 3)
    }

    @Test func keyCoversServiceEnvironmentAPIAndMethod() throws {
        let request = try Request("https://api.test/x?a=1")
        let base = CacheKey(request, context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod")
        #expect(base == CacheKey(request, context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod"))
        #expect(base != CacheKey(request, context: RequestContext(apiName: "a", serviceID: "s"), environment: "staging"))
        #expect(base != CacheKey(request, context: RequestContext(apiName: "b", serviceID: "s"), environment: "prod"))
        #expect(base != CacheKey(request, context: RequestContext(apiName: "a", serviceID: "t"), environment: "prod"))
        var post = request
        post.method = .post
        #expect(base != CacheKey(post, context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod"))
        var signed = request
        signed.headers["X-Runway-Nonce"] = "abc"
        #expect(base == CacheKey(signed, context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod"))
        var jsonA = post
        var jsonB = post
        jsonA.body = Data("{\"q\":1}".utf8)
        jsonB.body = Data("{\"q\":2}".utf8)
        #expect(CacheKey(jsonA, context: RequestContext(), environment: "") != CacheKey(jsonB, context: RequestContext(), environment: ""))
        #expect(base.description.count == 64)
        // The digest (the disk key) is the SHA-256 of the NUL-separated fields: files written by
        // earlier versions keep their keys.
        let material = "s\u{0}prod\u{0}a\u{0}GET\u{0}https://api.test/x\u{0}a=1"
        #expect(base.bytes == Data(SHA256.hash(data: Data(material.utf8))))
        #expect(base.hashValue == CacheKey(request, context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod").hashValue)
        // The query is read up to a fragment and decoded when not canonical; credentials are
        // marked apart; a fragment without a query ends the URL's part.
        let fields: [(url: String, credentials: String?, material: String)] = [
            ("https://api.test/x?b=%7E&a=1#top", nil, "https://api.test/x\u{0}a=1&b=~"),
            ("https://api.test/x?a=1#top?b=2", "alice", "https://api.test/x\u{0}a=1\u{0}\u{1}alice"),
            ("https://api.test/x#top?a=1", nil, "https://api.test/x\u{0}"),
            ("https://api.test/x?", nil, "https://api.test/x\u{0}"),
        ]
        for (url, credentials, material) in fields {
            let key = CacheKey(
                try Request(url), context: RequestContext(apiName: "a", serviceID: "s"), environment: "prod", credentials: credentials)
            #expect(key.bytes == Data(SHA256.hash(data: Data(("s\u{0}prod\u{0}a\u{0}GET\u{0}" + material).utf8))), "\(url)")
        }
    }

    @Test func theCachesKeyIsTheKeyOfTheRequestInItsContext() throws {
        let cache = try makeCache(["a": .memory()])
        func fresh(_ request: Request, _ context: RequestContext) -> CacheKey {
            CacheKey(request, context: context, environment: cache.environment)
        }
        let a = RequestContext(apiName: "a", serviceID: "s")
        let b = RequestContext(apiName: "b", serviceID: "s")
        let t = RequestContext(apiName: "a", serviceID: "t")
        var requests: [Request] = []
        for index in 0..<2 { requests.append(try Request("https://api.test/x?page=\(index)")) }
        var post = requests[0]
        post.method = .post
        var withBody = post
        withBody.body = Data("{\"q\":1}".utf8)
        var otherBody = post
        otherBody.body = Data("{\"q\":2}".utf8)
        let sameTextAgain = try Request("https://api.test/x?page=0")
        for request in requests + [post, withBody, otherBody, sameTextAgain] {
            for context in [a, b, t] {
                #expect(cache.key(for: request, context: context) == fresh(request, context))
            }
        }
        #expect(cache.key(for: requests[0], context: a) != cache.key(for: requests[0], context: b))
        #expect(cache.key(for: requests[0], context: a) != cache.key(for: requests[0], context: t))
        #expect(cache.key(for: requests[0], context: a) != cache.key(for: post, context: a))
        #expect(cache.key(for: withBody, context: a) != cache.key(for: otherBody, context: a))
        #expect(cache.key(for: sameTextAgain, context: a) == cache.key(for: requests[0], context: a))
        // A changed URL on the same request value is a different request.
        var moved = requests[1]
        moved.url = URL(string: "https://api.test/y?page=1")!
        #expect(cache.key(for: moved, context: a) == fresh(moved, a))
        #expect(cache.key(for: moved, context: a) != cache.key(for: requests[1], context: a))
    }

    @Test func neverCachedAPIsAlwaysGoToTheNetwork() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["detail": .memory(), "account.balance": .never])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        for _ in 0..<3 { _ = try await call(pipeline, "https://api.test/balance", api: "account.balance") }
        for _ in 0..<3 { _ = try await call(pipeline, "https://api.test/unlisted", api: "unlisted") }
        #expect(stub.count == 6)
    }

    @Test func entriesExpireAfterTheTTL() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["detail": .memory(ttl: .seconds(180))])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        _ = try await call(pipeline, "https://api.test/d", api: "detail")
        clock.advance(179)
        #expect(try await call(pipeline, "https://api.test/d", api: "detail").origin == .memoryCache)
        clock.advance(2)
        let refreshed = try await call(pipeline, "https://api.test/d", api: "detail")
        #expect(refreshed.origin == .stub)
        #expect(String(decoding: refreshed.body, as: UTF8.self) == "/d#2")
        #expect(stub.count == 2)
    }

    @Test func anEntryStoredWhileTheClockWasAheadIsNotFreshOnceItIsSetBack() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc", serviceID: "docs")
            let request = Request(url: server.url("/json"))
            func send(_ cache: ResponseCache) async throws -> Response {
                try await Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher()).send(request, context: context)
            }
            // The device's clock is a year ahead when the entry is stored (a 3-minute TTL)...
            let cache = try makeCache(["doc": .memoryAndDisk()], file: file)
            let stale = try makeCache(["doc": .memory(ttl: .seconds(60)).cacheThenNetwork(maxStale: .seconds(60))])
            for cache in [cache, stale] { _ = try await send(cache) }
            #expect(server.stats.requests(path: "/json") == 2)
            // ...then set right: the entries' age is unknown, not a year less than zero.
            clock.advance(-365 * 86_400)
            let relaunched = try makeCache(["doc": .disk()], file: file)
            #expect(try await send(relaunched).origin == .network)
            #expect(try await send(cache).origin == .network)
            #expect(try await send(stale).origin == .network)
            // Stored again at the right time, the entry answers.
            #expect(try await send(relaunched).origin == .diskCache)
            #expect(server.stats.requests(path: "/json") == 5)
        }
    }

    @Test func onlySuccessfulStorableResponsesAreCached() async throws {
        let failing = CountingStub(status: 503)
        let cache = try makeCache(["detail": .memory()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: failing.dispatcher)
        _ = try await call(pipeline, "https://api.test/d", api: "detail")
        _ = try await call(pipeline, "https://api.test/d", api: "detail")
        #expect(failing.count == 2)

        let noStore = CountingStub(headers: ["Cache-Control": "private, no-store"])
        let pipeline2 = Pipeline(interceptors: [cache.interceptor], dispatcher: noStore.dispatcher)
        _ = try await call(pipeline2, "https://api.test/d", api: "detail")
        _ = try await call(pipeline2, "https://api.test/d", api: "detail")
        #expect(noStore.count == 2)

        // A repeated field counts as its lines joined: `no-store` on the second line is heard.
        let secondLine = CountingStub(headers: ["Cache-Control": "public, max-age=60", "Cache-Control": "No-Store"])
        let pipeline3 = Pipeline(interceptors: [cache.interceptor], dispatcher: secondLine.dispatcher)
        _ = try await call(pipeline3, "https://api.test/e", api: "detail")
        #expect(try await call(pipeline3, "https://api.test/e", api: "detail").origin == .stub)
        #expect(secondLine.count == 2)
    }

    @Test func contextPolicyOverridesTheRegisteredOne() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["detail": .memory()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        var context = RequestContext(apiName: "detail")
        context[CachePolicy.Key.self] = .never
        _ = try await call(pipeline, "https://api.test/d", api: "detail", context: context)
        _ = try await call(pipeline, "https://api.test/d", api: "detail", context: context)
        #expect(stub.count == 2)
    }

    @Test func diskEntriesSurviveANewCacheAndArePromotedToMemory() async throws {
        let directory = temporaryDirectory()
        let file = directory.appending(path: "cache.sqlite")
        let stub = CountingStub()
        do {
            let cache = try makeCache(["detail": .memoryAndDisk()], file: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
            _ = try await call(pipeline, "https://api.test/d", api: "detail")
        }
        let cache = try makeCache(["detail": .memoryAndDisk()], file: file)
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        let fromDisk = try await call(pipeline, "https://api.test/d", api: "detail")
        #expect(fromDisk.origin == .diskCache)
        #expect(String(decoding: fromDisk.body, as: UTF8.self) == "/d#1")
        #expect(fromDisk.headers["Content-Type"] == "application/json")
        #expect(try await call(pipeline, "https://api.test/d", api: "detail").origin == .memoryCache)
        #expect(stub.count == 1)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func diskOnlyPolicyDoesNotUseMemory() async throws {
        let directory = temporaryDirectory()
        let stub = CountingStub()
        let cache = try makeCache(["detail": .disk()], file: directory.appending(path: "c.sqlite"))
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        _ = try await call(pipeline, "https://api.test/d", api: "detail")
        #expect(try await call(pipeline, "https://api.test/d", api: "detail").origin == .diskCache)
        #expect(cache.statistics.memoryEntries == 0)
        #expect(cache.statistics.diskEntries == 1)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func invalidationByKeyAPIAndAll() async throws {
        let directory = temporaryDirectory()
        let stub = CountingStub()
        let cache = try makeCache(["a": .memoryAndDisk(), "b": .memoryAndDisk()], file: directory.appending(path: "c.sqlite"))
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        for url in ["https://api.test/a1", "https://api.test/a2"] { _ = try await call(pipeline, url, api: "a") }
        _ = try await call(pipeline, "https://api.test/b1", api: "b")
        #expect(stub.count == 3)

        let key = cache.key(for: try Request("https://api.test/a1"), context: RequestContext(apiName: "a", serviceID: "listings"))
        await cache.invalidate(key)
        _ = try await call(pipeline, "https://api.test/a1", api: "a")
        _ = try await call(pipeline, "https://api.test/a2", api: "a")
        #expect(stub.count == 4)

        await cache.invalidate(api: "a")
        _ = try await call(pipeline, "https://api.test/a1", api: "a")
        _ = try await call(pipeline, "https://api.test/a2", api: "a")
        _ = try await call(pipeline, "https://api.test/b1", api: "b")
        #expect(stub.count == 6)

        await cache.invalidateAll()
        #expect(cache.statistics.memoryEntries == 0)
        #expect(cache.statistics.diskEntries == 0)
        _ = try await call(pipeline, "https://api.test/b1", api: "b")
        #expect(stub.count == 7)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("a response fetched before an invalidation is not stored after it")
    func aCallInFlightDoesNotUndoAnInvalidation() async throws {
        let gate = Gate()
        let requests = CountingStub.Box()
        let slow = StubDispatcher { request in
            let n = requests.next()
            if n == 1 { await gate.wait() }
            return Response(status: 200, body: Data("\(request.url.path)#\(n)".utf8))
        }
        let directory = temporaryDirectory()
        let cache = try makeCache(["doc": .memoryAndDisk()], file: directory.appending(path: "c.sqlite"))
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: slow)
        let inFlight = Task { try await self.call(pipeline, "https://api.test/doc", api: "doc") }
        #expect(await eventually { slow.requests.count == 1 })
        // The document changes (a write elsewhere), so its cached copies go; the call in flight
        // may carry the old version.
        await cache.invalidate(api: "doc")
        gate.open()
        #expect(String(decoding: try await inFlight.value.body, as: UTF8.self) == "/doc#1")
        #expect(cache.statistics.memoryEntries == 0)
        #expect(cache.statistics.diskEntries == 0)
        // The next call goes to the network, and what it fetches is stored as usual.
        let next = try await call(pipeline, "https://api.test/doc", api: "doc")
        #expect(String(decoding: next.body, as: UTF8.self) == "/doc#2")
        #expect(try await call(pipeline, "https://api.test/doc", api: "doc").origin == .memoryCache)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func cacheThenNetworkDeliversTheCachedThenTheFreshResponse() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["feed": .memory(ttl: .seconds(60)).cacheThenNetwork()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        // Nothing cached: one network answer, no second delivery.
        let first = try await call(pipeline, "https://api.test/feed", api: "feed")
        #expect(first.origin == .stub)
        clock.advance(120)  // stale, within maxStale

        let (stream, continuation) = AsyncStream<CacheRefresh>.makeStream()
        var context = RequestContext(apiName: "feed", serviceID: "listings")
        context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
        let cached = try await call(pipeline, "https://api.test/feed", api: "feed", context: context)
        #expect(cached.origin == .memoryCache)
        #expect(String(decoding: cached.body, as: UTF8.self) == "/feed#1")
        var iterator = stream.makeAsyncIterator()
        guard case .updated(let fresh)? = await iterator.next() else {
            Issue.record("expected an updated refresh")
            return
        }
        #expect(String(decoding: fresh.body, as: UTF8.self) == "/feed#2")
        #expect(stub.count == 2)
        // The refresh was stored: the next call serves it from the cache.
        let again = try await call(pipeline, "https://api.test/feed", api: "feed")
        #expect(String(decoding: again.body, as: UTF8.self) == "/feed#2")
    }

    @Test func aBurstOfStaleHitsStartsOneBackgroundRefresh() async throws {
        let gate = Gate()
        let requests = CountingStub.Box()
        let slow = StubDispatcher { request in
            let n = requests.next()
            if n > 1 { await gate.wait() }
            return Response(status: 200, body: Data("\(request.url.path)#\(n)".utf8))
        }
        let cache = try makeCache(["feed": .memory(ttl: .seconds(60)).cacheThenNetwork()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: slow)
        _ = try await call(pipeline, "https://api.test/feed", api: "feed")
        clock.advance(120)  // stale, within maxStale
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let response = try await self.call(pipeline, "https://api.test/feed", api: "feed")
                    #expect(response.origin == .memoryCache)
                }
            }
            try await group.waitForAll()
        }
        // The refresh runs in a task of its own, which may reach the dispatcher after the hits return.
        #expect(await eventually { slow.requests.count >= 2 })
        #expect(slow.requests.count == 2)
        gate.open()
        // Once it has landed, the next stale hit may start another.
        #expect(await eventually { slow.requests.count == 2 && cache.statistics.memoryEntries == 1 })
        #expect(
            try await eventually(checking: {
                String(decoding: try await call(pipeline, "https://api.test/feed", api: "feed").body, as: UTF8.self) == "/feed#2"
            }))
        clock.advance(120)
        // The refresh that stored "/feed#2" releases its claim just after storing: a hit in
        // between starts none, so hit until one does. (Every hit of cacheThenNetwork may start
        // one once the claim is free, so a hit racing a refresh that has just landed may start
        // the next: the count is not pinned here; the burst above pins one per claim.)
        #expect(
            try await eventually(checking: {
                _ = try await call(pipeline, "https://api.test/feed", api: "feed")
                return slow.requests.count >= 3
            }))
    }

    @Test func cacheThenNetworkReportsUnchangedAndFailedRefreshes() async throws {
        let constant = StubDispatcher(status: 200, body: Data("same".utf8))
        let cache = try makeCache(["feed": .memory().cacheThenNetwork()])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: constant)
        _ = try await call(pipeline, "https://api.test/feed", api: "feed")
        let (stream, continuation) = AsyncStream<CacheRefresh>.makeStream()
        var context = RequestContext(apiName: "feed", serviceID: "listings")
        context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
        _ = try await call(pipeline, "https://api.test/feed", api: "feed", context: context)
        var iterator = stream.makeAsyncIterator()
        guard case .unchanged? = await iterator.next() else {
            Issue.record("expected an unchanged refresh")
            return
        }

        let failing = Pipeline(
            interceptors: [cache.interceptor],
            dispatcher: StubDispatcher { _ in throw RunwayError(.cannotConnect, "refused") })
        let cached = try await call(failing, "https://api.test/feed", api: "feed", context: context)
        #expect(cached.body == Data("same".utf8))
        guard case .failed(let error)? = await iterator.next() else {
            Issue.record("expected a failed refresh")
            return
        }
        #expect(error.code == .cannotConnect)
    }

    @Test func cacheThenNetworkBeyondMaxStaleGoesToTheNetwork() async throws {
        let stub = CountingStub()
        let cache = try makeCache(["feed": .memory(ttl: .seconds(60)).cacheThenNetwork(maxStale: .seconds(60))])
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        _ = try await call(pipeline, "https://api.test/feed", api: "feed")
        clock.advance(121)
        let response = try await call(pipeline, "https://api.test/feed", api: "feed")
        #expect(response.origin == .stub)
        #expect(stub.count == 2)
    }

    @Test func concurrentReadersAndWritersGetTheirOwnData() async throws {
        let directory = temporaryDirectory()
        let cache = try makeCache(
            ["d": .memoryAndDisk()], file: directory.appending(path: "c.sqlite"),
            limits: ResponseCache.Limits(memoryEntries: 8, memoryBytes: 1 << 20, diskBytes: 1 << 20))
        let echo = StubDispatcher { request in Response(status: 200, body: Data(request.url.absoluteString.utf8)) }
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: echo)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for round in 0..<20 {
                        let url = "https://api.test/d?k=\((task * 7 + round) % 24)"
                        let response = try await pipeline.send(try Request(url), context: RequestContext(apiName: "d"))
                        #expect(String(decoding: response.body, as: UTF8.self) == url)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.statistics.memoryEntries <= 8)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func badConfigurationIsRejectedAtRegistration() {
        func code(_ body: () throws -> Void) -> RunwayError.Code? {
            do {
                try body()
                return nil
            } catch { return (error as? RunwayError)?.code }
        }
        #expect(code { _ = try ResponseCache(policies: ["a": .memory(ttl: .zero)]) } == .configuration)
        #expect(code { _ = try ResponseCache(policies: ["a": .memory(ttl: .seconds(-5))]) } == .configuration)
        #expect(code { _ = try ResponseCache(policies: ["a": .disk()]) } == .configuration)
        #expect(code { _ = try ResponseCache(policies: ["": .memory()]) } == .configuration)
        #expect(code { _ = try ResponseCache(policies: [:], limits: .init(memoryEntries: 0)) } == .configuration)
        #expect(code { _ = try ResponseCache(policies: ["a": .memory().cacheThenNetwork(maxStale: .seconds(-1))]) } == .configuration)
        #expect(
            code {
                _ = try ResponseCache(policies: ["a": .disk()], diskFile: URL(fileURLWithPath: "/proc/runway/cache.sqlite"))
            } == .configuration)
        #expect(code { _ = try CacheInterceptor.cache(policies: ["a": .memory()]) } == nil)
    }
}

@Suite struct CacheAndValidationOrderTests {
    @Test func invalidResponsesAreNeverCachedAndInvalidCallsNeverHit() async throws {
        let stub = CountingStub()
        let cache = try ResponseCache(policies: ["doc": .memory(), "shape": .memory()])
        // The stub answers "<path>#<n>", which is not JSON.
        let validation = try ValidationInterceptor.validation([
            "doc": APIValidation(
                parameters: [ParameterRule("id", .required, .type(.integer))],
                response: ResponseRule(statuses: [200...299])),
            "shape": APIValidation(response: ResponseRule(json: .object(["id": .integer]))),
        ])
        let pipeline = Pipeline(interceptors: [cache.interceptor, validation], dispatcher: stub.dispatcher)

        // Invalid parameters: no network, nothing stored, so the same call cannot hit later.
        for _ in 0..<2 {
            await #expect(throws: RunwayError.self) {
                try await pipeline.send(try Request("https://api.test/d?id=x"), context: RequestContext(apiName: "doc"))
            }
        }
        #expect(stub.count == 0)
        #expect(cache.statistics.memoryEntries == 0)

        // A response breaking its rule is thrown before the cache sees it: the next call goes out again.
        for expected in 1...2 {
            await #expect(throws: RunwayError.self) {
                try await pipeline.send(try Request("https://api.test/s"), context: RequestContext(apiName: "shape"))
            }
            #expect(stub.count == expected)
        }
        #expect(cache.statistics.memoryEntries == 0)
    }
}

/// A streamed body is never held whole: the cache neither stores nor answers it.
@Suite struct CacheStreamingTests {
    @Test func streamedRequestIsNeitherAnsweredNorStored() async throws {
        let stub = CountingStub()
        let cache = try ResponseCache(environment: "test", policies: ["detail": .memory()], defaultPolicy: .never)
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        let context = RequestContext(apiName: "detail", serviceID: "listings")
        var streamed = try Request("https://api.test/detail?id=1")
        streamed.streamsResponseBody = true
        for expected in 1...2 {
            let response = try await pipeline.send(streamed, context: context)
            #expect(response.origin == .stub)
            #expect(response.body.isEmpty)
            var body = Data()
            for try await chunk in try #require(response.bodyStream) { body.append(chunk) }
            #expect(body == Data("/detail#\(expected)".utf8))
        }
        #expect(stub.count == 2)
        // Nothing stored: the first buffered call goes to the network too, and is stored.
        let buffered = try await pipeline.send(try Request("https://api.test/detail?id=1"), context: context)
        #expect(buffered.origin == .stub)
        #expect(try await pipeline.send(try Request("https://api.test/detail?id=1"), context: context).origin == .memoryCache)
        // A stored entry does not answer a streamed request either.
        _ = try await pipeline.send(streamed, context: context)
        #expect(stub.count == 4)
    }
}
