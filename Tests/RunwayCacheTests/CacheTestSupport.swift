import Foundation
import Runway
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
