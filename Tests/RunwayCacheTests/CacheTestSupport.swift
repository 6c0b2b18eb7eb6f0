import Foundation
import Runway
import RunwayStorage
import RunwayTestServer
import RunwayTesting

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var seconds: Double = 1_800_000_000  // Guarded by `lock`.

    var now: Double { lock.withLock { seconds } }
    func advance(_ by: Double) { lock.withLock { seconds += by } }
}

/// A stub server answering `<path>#<n>` for its n-th request.
final class CountingStub: Sendable {
    let dispatcher: StubDispatcher

    init(status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/json"]) {
        let box = Box()
        dispatcher = StubDispatcher { request in
            Response(status: status, headers: headers, body: Data("\(request.url.path)#\(box.next())".utf8))
        }
    }

    var count: Int { dispatcher.requests.count }

    /// Hands out increasing numbers.
    final class Box: Sendable {
        private let lock = NSLock()
        nonisolated(unsafe) private var value = 0  // Guarded by `lock`.
        func next() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
    }
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appending(path: "runway-cache-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Another program's write transaction on the cache file `file` (on its store's write queue, not
/// a thread of the cooperative pool), held from the return until the closure returned is called.
func holdingTheWriteLock(of file: URL) async throws -> @Sendable () async throws -> Void {
    let other = try SQLiteStore(file: file, label: "other") { _ in }
    let (inside, hold) = (Gate(), DispatchSemaphore(value: 0))
    let held = Task {
        try await other.write { db in
            try db.execute("DELETE FROM entry WHERE 0")
            inside.open()
            hold.wait()
        }
    }
    await inside.wait()
    return {
        hold.signal()
        try await held.value
    }
}
