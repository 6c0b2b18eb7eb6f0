import Foundation
import Runway
import RunwaySync
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
        let manager = QueueManager(registry: try makeRegistry(jsonStub("[]")), queue: queue)
        let delegate = QueueDelegate(key: key, onQueue: onQueue)
        manager.delegate = delegate
        try await manager.load()
        #expect(onQueue.value == 1)
    }

    /// A manager whose calls land on `queue`.
    final class QueueManager: APIManager {
        let engine: ManagerEngine
        let apiName = "items"
        let serviceID: ServiceID = .listings
        init(registry: ServiceRegistry, queue: DispatchQueue) {
            engine = ManagerEngine(registry: registry, delivery: .queue(queue))
        }
    }

    @Test("a call cancelled while its delivery waits for the delivery queue is not delivered: load() throws .cancelled")
    func cancelAllBeforeTheDeliveryRuns() async throws {
        // The delivery queue is busy (suspended here, as a main thread busy with a frame would be).
        let queue = DispatchQueue(label: "busy landing")
        queue.suspend()
        let stub = jsonStub("[]")
        let manager = QueueManager(registry: try makeRegistry(stub), queue: queue)
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        manager.delegate = delegate
        let load = Task { try await manager.load() }
        // Landed: answered and no longer loading; its delivery waits.
        #expect(await eventually { stub.requests.count == 1 && !manager.isLoading })
        manager.cancelAll()
        queue.resume()
        var failure: RunwayError?
        do {
            _ = try await load.value
        } catch {
            failure = error as? RunwayError
        }
        #expect(failure?.code == .cancelled, "\(String(describing: failure))")
        #expect(log.events.isEmpty)
        // A call that does not count leaves the state as it was: no data, no response.
        #expect(manager.rawData == nil && manager.lastResponse == nil && manager.lastError == nil)
    }

    /// A failure the state holds is not cleared by a later call cancelled while its delivery
    /// waits, and that call's data is not the manager's.
    @Test func aCallCancelledWhileItsDeliveryWaitsLeavesTheStateAsItWas() async throws {
        let queue = DispatchQueue(label: "busy landing")
        let stub = StubDispatcher { request in
            request.url.query == "fail=1"
                ? Response(status: 500) : Response(status: 200, headers: ["Content-Type": "application/json"], body: Data("[1]".utf8))
        }
        let manager = QueueManager(registry: try makeRegistry(stub), queue: queue)
        await #expect(throws: RunwayError.self) { try await manager.load(params: ["fail": 1]) }
        #expect(manager.lastError?.code == .serverError)
        queue.suspend()
        let load = Task { try await manager.load() }
        #expect(await eventually { stub.requests.count == 2 && !manager.isLoading })
        manager.cancelAll()
        queue.resume()
        await #expect(throws: RunwayError.self) { try await load.value }
        #expect(manager.lastError?.code == .serverError)
        #expect(manager.lastResponse?.status == 500)
        #expect(manager.rawData == nil)
    }

    /// A manager whose parameters fail validation unless they hold `ok`.
    final class CheckedQueueManager: APIManager {
        let engine: ManagerEngine
        let apiName = "items"
        let serviceID: ServiceID = .listings
        var loadPolicy: LoadPolicy { .concurrent }
        init(registry: ServiceRegistry, queue: DispatchQueue) {
            engine = ManagerEngine(registry: registry, delivery: .queue(queue))
        }
        func validate(params: [String: JSON]) throws(RunwayError) {
            guard params["ok"] != nil else { throw .paramsInvalid(field: "ok", "ok is missing") }
        }
    }

    @Test("a call that fails before the network is in flight until it lands: cancelAll() right after loadData() keeps it from the delegate")
    func aCallThatFailsEarlyIsCancelledByCancelAll() async throws {
        // Repeated: before the fix, the failure reached the delegate in most runs (its task
        // landed it after cancelAll() had looked for calls in flight).
        for _ in 0..<20 {
            // Busy until the cancel, so the failure cannot be delivered before it.
            let queue = DispatchQueue(label: "landing")
            queue.suspend()
            let manager = CheckedQueueManager(registry: try makeRegistry(jsonStub("[]")), queue: queue)
            let log = EventLog()
            let delegate = RecordingDelegate(log: log)
            manager.delegate = delegate
            #expect(manager.loadData(params: [:]))
            manager.cancelAll()
            queue.resume()
            #expect(await eventually { !manager.isLoading })
            // The call's task has run by now; anything it delivered is on the serial queue.
            try await Task.sleep(for: .milliseconds(20))
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            // (Its task may have landed it first: the delivery is what cancelAll() stops, and
            // the state never takes the failure.)
            #expect(log.events.isEmpty)
            #expect(manager.lastError == nil)
        }
    }

    @Test("a manager released while its call's delivery waits for the delivery queue is freed, and its delegate hears nothing")
    func releaseBeforeTheDeliveryRuns() async throws {
        let queue = DispatchQueue(label: "busy landing")
        queue.suspend()
        let log = EventLog()
        let delegate = RecordingDelegate(log: log)
        weak var weakManager: QueueManager?
        do {
            let stub = jsonStub("[]")
            let manager = QueueManager(registry: try makeRegistry(stub), queue: queue)
            weakManager = manager
            manager.delegate = delegate
            #expect(manager.loadData())
            #expect(await eventually { stub.requests.count == 1 && !manager.isLoading })
        }
        // The delivery waiting on the queue does not keep the manager alive.
        #expect(weakManager == nil)
        queue.resume()
        // A delivery after the queue drains would be heard by now: the queue is serial.
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(log.events.isEmpty)
    }

    /// A delegate that records how many of its landings ran at once.
    final class OverlapDelegate: APIManagerDelegate, Sendable {
        private let inside = Locked(0)
        private let most = Locked(0)
        let landed = Counter()

        var mostAtOnce: Int { most.withLock { $0 } }

        func managerCallAPIDidSucceed(_ manager: any APIManager) {
            let now = inside.withLock {
                $0 += 1
                return $0
            }
            most.withLock { $0 = max($0, now) }
            // A landing that takes a while, as one that updates a screen does.
            Thread.sleep(forTimeInterval: 0.02)
            inside.withLock { $0 -= 1 }
            landed.increment()
        }

        func managerCallAPIDidFail(_ manager: any APIManager, error: RunwayError) {}
    }

    @Test("a concurrent delivery queue still lands one call at a time")
    func aConcurrentQueueLandsOneCallAtATime() async throws {
        // Held until every call has landed, so their deliveries are all pending at once.
        let queue = DispatchQueue(label: "concurrent landing", attributes: .concurrent)
        queue.suspend()
        // Its policy is `.concurrent`: the calls run side by side.
        let stub = jsonStub("[]")
        let manager = CheckedQueueManager(registry: try makeRegistry(stub), queue: queue)
        let delegate = OverlapDelegate()
        manager.delegate = delegate
        let calls = 6
        for _ in 0..<calls { #expect(manager.loadData(params: ["ok": true])) }
        #expect(await eventually { stub.requests.count == calls && !manager.isLoading })
        queue.resume()
        #expect(await eventually { delegate.landed.value == calls })
        #expect(delegate.mostAtOnce == 1)
    }
}
