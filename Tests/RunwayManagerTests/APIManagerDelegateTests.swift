import Foundation
import Runway
import RunwayTestServer
import RunwayTesting
import Testing

/// A main-actor delegate, as a view controller would be: an isolated conformance.
@MainActor
final class MainActorListScreen {
    var successes = 0
    var failures: [RunwayError.Code] = []
    var titles: [String] = []
}

extension MainActorListScreen: @MainActor APIManagerDelegate {
    func managerCallAPIDidSucceed(_ manager: any APIManager) {
        MainActor.assertIsolated()
        successes += 1
        titles = manager.fetchData()?["items"]?.array?.compactMap { $0["title"]?.string } ?? []
    }

    func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {
        MainActor.assertIsolated()
        failures.append(error.code)
    }
}

@Suite struct APIManagerDelegateTests {
    @Test @MainActor func theDefaultDeliveryIsTheMainActor() async throws {
        let registry = try makeRegistry(jsonStub(#"{"items":[{"title":"Loft"}]}"#))
        let manager = ItemListAPIManager(registry: registry, delivery: .mainActor)
        let screen = MainActorListScreen()
        manager.delegate = screen
        #expect(manager.loadData())
        #expect(await eventually { screen.successes == 1 })
        #expect(screen.titles == ["Loft"])

        // The async path lands at the delegate too, before `load()` returns.
        try await manager.load()
        #expect(screen.successes == 2)
    }

    @Test @MainActor func failuresLandAtTheDelegateOnTheMainActor() async throws {
        let registry = try makeRegistry(jsonStub(#"{"error":"boom"}"#, status: 503))
        let manager = ItemListAPIManager(registry: registry, delivery: .mainActor)
        let screen = MainActorListScreen()
        manager.delegate = screen
        let result = await outcome { try await manager.load() }
        #expect(result.failure?.code == .serverError)
        #expect(screen.failures == [.serverError])
    }

    @Test func theDelegateIsWeakAndAGoneDelegateHearsNothing() async throws {
        let gate = Gate()
        let stub = StubDispatcher { _ in
            await gate.wait()
            return Response(status: 200, body: Data(#"{"ok":true}"#.utf8))
        }
        let manager = ItemListAPIManager(registry: try makeRegistry(stub))
        let log = EventLog()
        weak var weakDelegate: RecordingDelegate?
        do {
            let delegate = RecordingDelegate(log: log)
            weakDelegate = delegate
            manager.delegate = delegate
            #expect(manager.loadData())
        }
        // The call in flight does not keep the delegate alive.
        #expect(weakDelegate == nil)
        #expect(manager.delegate == nil)
        gate.open()
        #expect(await eventually { !manager.isLoading })
        #expect(log.events.isEmpty)
        #expect(manager.rawData == ["ok": true])
    }

    @Test func aQueueDeliveryRunsOnThatQueue() async throws {
        let queue = DispatchQueue(label: "landing")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = Counter()
        final class QueueDelegate: APIManagerDelegate, Sendable {
            let key: DispatchSpecificKey<Bool>
            let onQueue: Counter
            init(key: DispatchSpecificKey<Bool>, onQueue: Counter) {
                self.key = key
                self.onQueue = onQueue
            }
            func managerCallAPIDidSucceed(_ manager: any APIManager) {
                if DispatchQueue.getSpecific(key: key) == true { onQueue.increment() }
            }
            func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {}
        }
        final class QueueManager: APIManager {
            let engine: ManagerEngine
            let apiName = "items"
            let serviceID: ServiceID = .listings
            init(registry: ServiceRegistry, queue: DispatchQueue) {
                engine = ManagerEngine(registry: registry, delivery: .queue(queue))
            }
        }
        let manager = QueueManager(registry: try makeRegistry(jsonStub("[]")), queue: queue)
        let delegate = QueueDelegate(key: key, onQueue: onQueue)
        manager.delegate = delegate
        try await manager.load()
        #expect(onQueue.value == 1)
    }
}
