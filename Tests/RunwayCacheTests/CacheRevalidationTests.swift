import Foundation
import Hummingbird
import Runway
import RunwayCurl
import RunwayTestServer
import Synchronization
import Testing

@testable import RunwayCache

/// Stale entries with validators are asked about, not fetched again: through libcurl and the
/// test server, which answers `304` to a matching `If-None-Match`.
@Suite(.timeLimit(.minutes(5))) struct CacheRevalidationTests {
    let clock = TestClock()

    /// `/doc`: a document at `version`, tagged `"v<version>"`, with a `Last-Modified`; `304`
    /// (and an `Age` that counts the checks) to an `If-None-Match` naming the current tag. Every request's
    /// conditional headers are kept in `seen`.
    final class Document: Sendable {
        let version = Atomic<Int>(1)
        let checks = Atomic<Int>(0)
        private let log = Mutex<[String]>([])

        var seen: [String] { log.withLock { $0 } }

        func routes(_ router: Router<TestRequestContext>) {
            router.get("/doc") { request, _ in
                let tag = "\"v\(self.version.load(ordering: .relaxed))\""
                let asked = request.headers[.ifNoneMatch]
                self.log.withLock { $0.append("\(asked ?? "-") | \(request.headers[.ifModifiedSince] ?? "-")") }
                if asked == tag {
                    let checked = self.checks.wrappingAdd(1, ordering: .relaxed).newValue
                    return Hummingbird.Response(
                        status: .notModified, headers: [.eTag: tag, .age: "\(checked)"])
                }
                return Hummingbird.Response(
                    status: .ok,
                    headers: [
                        .contentType: "application/json", .eTag: tag, .lastModified: "Wed, 25 Nov 2026 10:00:00 GMT",
                        .age: "0",
                    ],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"version":\#(self.version.load(ordering: .relaxed))}"#)))
            }
            // The same document from a server that goes by `If-Modified-Since` alone, and whose
            // date has a resolution of a second: a change within it keeps the date, not the tag.
            router.get("/dated") { request, _ in
                let version = self.version.load(ordering: .relaxed)
                let modified = "Wed, 25 Nov 2026 10:00:00 GMT"
                self.log.withLock { $0.append("\(request.headers[.ifNoneMatch] ?? "-") | \(request.headers[.ifModifiedSince] ?? "-")") }
                if request.headers[.ifModifiedSince] == modified {
                    return Hummingbird.Response(status: .notModified, headers: [.eTag: "\"v\(version)\""])
                }
                return Hummingbird.Response(
                    status: .ok, headers: [.contentType: "application/json", .eTag: "\"v\(version)\"", .lastModified: modified],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"version":\#(version)}"#)))
            }
        }
    }

    /// A server with a ``Document`` and a pipeline with a cache for it under `policy`.
    func withDocument(
        _ policy: CachePolicy, _ body: (Document, TestServer, ResponseCache, Pipeline) async throws -> Void
    ) async throws {
        let document = Document()
        let clock = self.clock
        let cache = try ResponseCache(
            environment: "test", policies: ["doc": policy], defaultPolicy: .never, diskFile: nil, limits: .init(),
            clock: { clock.now })
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
        try await withTestServer(routes: document.routes) { server in try await body(document, server, cache, pipeline) }
    }

    @Test("a stale entry with an ETag is asked about; a 304 answers with the stored body, updated headers and a new lifetime")
    func staleEntryIsRevalidated() async throws {
        try await withDocument(.memory(ttl: .seconds(60))) { document, server, cache, pipeline in
            let context = RequestContext(apiName: "doc")
            let first = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(first.origin == .network && first.body == Data(#"{"version":1}"#.utf8))

            clock.advance(61)
            let revalidated = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(revalidated.origin == .revalidated)
            #expect(revalidated.status == 200)
            #expect(revalidated.body == first.body)
            #expect(revalidated.headers["Age"] == "1")  // the 304's fields replace the stored ones
            #expect(revalidated.headers["Content-Type"] == "application/json")
            #expect(document.seen == ["- | -", #""v1" | Wed, 25 Nov 2026 10:00:00 GMT"#])

            // Fresh again for a TTL: answered from memory, the server not asked.
            let hit = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(hit.origin == .memoryCache && hit.body == first.body && hit.headers["Age"] == "1")
            #expect(document.seen.count == 2)

            // The document changed: the conditional request gets it whole, and it is stored.
            document.version.store(2, ordering: .relaxed)
            clock.advance(61)
            let changed = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(changed.origin == .network && changed.body == Data(#"{"version":2}"#.utf8))
            let hitAfterChange = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(hitAfterChange.origin == .memoryCache && hitAfterChange.body == changed.body)
            #expect(document.seen.count == 3)
        }
    }

    @Test("a 304 that names another ETag is not about the stored body: the request goes again without validators")
    func notModifiedWithAnotherTagIsNotTheStoredBody() async throws {
        try await withDocument(.memory(ttl: .seconds(60))) { document, server, _, pipeline in
            let get = { try await pipeline.send(Runway.Request(url: server.url("/dated")), context: RequestContext(apiName: "doc")) }
            #expect(try await get().body == Data(#"{"version":1}"#.utf8))
            // Changed within the second its date names: the server's 304 carries the new tag.
            document.version.store(2, ordering: .relaxed)
            clock.advance(61)
            let changed = try await get()
            #expect(changed.origin == .network)
            #expect(changed.body == Data(#"{"version":2}"#.utf8))
            #expect(changed.headers["ETag"] == #""v2""#)
            #expect(document.seen == ["- | -", #""v1" | Wed, 25 Nov 2026 10:00:00 GMT"#, "- | -"])

            // What was fetched whole is stored; a 304 with the stored tag still confirms it.
            let hit = try await get()
            #expect(hit.origin == .memoryCache && hit.body == changed.body)
            clock.advance(61)
            let revalidated = try await get()
            #expect(revalidated.origin == .revalidated && revalidated.body == changed.body)
            #expect(document.seen.count == 4)
        }
    }

    @Test("a caller's own conditional request is sent as it is, and its 304 reaches the caller")
    func callersOwnConditionalIsLeftAlone() async throws {
        try await withDocument(.memory(ttl: .seconds(60))) { document, server, cache, pipeline in
            let context = RequestContext(apiName: "doc")
            _ = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            clock.advance(61)
            let asking = Runway.Request(url: server.url("/doc"), headers: ["If-None-Match": #""v1""#])
            let own = try await pipeline.send(asking, context: context)
            #expect(own.status == 304 && own.origin == .network && own.body.isEmpty)
            #expect(document.seen.last == #""v1" | -"#)
            // Nor is a method other than GET and HEAD made conditional.
            let key = cache.key(for: Runway.Request(url: server.url("/doc")), context: context)
            let entry = try #require(cache.lookup(key, policy: .memory()))
            #expect(CacheRevalidation.conditional(Runway.Request(method: .post, url: server.url("/doc")), for: entry.0) == nil)
            #expect(CacheRevalidation.conditional(Runway.Request(url: server.url("/doc")), for: entry.0) != nil)
        }
    }

    @Test("a cache-then-network refresh is conditional: a 304 refreshes the entry and is reported unchanged")
    func backgroundRefreshIsConditional() async throws {
        try await withDocument(.memory(ttl: .seconds(60)).cacheThenNetwork()) { document, server, _, pipeline in
            _ = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: RequestContext(apiName: "doc"))
            clock.advance(61)
            let (stream, continuation) = AsyncStream<CacheRefresh>.makeStream()
            var context = RequestContext(apiName: "doc")
            context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { continuation.yield($0) }
            let cached = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: context)
            #expect(cached.origin == .memoryCache)
            var iterator = stream.makeAsyncIterator()
            guard case .unchanged(let fresh)? = await iterator.next() else {
                Issue.record("expected an unchanged refresh")
                return
            }
            #expect(fresh.origin == .revalidated && fresh.body == cached.body)
            #expect(document.seen.last == #""v1" | Wed, 25 Nov 2026 10:00:00 GMT"#)
            // The 304 gave the entry a new lifetime: fresh, so no refresh is started.
            let hit = try await pipeline.send(Runway.Request(url: server.url("/doc")), context: RequestContext(apiName: "doc"))
            #expect(hit.origin == .memoryCache && hit.headers["Age"] == "1")
        }
    }

    /// Lines appended from any thread.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    @Test func everyCallAnsweredWhileARefreshRunsGetsItsOutcome() async throws {
        // `/feed`: its n-th answer is "feed #n"; every answer after the first waits for `gate`.
        let gate = Gate()
        let answers = Counter()
        let routes: TestServer.Routes = { router in
            router.get("/feed") { _, _ in
                let n = answers.increment()
                if n > 1 { await gate.wait() }
                return Hummingbird.Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "feed #\(n)")))
            }
        }
        try await withTestServer(routes: routes) { server in
            let cache = try ResponseCache(policies: ["feed": .memory().cacheThenNetwork()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            _ = try await pipeline.send(Runway.Request(url: server.url("/feed")), context: RequestContext(apiName: "feed"))
            let refreshes = Lines()
            // Two calls answered from the cache: the first starts the refresh, which the server
            // holds; the second starts none, and is told of the first's outcome too.
            for caller in ["first", "second"] {
                var context = RequestContext(apiName: "feed")
                context[CacheRefreshObserver.Key.self] = CacheRefreshObserver { refresh in
                    guard case .updated(let fresh) = refresh else { return refreshes.append("\(caller): \(refresh)") }
                    refreshes.append("\(caller): " + String(decoding: fresh.body, as: UTF8.self))
                }
                let cached = try await pipeline.send(Runway.Request(url: server.url("/feed")), context: context)
                #expect(cached.origin == .memoryCache && cached.body == Data("feed #1".utf8))
            }
            gate.open()
            #expect(await eventually { refreshes.all.count == 2 })
            #expect(Set(refreshes.all) == ["first: feed #2", "second: feed #2"])
            #expect(answers.value == 2)
        }
    }
}
