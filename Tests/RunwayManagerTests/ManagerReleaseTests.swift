import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

@Suite struct ManagerReleaseTests {
    @Test func releasingTheManagerCancelsItsCallsAndDeliversNothing() async throws {
        let cancellations = Counter()
        let requests = Counter()
        let registry = try makeRegistry(slowEchoStub(delay: neverDuringATest, requests: requests, cancellations: cancellations))
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        weak var weakManager: ItemListAPIManager?
        weak var weakEngine: ManagerEngine?
        do {
            let manager = ItemListAPIManager(registry: registry)
            weakManager = manager
            weakEngine = manager.engine
            manager.delegate = delegate
            #expect(manager.loadData())
            #expect(await eventually { requests.value == 1 })
        }
        // Nothing but the caller kept the manager: the call in flight does not.
        #expect(weakManager == nil)
        #expect(await eventually { cancellations.value == 1 })
        // Nor its engine, the only holder of the delegate: nothing can be delivered any more.
        #expect(weakEngine == nil)
        #expect(log.events.isEmpty)
    }

    @Test func releasingAPagedManagerCancelsItsPageLoad() async throws {
        let cancellations = Counter()
        let requests = Counter()
        let registry = try makeRegistry(slowEchoStub(delay: neverDuringATest, requests: requests, cancellations: cancellations))
        let weakManager: WeakBox<PagedItemsAPIManager>
        do {
            let manager = PagedItemsAPIManager(registry: registry)
            weakManager = WeakBox(manager)
            manager.loadNextPageData()
            #expect(await eventually { requests.value == 1 })
        }
        #expect(await eventually { weakManager.object == nil })
        #expect(await eventually { cancellations.value == 1 })
    }
}

/// A weak reference a `@Sendable` closure can read.
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
    // Written once in init; `weak` loads are atomic.
    nonisolated(unsafe) weak var object: Object?
    init(_ object: Object) { self.object = object }
}
