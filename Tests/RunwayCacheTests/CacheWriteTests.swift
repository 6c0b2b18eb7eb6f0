import Foundation
import Hummingbird
import Runway
import RunwayCache
import RunwayCurl
import RunwayTestServer
import RunwayTesting
import Testing

/// A write that passes the cache removes what reads of the resources it changed stored
/// (RFC 9111 §4.4): through libcurl and the test server.
@Suite(.timeLimit(.minutes(5))) struct CacheWriteTests {
    /// `/v1/items/<id>` (GET): the item's version; PUT, PATCH, DELETE, POST: a new version, 204;
    /// `/v1/items/<id>/publish` (POST): a new version of the item, 200 with the `Location` its
    /// `location` query names; `/v1/conflict` (PUT): 409; `/v1/slow` (PUT): answers after 2 s.
    static func routes(versions: ItemVersions) -> TestServer.Routes {
        { router in
            router.get("/v1/items/:id") { _, context in
                CacheIdentityTests.json(#"{"v":\#(versions.current(try context.parameters.require("id")))}"#)
            }
            for method: HTTPRequest.Method in [.put, .patch, .delete, .post] {
                router.on("/v1/items/:id", method: method) { _, context in
                    versions.bump(try context.parameters.require("id"))
                    return Hummingbird.Response(status: .noContent)
                }
            }
            router.post("/v1/items/:id/publish") { request, context in
                versions.bump(try context.parameters.require("id"))
                var response = CacheIdentityTests.json("{}")
                if let location = request.uri.queryParameters["location"] { response.headers[.location] = String(location) }
                return response
            }
            router.put("/v1/conflict") { _, _ in Hummingbird.Response(status: .conflict) }
            router.put("/v1/slow") { _, _ in
                try await Task.sleep(for: .seconds(2))
                return Hummingbird.Response(status: .noContent)
            }
        }
    }

    let read = RequestContext(apiName: "item", serviceID: "test")
    let write = RequestContext(apiName: "item.update", serviceID: "test")

    func reading(_ url: URL, _ pipeline: Pipeline) async throws -> (origin: ResponseOrigin, body: String) {
        let response = try await pipeline.send(Runway.Request(url: url), context: read)
        return (response.origin, String(decoding: response.body, as: UTF8.self))
    }

    @Test("a PUT, PATCH, DELETE or POST empties what reads of its URL stored, in memory and on disk")
    func aWriteEmptiesItsURL() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        let versions = ItemVersions()
        try await withTestServer(routes: Self.routes(versions: versions)) { server in
            let cache = try ResponseCache(policies: ["item": .memoryAndDisk()], diskFile: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let item = server.url("/v1/items/42?b=2&a=1", hostName: "localhost")
            let other = server.url("/v1/items/7")
            #expect(try await reading(other, pipeline) == (.network, #"{"v":0}"#))
            var expected = 0
            for method: HTTPMethod in [.put, .patch, .delete, .post] {
                #expect(try await reading(item, pipeline) == (.network, #"{"v":\#(expected)}"#))
                #expect(try await reading(item, pipeline) == (.memoryCache, #"{"v":\#(expected)}"#))
                // The same resource spelled otherwise: parameters in another order, the host in
                // upper case, a fragment.
                let written = server.url("/v1/items/42?a=1&b=2#top", hostName: "LocalHost")
                let response = try await pipeline.send(Runway.Request(method: method, url: written), context: write)
                #expect(response.status == 204)
                expected += 1
                // Not even a new cache over the same file answers with the old version.
                let reopened = try ResponseCache(policies: ["item": .memoryAndDisk()], diskFile: file)
                let fromDisk = try await Pipeline(interceptors: [reopened.interceptor], dispatcher: CurlDispatcher())
                    .send(Runway.Request(url: item), context: read)
                #expect(fromDisk.origin == .network, "\(method)")
                #expect(String(decoding: fromDisk.body, as: UTF8.self) == #"{"v":\#(expected)}"#)
                #expect(try await reading(item, pipeline) == (.diskCache, #"{"v":\#(expected)}"#), "\(method)")
                await cache.invalidate(url: item)
            }
            // Another resource keeps its entry.
            #expect(try await reading(other, pipeline).origin != .network)
            #expect(server.stats.requests(path: "/v1/items/7") == 1)
        }
    }

    @Test("a write empties what its response's Location names on its own origin, not on another")
    func aWriteEmptiesTheURLItsResponseNames() async throws {
        let versions = ItemVersions()
        try await withTestServer(routes: Self.routes(versions: versions)) { server in
            let cache = try ResponseCache(policies: ["item": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let item = server.url("/v1/items/42")
            let elsewhere = server.url("/v1/items/42", hostName: "localhost")
            _ = try await reading(item, pipeline)
            _ = try await reading(elsewhere, pipeline)
            #expect(try await reading(item, pipeline).origin == .memoryCache)

            // A relative Location on the same origin.
            let publish = server.url("/v1/items/42/publish?location=/v1/items/42")
            #expect(try await pipeline.send(Runway.Request(method: .post, url: publish), context: write).status == 200)
            #expect(try await reading(item, pipeline) == (.network, #"{"v":1}"#))

            // One naming another origin (localhost is not 127.0.0.1) leaves that origin's entry.
            let naming = server.url("/v1/items/42/publish?location=\(elsewhere.absoluteString)")
            #expect(try await pipeline.send(Runway.Request(method: .post, url: naming), context: write).status == 200)
            #expect(try await reading(elsewhere, pipeline) == (.memoryCache, #"{"v":0}"#))
        }
    }

    @Test("a write answered with an error leaves the entries; one that timed out after it was sent empties them")
    func aFailedWrite() async throws {
        let versions = ItemVersions()
        try await withTestServer(routes: Self.routes(versions: versions)) { server in
            let cache = try ResponseCache(policies: ["item": .memory()])
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            for path in ["/v1/conflict", "/v1/slow"] {
                // What a read of that URL would have stored (the stub answers any GET).
                _ = try await Pipeline(interceptors: [cache.interceptor], dispatcher: StubDispatcher(body: Data("old".utf8)))
                    .send(Runway.Request(url: server.url(path)), context: read)
                #expect(try await reading(server.url(path), pipeline) == (.memoryCache, "old"))
            }
            let conflict = try await pipeline.send(Runway.Request(method: .put, url: server.url("/v1/conflict")), context: write)
            #expect(conflict.status == 409)
            #expect(try await reading(server.url("/v1/conflict"), pipeline) == (.memoryCache, "old"))

            var slow = Runway.Request(method: .put, url: server.url("/v1/slow"))
            slow.options.timeout = .milliseconds(300)
            let timedOut = await #expect(throws: RunwayError.self) { try await pipeline.send(slow, context: write) }
            #expect(timedOut?.code == .timeout)
            #expect(timedOut?.neverSent == false)
            #expect(cache.statistics.memoryEntries == 1, "the entry of /v1/slow is still there")
        }
    }

    @Test("a write that never reached the server leaves the entries")
    func aWriteNeverSent() async throws {
        let cache = try ResponseCache(policies: ["item": .memory()])
        let url = try #require(URL(string: "https://api.example/v1/items/42"))
        let dispatcher = StubDispatcher { request in
            guard request.method == .get else { throw RunwayError(.transport, "connection refused", neverSent: true) }
            return Runway.Response(status: 200, body: Data("v0".utf8))
        }
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: dispatcher)
        _ = try await pipeline.send(Runway.Request(url: url), context: read)
        await #expect(throws: RunwayError.self) { try await pipeline.send(Runway.Request(method: .delete, url: url), context: write) }
        #expect(try await pipeline.send(Runway.Request(url: url), context: read).origin == .memoryCache)
    }

    @Test("invalidate(url:) empties one resource, whatever API or caller stored it")
    func invalidatingAURL() async throws {
        let cache = try ResponseCache(policies: ["item": .memory(), "item.mine": .memory()])
        let stub = CountingStub()
        let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: stub.dispatcher)
        let url = try #require(URL(string: "https://api.example/v1/items/42?x=1"))
        var signedIn = Runway.Request(url: url)
        signedIn.headers["Authorization"] = "Bearer user-1"
        let calls: [(Runway.Request, Runway.RequestContext)] = [
            (Runway.Request(url: url), read), (signedIn, read), (Runway.Request(url: url), RequestContext(apiName: "item.mine")),
            (Runway.Request(url: url.deletingLastPathComponent()), read),
        ]
        for (request, context) in calls { _ = try await pipeline.send(request, context: context) }
        #expect(stub.count == 4)
        await cache.invalidate(url: url)
        for (request, context) in calls { _ = try await pipeline.send(request, context: context) }
        #expect(stub.count == 7, "three entries of the URL were removed, the other one answered")
    }

    /// An invalidation empties memory, then the disk. A read in between missed memory, found
    /// the old entry on disk and copied it to memory, where it outlived the invalidation and
    /// answered every read after it. (Here another program's lock on the file holds the disk
    /// removal up, so the read is sure to come in between.)
    @Test func aReadDuringAnInvalidationDoesNotBringTheEntryBack() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cache.sqlite")
        let versions = ItemVersions()
        try await withTestServer(routes: Self.routes(versions: versions)) { server in
            let cache = try ResponseCache(policies: ["item": .memoryAndDisk()], diskFile: file)
            let pipeline = Pipeline(interceptors: [cache.interceptor], dispatcher: CurlDispatcher())
            let item = server.url("/v1/items/42")
            #expect(try await reading(item, pipeline) == (.network, #"{"v":0}"#))
            versions.bump("42")  // A write the pipeline did not see.
            let release = try await holdingTheWriteLock(of: file)
            let invalidation = Task { await cache.invalidate(url: item) }
            #expect(await eventually { cache.statistics.memoryEntries == 0 })
            // The invalidation has not ended: the old entry may still answer.
            #expect(try await reading(item, pipeline) == (.diskCache, #"{"v":0}"#))
            try await release()
            await invalidation.value
            #expect(try await reading(item, pipeline) == (.network, #"{"v":1}"#))
        }
    }
}

/// Each item's version, moved on by every write to it.
final class ItemVersions: Sendable {
    private let versions = NSLock()
    nonisolated(unsafe) private var values: [String: Int] = [:]  // Guarded by `versions`.

    func current(_ id: String) -> Int { versions.withLock { values[id, default: 0] } }
    func bump(_ id: String) { versions.withLock { values[id, default: 0] += 1 } }
}
