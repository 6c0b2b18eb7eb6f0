import Foundation
import Runway
import RunwayCache
import RunwayCurl
import RunwaySigning
import RunwayTestServer
import Testing

/// The cache in front of libcurl and the real in-process server: a hit never reaches the server.
@Suite(.timeLimit(.minutes(5))) struct CacheServerTests {
    @Test func memoryAndDiskHitsDoNotReachTheServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc", serviceID: "test")
            let cache = try ResponseCache(policies: ["doc": .memoryAndDisk()], diskFile: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let first = try await pipeline.send(Request(url: server.url("/json?v=1")), context: context)
            #expect(first.origin == .network)
            #expect(first.body == TestServer.fixedJSON)
            #expect(server.stats.requests(path: "/json") == 1)

            let hit = try await pipeline.send(Request(url: server.url("/json?v=1")), context: context)
            #expect(hit.origin == .memoryCache)
            #expect(hit.body == TestServer.fixedJSON)
            #expect(server.stats.requests(path: "/json") == 1)

            // A new process (a new cache over the same file) answers from disk.
            let reopened = try ResponseCache(policies: ["doc": .memoryAndDisk()], diskFile: file)
            let fromDisk = try await Pipeline(interceptors: [reopened.interceptor], dispatcher: CurlDispatcher())
                .send(Request(url: server.url("/json?v=1")), context: context)
            #expect(fromDisk.origin == .diskCache)
            #expect(fromDisk.body == TestServer.fixedJSON)
            #expect(server.stats.requests(path: "/json") == 1)

            // Other parameters, or an invalidated API, go to the server again.
            _ = try await pipeline.send(Request(url: server.url("/json?v=2")), context: context)
            #expect(server.stats.requests(path: "/json") == 2)
            await cache.invalidate(api: "doc")
            let afterInvalidation = try await pipeline.send(Request(url: server.url("/json?v=1")), context: context)
            #expect(afterInvalidation.origin == .network)
            #expect(server.stats.requests(path: "/json") == 3)
        }
    }

    @Test("a call answered from the cache ends its progress stream, as one sent to the server does")
    func aCacheHitEndsItsProgressStream() async throws {
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc", serviceID: "test")
            let cache = try ResponseCache(policies: ["doc": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            var origins: [ResponseOrigin] = []
            for _ in 0..<2 {
                var request = try Request(server.url("/json").absoluteString)
                let (progress, reporter) = TransferProgress.makeStream(bufferingNewest: 1000)
                request.progress = reporter
                let response = try await pipeline.send(request, context: context)
                origins.append(response.origin)
                let ended = Counter()
                let draining = Task {
                    for await _ in progress {}
                    ended.increment()
                }
                #expect(await eventually(timeout: .seconds(20)) { ended.value == 1 }, "the progress stream stays open")
                draining.cancel()
            }
            #expect(origins == [.network, .memoryCache])
            #expect(server.stats.requests(path: "/json") == 1)
        }
    }

    @Test func anInvalidationFromACancelledTaskStillEmptiesTheDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc", serviceID: "test")
            let cache = try ResponseCache(policies: ["doc": .memoryAndDisk()], diskFile: directory.appending(path: "cache.sqlite"))
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let invalidations: [@Sendable () async -> Void] = [
                { await cache.invalidate(cache.key(for: Request(url: server.url("/json")), context: context)) },
                { await cache.invalidate(api: "doc") },
                { await cache.invalidateAll() },
            ]
            for (index, invalidation) in invalidations.enumerated() {
                _ = try await pipeline.send(Request(url: server.url("/json")), context: context)
                #expect(cache.statistics.diskEntries == 1)
                // Invalidated from a task that is cancelled (a screen closing, a logout being torn
                // down): memory and disk both let the entry go.
                let gate = Gate()
                let task = Task {
                    await gate.wait()
                    await invalidation()
                }
                task.cancel()
                gate.open()
                await task.value
                #expect(cache.statistics.diskEntries == 0)
                #expect(cache.statistics.memoryEntries == 0)
                let next = try await pipeline.send(Request(url: server.url("/json")), context: context)
                #expect(next.origin == .network)
                #expect(server.stats.requests(path: "/json") == 2 * (index + 1))
                await cache.invalidateAll()
            }
        }
    }

    @Test func anEntryWhoseBytesChangedOnDiskIsAMissNeverAWrongBody() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc")
            do {
                let cache = try ResponseCache(policies: ["doc": .disk()], diskFile: file)
                _ = try await Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
                    .send(Request(url: server.url("/json")), context: context)
            }
            // The cache closed the file (its WAL folded in); one bit of the stored body flips, as a
            // failing disk or another program may do: SQLite's pages stay well-formed.
            var bytes = try Data(contentsOf: file)
            let stored = try #require(bytes.range(of: Data("Runway test document".utf8)))
            bytes[stored.lowerBound] ^= 0x20
            try bytes.write(to: file)
            let cache = try ResponseCache(policies: ["doc": .disk()], diskFile: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let reread = try await pipeline.send(Request(url: server.url("/json")), context: context)
            #expect(reread.origin == .network)
            #expect(reread.body == TestServer.fixedJSON)
            #expect(cache.statistics.diskRebuilds == 0)
            // Stored afresh, it answers again.
            let hit = try await pipeline.send(Request(url: server.url("/json")), context: context)
            #expect(hit.origin == .diskCache && hit.body == TestServer.fixedJSON)
            #expect(server.stats.requests(path: "/json") == 2)
        }
    }

    /// Each miss waited the 5-second busy timeout to store its response while another process
    /// held the file's write lock, one after another on the store's queue: the 32 calls below
    /// took 160 s. A store now waits 0.1 s at most, and none for a second after one waited in
    /// vain; the responses go on to the callers, unstored.
    @Test func aMissIsNotHeldUpWhileAnotherProcessHoldsTheFilesLock() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "runway-cache-server-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        try await withTestServer { server in
            let context = RequestContext(apiName: "doc")
            let cache = try ResponseCache(policies: ["doc": .disk()], diskFile: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            // Another program's write transaction on the file, held until the calls are answered.
            let release = try await holdingTheWriteLock(of: file)
            let clock = ContinuousClock()
            let started = clock.now
            try await withThrowingTaskGroup { group in
                for n in 0..<32 {
                    group.addTask {
                        let response = try await pipeline.send(Request(url: server.url("/json?n=\(n)")), context: context)
                        #expect(response.origin == .network && response.body == TestServer.fixedJSON)
                    }
                }
                try await group.waitForAll()
            }
            #expect(clock.now - started < .seconds(30))
            #expect(cache.statistics.diskEntries == 0)
            try await release()
            // The lock free, misses are stored again.
            #expect(
                try await eventually { () async throws -> Bool in
                    _ = try await pipeline.send(Request(url: server.url("/json?n=0")), context: context)
                    return cache.statistics.diskEntries == 1
                })
            let hit = try await pipeline.send(Request(url: server.url("/json?n=0")), context: context)
            #expect(hit.origin == .diskCache && hit.body == TestServer.fixedJSON)
        }
    }

    @Test func aPartialResponseIsNeverStoredForTheWholeResource() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["file": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let context = RequestContext(apiName: "file")
            let whole = DeterministicBytes.data(count: 100)
            let range = try await pipeline.send(
                Request(url: server.url("/download/100"), headers: ["Range": "bytes=90-"]), context: context)
            #expect(range.status == 206 && range.body == whole.suffix(10))
            // `Range` is not part of the key: the 10 bytes must not answer a call for all 100.
            let full = try await pipeline.send(Request(url: server.url("/download/100")), context: context)
            #expect(full.origin == .network)
            #expect(full.status == 200 && full.body == whole)
            let hit = try await pipeline.send(Request(url: server.url("/download/100")), context: context)
            #expect(hit.origin == .memoryCache && hit.status == 200 && hit.body == whole)
            #expect(server.stats.requests(path: "/download/100") == 2)
        }
    }

    /// A write reaches the server every time: a `PUT`, `PATCH` or `DELETE` under any policy, a
    /// `POST` under the default policy. A `POST` under a policy named for its API (a search
    /// through a form) is cached, as a `GET` is under either.
    @Test func writesAreNeverAnsweredFromTheCache() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["item": .memory(), "search": .memory()], defaultPolicy: .memory())
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            func send(_ method: HTTPMethod, api: String, context extra: CachePolicy? = nil) async throws -> ResponseOrigin {
                var context = RequestContext(apiName: api)
                if let extra { context[CachePolicy.Key.self] = extra }
                let request = Request(
                    method: method, url: server.url("/echo?api=\(api)"), headers: ["Content-Type": "application/json"],
                    body: method == .get ? nil : Data(#"{"id":42}"#.utf8))
                return try await pipeline.send(request, context: context).origin
            }
            for api in ["item", "unlisted"] {
                for method in [HTTPMethod.put, .patch, .delete, .options] {
                    #expect(try await send(method, api: api) == .network, "\(method) \(api)")
                    #expect(try await send(method, api: api) == .network, "\(method) \(api), again")
                }
                #expect(try await send(.get, api: api) == .network)
                #expect(try await send(.get, api: api) == .memoryCache)
            }
            // A POST: under the default policy, sent every time; under its API's, or the call's, cached.
            #expect(try await send(.post, api: "unlisted") == .network)
            #expect(try await send(.post, api: "unlisted") == .network)
            #expect(try await send(.post, api: "search") == .network)
            #expect(try await send(.post, api: "search") == .memoryCache)
            #expect(try await send(.post, api: "other", context: .memory()) == .network)
            #expect(try await send(.post, api: "other", context: .memory()) == .memoryCache)
            #expect(try await send(.delete, api: "other", context: .memory()) == .network)
            #expect(try await send(.delete, api: "other", context: .memory()) == .network)
            // Every network answer above, counted by the server.
            #expect(server.stats.requests(path: "/echo") == 2 * (4 * 2 + 1) + 2 + 1 + 1 + 2)
        }
    }

    @Test func formBodiesThatDifferNeverShareAnEntry() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["search": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let context = RequestContext(apiName: "search")
            /// POSTs `body` to `/echo<query>` and returns the body the server received and where the answer came from.
            func post(_ query: String, _ body: String, type: String = "application/x-www-form-urlencoded") async throws -> (
                String, ResponseOrigin
            ) {
                let request = Request(
                    method: .post, url: server.url("/echo" + query), headers: ["Content-Type": type], body: Data(body.utf8))
                let response = try await pipeline.send(request, context: context)
                let echo = try JSONDecoder().decode(EchoResponse.self, from: response.body)
                return ("\(echo.query.map { "?" + $0 } ?? "")|\(echo.body ?? "")", response.origin)
            }
            // Fields in another order are the same form.
            #expect(try await post("", "a=1&b=2") == ("|a=1&b=2", .network))
            #expect(try await post("", "b=2&a=1") == ("|a=1&b=2", .memoryCache))
            // Bytes that decode alike (both to U+FFFD) are different forms.
            #expect(try await post("", "q=%FF") == ("|q=%FF", .network))
            #expect(try await post("", "q=%FE") == ("|q=%FE", .network))
            // A field in the query is not the same field in the body.
            #expect(try await post("?a=1", "b=2") == ("?a=1|b=2", .network))
            #expect(try await post("?b=2", "a=1") == ("?b=2|a=1", .network))
            // A body whose type only starts like a form's is keyed by its bytes.
            #expect(try await post("", "x", type: "application/x-www-form-urlencodedx") == ("|x", .network))
            #expect(try await post("", "y", type: "application/x-www-form-urlencodedx") == ("|y", .network))
            #expect(server.stats.requests(path: "/echo") == 7)
        }
    }

    @Test func cacheHitsAreNotSignedMissesAreSignedFresh() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["echo": .memory()])
            let pipeline = Pipeline(
                interceptors: [cache.interceptor, try SigningInterceptor.signing(secret: "s")], dispatcher: CurlDispatcher())
            let context = RequestContext(apiName: "echo")
            let first = try await pipeline.send(Request(url: server.url("/echo?a=1")), context: context)
            // The cache key ignores signature headers, so the signed, nonce-carrying request still hits.
            let second = try await pipeline.send(Request(url: server.url("/echo?a=1")), context: context)
            #expect(first.origin == .network)
            #expect(second.origin == .memoryCache)
            #expect(second.body == first.body)
            #expect(String(decoding: first.body, as: UTF8.self).contains("x-runway-signature"))
            #expect(server.stats.requests(path: "/echo") == 1)
        }
    }

    @Test func cacheThenNetworkRefreshesFromTheServerInTheBackground() async throws {
        try await withTestServer { server in
            let cache = try ResponseCache(policies: ["doc": .memory().cacheThenNetwork()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            _ = try await pipeline.send(Request(url: server.url("/json")), context: RequestContext(apiName: "doc"))
            let (stream, continuation) = AsyncStream<CacheRefresh>.makeStream()
            var context = RequestContext(apiName: "doc")
            context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
            let cached = try await pipeline.send(Request(url: server.url("/json")), context: context)
            #expect(cached.origin == .memoryCache)
            var iterator = stream.makeAsyncIterator()
            guard case .unchanged(let fresh)? = await iterator.next() else {
                Issue.record("expected an unchanged refresh from the server")
                return
            }
            #expect(fresh.origin == .network)
            #expect(server.stats.requests(path: "/json") == 2)
        }
    }

    /// A response that sets a cookie is not stored, and the background refresh's goes to no
    /// caller: the cookie interceptor before the cache keeps its cookies all the same.
    @Test func aCookieTheBackgroundRefreshSetsIsKept() async throws {
        let served = Counter()
        let responder = try ScriptedResponder { _ in
            let body = #"{"id":1}"#
            // The first answer is stored (no cookie); the refresh's rotates the session.
            let cookie = served.increment() == 1 ? "" : "Set-Cookie: session=rotated; Path=/\r\n"
            return .reply(
                Array(
                    ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(cookie)Content-Length: \(body.utf8.count)\r\n\r\n"
                        + body).utf8))
        }
        defer { responder.stop() }
        let jar = CookieJar()
        let cache = try ResponseCache(policies: ["doc": .memory().cacheThenNetwork()])
        let pipeline = Pipeline(interceptors: [.cookies(jar), cache.interceptor], dispatcher: CurlDispatcher())
        _ = try await pipeline.send(Request(url: responder.url("/doc")), context: RequestContext(apiName: "doc"))
        let (stream, continuation) = AsyncStream<CacheRefresh>.makeStream()
        var context = RequestContext(apiName: "doc")
        context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
        let cached = try await pipeline.send(Request(url: responder.url("/doc")), context: context)
        #expect(cached.origin == .memoryCache)
        var iterator = stream.makeAsyncIterator()
        guard case .unchanged(let fresh)? = await iterator.next() else {
            Issue.record("expected an unchanged refresh from the server")
            return
        }
        #expect(fresh.headers["Set-Cookie"] == "session=rotated; Path=/")
        #expect(jar.cookieHeader(for: responder.url("/other")) == "session=rotated")
        // The next request takes it from the jar.
        _ = try await pipeline.send(Request(url: responder.url("/other")), context: RequestContext(apiName: "other"))
        #expect(responder.exchanges.last?.head.contains("Cookie: session=rotated") == true)
    }

    /// Validation before the cache, as in `DefaultOrder`: the response rule is checked on the way
    /// back, after the cache has seen the response.
    static func validatedPipeline(_ cache: ResponseCache) throws -> Pipeline {
        let validation = try ValidationInterceptor.validation([
            "item": APIValidation(response: ResponseRule(json: .object(["id": .integer])))
        ])
        return Pipeline(interceptors: [validation, cache.interceptor], dispatcher: CurlDispatcher())
    }

    /// A server whose answers are `bodies` in turn, the last one repeated.
    static func replying(_ bodies: [String]) throws -> ScriptedResponder {
        try replying(bodies.map { ("200 OK", $0) })
    }

    /// A server whose answers are `answers` (a status line's code and reason, a body) in turn,
    /// the last one repeated.
    static func replying(_ answers: [(status: String, body: String)]) throws -> ScriptedResponder {
        let served = Counter()
        return try ScriptedResponder { _ in
            let (status, body) = answers[min(served.increment(), answers.count) - 1]
            return .reply(
                Array(
                    "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        }
    }

    /// A service reading `{"code":...}` other than 0 in a 200 as a business error.
    struct CodedService: Service {
        let id: ServiceID = "coded"
        let baseURLs = BaseURLs("http://127.0.0.1")

        func error(for response: Response, json: JSON?) -> RunwayError? {
            if let code = json?["code"]?.int, code != 0 { return RunwayError(.serverError, "business error \(code)", response: response) }
            return defaultError(for: response)
        }
    }

    @Test("a background refresh answered with a 500, or a business error in a 200, is a failure, not an update")
    func aRefreshWithoutSuccessIsAFailure() async throws {
        for service in [nil, CodedService()] as [(any Service)?] {
            let responder = try Self.replying([
                ("200 OK", #"{"code":0,"id":1}"#), ("500 Internal Server Error", #"{"code":0}"#), ("200 OK", #"{"code":7}"#),
                ("200 OK", #"{"code":0,"id":2}"#),
            ])
            defer { responder.stop() }
            let cache = try ResponseCache(policies: ["item": .memory().cacheThenNetwork()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            var context = RequestContext(apiName: "item", serviceID: "coded")
            context.service = service
            _ = try await pipeline.send(Request(url: responder.url("/item")), context: context)

            let (refreshes, continuation) = AsyncStream<CacheRefresh>.makeStream()
            context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
            var iterator = refreshes.makeAsyncIterator()
            var outcomes: [String] = []
            var served: [String] = []
            for _ in 0..<3 {
                let cached = try await pipeline.send(Request(url: responder.url("/item")), context: context)
                served.append(String(decoding: cached.body, as: UTF8.self))
                switch await iterator.next() {
                case .failed(let error)?:
                    #expect(error.code == .serverError, "\(error)")
                    #expect(error.response?.status != nil)
                    outcomes.append("failed \(error.response?.status ?? 0)")
                case .updated(let fresh)?: outcomes.append("updated \(fresh.status)")
                case .unchanged(let fresh)?: outcomes.append("unchanged \(fresh.status)")
                case nil: outcomes.append("none")
                }
            }
            // Without a service a business error in a 200 is a success to the cache, as it is to a bare pipeline.
            let expected = service == nil ? ["failed 500", "updated 200", "updated 200"] : ["failed 500", "failed 200", "updated 200"]
            #expect(outcomes == expected)
            // The stored entry answers while refreshes fail.
            let first = #"{"code":0,"id":1}"#
            #expect(served == (service == nil ? [first, first, #"{"code":7}"#] : [first, first, first]))
            #expect(responder.exchanges.count == 4)
        }
    }

    @Test("a response that breaks the response rule is not stored: the next call goes to the server again")
    func aResponseBreakingTheRuleIsNotStored() async throws {
        let responder = try Self.replying([#"{"error":"busy"}"#, #"{"id":1}"#])
        defer { responder.stop() }
        let cache = try ResponseCache(policies: ["item": .memory()])
        let pipeline = try Self.validatedPipeline(cache)
        let context = RequestContext(apiName: "item", serviceID: "test")
        let refused = await #expect(throws: RunwayError.self) {
            try await pipeline.send(Request(url: responder.url("/item")), context: context)
        }
        #expect(refused?.code == .responseInvalid)
        #expect(cache.statistics.memoryEntries == 0)
        let valid = try await pipeline.send(Request(url: responder.url("/item")), context: context)
        #expect(valid.origin == .network)
        #expect(valid.body == Data(#"{"id":1}"#.utf8))
        #expect(try await pipeline.send(Request(url: responder.url("/item")), context: context).origin == .memoryCache)
        #expect(responder.exchanges.count == 2)
    }

    @Test("a background refresh that brings a response breaking the rule is a failure, and the stored entry stays")
    func aRefreshBreakingTheRuleIsAFailure() async throws {
        let responder = try Self.replying([#"{"id":1}"#, #"{"error":"busy"}"#, #"{"id":2}"#])
        defer { responder.stop() }
        let cache = try ResponseCache(policies: ["item": .memory().cacheThenNetwork()])
        let pipeline = try Self.validatedPipeline(cache)
        _ = try await pipeline.send(Request(url: responder.url("/item")), context: RequestContext(apiName: "item", serviceID: "test"))

        let (refreshes, continuation) = AsyncStream<CacheRefresh>.makeStream()
        var context = RequestContext(apiName: "item", serviceID: "test")
        context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
        var iterator = refreshes.makeAsyncIterator()
        let cached = try await pipeline.send(Request(url: responder.url("/item")), context: context)
        #expect(cached.body == Data(#"{"id":1}"#.utf8))
        guard case .failed(let error)? = await iterator.next() else {
            Issue.record("expected a failed refresh")
            return
        }
        #expect(error.code == .responseInvalid, "\(error)")

        // The valid entry is still what the cache answers; the next refresh brings the new one.
        let again = try await pipeline.send(Request(url: responder.url("/item")), context: context)
        #expect(again.body == Data(#"{"id":1}"#.utf8))
        guard case .updated(let fresh)? = await iterator.next() else {
            Issue.record("expected an updated refresh")
            return
        }
        #expect(fresh.body == Data(#"{"id":2}"#.utf8))
        #expect(responder.exchanges.count == 3)
    }
}
