import Foundation
import RunwayTestServer
import RunwayTesting
import Testing

@testable import Runway

final class PagedItemsAPIManager: PagedAPIManager {
    let engine: ManagerEngine
    let apiName = "items"
    let serviceID: ServiceID = .listings
    let pageSize: Int

    init(registry: ServiceRegistry, pageSize: Int = 10) {
        engine = ManagerEngine(registry: registry, delivery: .inline)
        self.pageSize = pageSize
    }
}

/// Serves `total` items in pages, records the pages asked for, fails the pages in `failOnce`
/// the first time they are asked for.
final class PagedServer: Sendable {
    let total: Int
    let asked = EventLog()
    private let failures: EventLog = EventLog()
    let failOnce: Set<Int>

    init(total: Int, failOnce: Set<Int> = []) {
        self.total = total
        self.failOnce = failOnce
    }

    var dispatcher: StubDispatcher {
        StubDispatcher { [self] request in
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let page = Int(items.first { $0.name == "page" }?.value ?? "") ?? -1
            let size = Int(items.first { $0.name == "pageSize" }?.value ?? "") ?? -1
            asked.append(String(page))
            try await Task.sleep(for: .milliseconds(10))
            if failOnce.contains(page), !failures.events.contains(String(page)) {
                failures.append(String(page))
                return Response(status: 500)
            }
            let start = (page - 1) * size
            let ids = start < total ? Array(start..<min(total, start + size)) : []
            let body = "{\"items\":[" + ids.map { "{\"id\":\($0)}" }.joined(separator: ",") + "]}"
            return Response(status: 200, body: Data(body.utf8))
        }
    }
}

/// A paged manager whose paging settings a test chooses.
final class ConfiguredPagesAPIManager: PagedAPIManager {
    let engine: ManagerEngine
    let apiName = "items"
    let serviceID: ServiceID = .listings
    let firstPage: Int
    let pageParameter: String
    let pageSizeParameter: String

    init(registry: ServiceRegistry, firstPage: Int = 1, pageParameter: String = "page", pageSizeParameter: String = "pageSize") {
        engine = ManagerEngine(registry: registry, delivery: .inline)
        self.firstPage = firstPage
        self.pageParameter = pageParameter
        self.pageSizeParameter = pageSizeParameter
    }
}

/// Holds every page request until `gate` opens (a cancelled one ends at once), then answers a
/// full page, so paging never ends by itself.
func heldPages(_ gate: Gate, asked: EventLog) -> StubDispatcher {
    StubDispatcher { request in
        asked.append(request.url.query ?? "")
        try await gate.waitUnlessCancelled()
        let items = (0..<20).map { "{\"id\":\($0)}" }.joined(separator: ",")
        return Response(status: 200, body: Data("{\"items\":[\(items)]}".utf8))
    }
}

@Suite struct PagedAPIManagerTests {
    @Test func thePageAndItsSizeInOneParameterAreAConfigurationErrorNotACrash() async throws {
        let asked = EventLog()
        let registry = try makeRegistry(heldPages(Gate(), asked: asked))
        for (page, size) in [("page", "page"), ("", "pageSize"), ("page", "")] {
            let manager = ConfiguredPagesAPIManager(registry: registry, pageParameter: page, pageSizeParameter: size)
            let failure = await outcome { try await manager.loadNextPage() }.failure
            #expect(failure?.code == .configuration)
            #expect(failure?.field == (page.isEmpty ? "pageParameter" : "pageSizeParameter"))
        }
        #expect(asked.events.isEmpty)
    }

    @Test func thereIsNoPageAfterTheLargestPageNumber() async throws {
        let gate = Gate()
        gate.open()
        let asked = EventLog()
        let manager = ConfiguredPagesAPIManager(registry: try makeRegistry(heldPages(gate, asked: asked)), firstPage: Int.max)
        try await manager.loadNextPage()
        #expect(manager.currentPage == Int.max)
        let failure = await outcome { try await manager.loadNextPage() }.failure
        #expect(failure?.code == .noContent && failure?.neverSent == true)
        #expect(asked.events == ["page=\(Int.max)&pageSize=20"])
    }

    /// A manager whose first page is sent and held at the server (until `gate` opens), and a
    /// second page load asked for behind it.
    func onePageHeldAndOneQueued() async throws -> (
        gate: Gate, asked: EventLog, manager: ConfiguredPagesAPIManager, first: Task<Result<JSON, RunwayError>, Never>,
        queued: Task<Result<JSON, RunwayError>, Never>
    ) {
        let gate = Gate()
        let asked = EventLog()
        let manager = ConfiguredPagesAPIManager(registry: try makeRegistry(heldPages(gate, asked: asked)))
        let first = Task { await outcome { try await manager.loadNextPage() } }
        #expect(await eventually { asked.events.count == 1 })
        let queued = Task { await outcome { try await manager.loadNextPage() } }
        return (gate, asked, manager, first, queued)
    }

    @Test func aPageCancelledWhileItWaitsForItsTurnEndsAtOnce() async throws {
        let (gate, asked, manager, first, queued) = try await onePageHeldAndOneQueued()
        queued.cancel()
        // Ends while the first page is still held: it does not wait for that page's landing.
        #expect(await queued.value.failure?.code == .cancelled)
        #expect(!gate.isOpened)
        gate.open()
        #expect(await first.value.success != nil)
        #expect(manager.currentPage == 1)
        #expect(asked.events.count == 1)
        // The turn is free again: the next call asks for page 2.
        try await manager.loadNextPage()
        #expect(asked.events == ["page=1&pageSize=20", "page=2&pageSize=20"])
    }

    /// What stopped a page says what stopped it: a queued page stopped by `resetPages()` said
    /// `cancelAll()` was called, and one asked for from a task already cancelled said it
    /// waited for its turn, where `load()` says it was not started.
    @Test func aStoppedPageSaysWhatStoppedIt() async throws {
        let (gate, asked, manager, first, queued) = try await onePageHeldAndOneQueued()
        #expect(await eventually { manager.engine.pageGate.waiting == 1 })
        manager.resetPages()
        gate.open()
        #expect(await first.value.failure?.message == "cancelled: resetPages() was called")
        let stopped = await queued.value.failure
        #expect(stopped?.message == "cancelled: resetPages() was called while the page waited for its turn")
        #expect(stopped?.neverSent == true)
        #expect(asked.events.count == 1)

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await outcome { try await manager.loadNextPage() }
        }
        let notStarted = await early.value.failure
        #expect(notStarted?.message == "not started: the awaiting task was cancelled")
        #expect(notStarted?.neverSent == true)
        #expect(asked.events.count == 1)
    }

    @Test func cancelAllAlsoCancelsThePagesQueuedBehindTheOneInFlight() async throws {
        let gate = Gate()
        let asked = EventLog()
        let manager = ConfiguredPagesAPIManager(registry: try makeRegistry(heldPages(gate, asked: asked)))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        manager.loadNextPageData()
        #expect(await eventually { asked.events.count == 1 })
        manager.loadNextPageData()
        manager.loadNextPageData()
        manager.cancelAll()
        gate.open()
        // A page load started after cancelAll() is sent and lands; none queued before it. It
        // queues behind them, so once it lands they have had their turn.
        try await manager.loadNextPage()
        #expect(asked.events == ["page=1&pageSize=20", "page=1&pageSize=20"])
        #expect(log.events == ["delegate.success"])
    }

    @Test func aPageSizeBelowOneIsAConfigurationErrorAndNothingIsSent() async throws {
        let server = PagedServer(total: 30)
        // A page size below one: a configuration error, not endless paging.
        let manager = PagedItemsAPIManager(registry: try makeRegistry(server.dispatcher), pageSize: 0)
        await #expect { try await manager.loadNextPage() } throws: { error in
            (error as? RunwayError)?.code == .configuration && (error as? RunwayError)?.field == "pageSize"
        }
        #expect(server.asked.events.isEmpty)
    }

    @Test func concurrentNextPageCallsNeitherSkipNorRepeatAPage() async throws {
        let server = PagedServer(total: 45)
        let manager = PagedItemsAPIManager(registry: try makeRegistry(server.dispatcher))
        #expect(manager.currentPage == nil)
        #expect(!manager.isFirstPage)
        let results = await withTaskGroup(of: Result<JSON, RunwayError>.self) { group in
            for _ in 0..<10 {
                group.addTask { await outcome { try await manager.loadNextPage() } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(server.asked.events == ["1", "2", "3", "4", "5"])
        let ids = results.compactMap(\.success).flatMap { $0["items"]?.array ?? [] }.compactMap { $0["id"]?.int }
        #expect(ids.sorted() == Array(0..<45))
        #expect(results.compactMap(\.failure).count == 5)
        #expect(results.compactMap(\.failure).allSatisfy { $0.code == .noContent && $0.neverSent })
        #expect(manager.currentPage == 5)
        #expect(manager.isLastPage)
    }

    @Test func aFailedPageIsAskedForAgainAndResetStartsOver() async throws {
        let server = PagedServer(total: 25, failOnce: [2])
        let manager = PagedItemsAPIManager(registry: try makeRegistry(server.dispatcher))
        try await manager.loadNextPage()
        #expect(manager.isFirstPage)
        let failed = await outcome { try await manager.loadNextPage() }
        #expect(failed.failure?.code == .serverError)
        #expect(manager.currentPage == 1)
        try await manager.loadNextPage()
        try await manager.loadNextPage()
        #expect(manager.isLastPage)
        manager.resetPages()
        #expect(manager.currentPage == nil)
        #expect(!manager.isLastPage)
        try await manager.loadNextPage()
        #expect(server.asked.events == ["1", "2", "2", "3", "1"])
    }

    @Test func delegatePathPagesAreQueuedInOrder() async throws {
        let server = PagedServer(total: 100)
        let manager = PagedItemsAPIManager(registry: try makeRegistry(server.dispatcher))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        for _ in 0..<3 { manager.loadNextPageData() }
        #expect(await eventually { log.events.count == 3 })
        #expect(server.asked.events == ["1", "2", "3"])
        #expect(manager.currentPage == 3)
    }
}
