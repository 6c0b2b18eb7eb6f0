import Dispatch
import Foundation
import Hummingbird
import NIOCore
import Runway
import RunwayCurl
import RunwayTestServer
import Testing

/// The page cursor moves only for a page that is delivered, against a real server.
@Suite struct PageCursorTests {
    final class QueuedPagesAPIManager: PagedAPIManager {
        let engine: ManagerEngine
        let apiName = "pages"
        let serviceID: ServiceID = .listings
        var pageSize: Int { 2 }

        init(registry: ServiceRegistry, queue: DispatchQueue) {
            engine = ManagerEngine(registry: registry, delivery: .queue(queue))
        }
    }

    /// Pull to refresh while a page is being prepared: this manager's `shouldCallAPI` resets the
    /// pages once when asked, as a `resetPages()` from another thread does when it comes between
    /// the page's number being chosen and its call starting.
    final class RefreshedPagesAPIManager: PagedAPIManager {
        let engine: ManagerEngine
        let apiName = "pages"
        let serviceID: ServiceID = .listings
        var pageSize: Int { 2 }
        /// 1: the next call resets the pages while it is prepared (then 2: no more).
        let resetWhilePreparing = Counter()

        init(registry: ServiceRegistry) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
        }

        func shouldCallAPI(with params: [String: JSON]) -> Bool {
            if resetWhilePreparing.value == 1 {
                _ = resetWhilePreparing.increment()
                resetPages()
            }
            return true
        }
    }

    /// Refuses the first delivery of page 2 in `beforePerformSuccess`, as a manager does that
    /// finds a response stale.
    final class PickyPagesAPIManager: PagedAPIManager {
        let engine: ManagerEngine
        let apiName = "pages"
        let serviceID: ServiceID = .listings
        var pageSize: Int { 2 }
        let refusals = Counter()

        init(registry: ServiceRegistry) {
            engine = ManagerEngine(registry: registry, delivery: .inline)
        }

        func beforePerformSuccess(_ response: APIResponse) -> Bool {
            guard response.json["items"]?.array?.first?["id"]?.int == 4, refusals.value == 0 else { return true }
            _ = refusals.increment()
            return false
        }
    }

    @Test("a page beforePerformSuccess stops is not loaded: the cursor stays and the next call asks for it again")
    func aPageTheHookStopsIsAskedForAgain() async throws {
        let asked = EventLog()
        try await withTestServer(routes: Self.pages(asked)) { server in
            let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: server.url("/v1").absoluteString)])
            let manager = PickyPagesAPIManager(registry: registry)
            try await manager.loadNextPage()
            let stopped = await outcome { try await manager.loadNextPage() }
            #expect(stopped.failure?.code == .cancelled, "\(stopped)")
            #expect(manager.currentPage == 1)
            let second = try await manager.loadNextPage()
            #expect(second["items"]?.array?.compactMap { $0["id"]?.int } == [4, 5])
            #expect(asked.events == ["1", "2", "2"])
            #expect(manager.currentPage == 2)
        }
    }

    @Test("a page whose number was chosen before a resetPages() is not sent: the refreshed list never gets it")
    func aResetWhileAPageIsPreparedStopsThatPage() async throws {
        let asked = EventLog()
        try await withTestServer(routes: Self.pages(asked)) { server in
            let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: server.url("/v1").absoluteString)])
            let manager = RefreshedPagesAPIManager(registry: registry)
            try await manager.loadNextPage()
            #expect(manager.currentPage == 1)

            _ = manager.resetWhilePreparing.increment()
            let stale = await outcome { try await manager.loadNextPage() }
            #expect(stale.failure?.code == .cancelled, "\(stale)")
            #expect(manager.currentPage == nil)
            #expect(asked.events == ["1"])

            let first = try await manager.loadNextPage()
            #expect(first["items"]?.array?.compactMap { $0["id"]?.int } == [2, 3])
            #expect(asked.events == ["1", "1"])
            #expect(manager.currentPage == 1)
        }
    }

    /// Pages of two items, page `n` holding `2n` and `2n + 1`; records the pages asked for.
    static func pages(_ asked: EventLog) -> TestServer.Routes {
        { router in
            router.get("/v1/pages") { request, _ -> Response in
                let page = request.uri.queryParameters.get("page").flatMap { Int($0) } ?? 0
                asked.append(String(page))
                let text = #"{"items":[{"id":\#(page * 2)},{"id":\#(page * 2 + 1)}]}"#
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            }
        }
    }

    /// A page whose response is in but whose delivery waits for a busy queue, then is cancelled
    /// (`cancelAll()`, or its awaiting task): it is not delivered, so the next call asks for it
    /// again, and its data is not the manager's. It moved the cursor, and the next call asked for
    /// the page after it: that page was lost to the list.
    @Test(arguments: [true, false])
    func aPageCancelledWhileItsDeliveryWaitsIsAskedForAgain(byCancelAll: Bool) async throws {
        let asked = EventLog()
        try await withTestServer(routes: Self.pages(asked)) { server in
            let registry = try makeRegistry(CurlDispatcher(), services: [TestService(baseURL: server.url("/v1").absoluteString)])
            let queue = DispatchQueue(label: "page-cursor.delivery")
            let manager = QueuedPagesAPIManager(registry: registry, queue: queue)
            try await manager.loadNextPage()
            #expect(manager.currentPage == 1)

            queue.suspend()
            let second = Task { await outcome { try await manager.loadNextPage() } }
            // Page 2 has landed (no call in flight) and waits for the suspended queue.
            let landed = await eventually { asked.events.count == 2 && !manager.isLoading }
            if byCancelAll { manager.cancelAll() } else { second.cancel() }
            queue.resume()
            #expect(landed)
            #expect(await second.value.failure?.code == .cancelled)
            #expect(manager.currentPage == 1)
            // Nor did it become the manager's data: `rawData` is still page 1 (it was page 2, a
            // page that "counts as not loaded", with `lastResponse` its answer).
            #expect(manager.rawData?["items"]?.array?.compactMap { $0["id"]?.int } == [2, 3])

            let again = try await manager.loadNextPage()
            #expect(again["items"]?.array?.compactMap { $0["id"]?.int } == [4, 5])
            #expect(asked.events == ["1", "2", "2"])
            #expect(manager.currentPage == 2)
        }
    }
}
