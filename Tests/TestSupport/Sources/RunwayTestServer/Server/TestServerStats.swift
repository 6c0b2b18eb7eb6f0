import Foundation

/// What a ``TestServer`` has seen: connections accepted, requests per path, aborted responses.
///
/// Every counter is exact and lock-protected, so tests can assert on it from any task.
public final class TestServerStats: Sendable {
    private struct State {
        var connectionsAccepted = 0
        var requestsByPath: [String: Int] = [:]
        var http2Requests = 0
        var abortsByPath: [String: Int] = [:]
        var bodiesStartedByPath: [String: Int] = [:]
        var cutDownloadKeys: Set<String> = []
    }

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    /// Creates empty counters.
    public init() {}

    /// TCP connections accepted so far (an HTTP/2 connection counts once, however many streams).
    public var connectionsAccepted: Int { lock.withLock { state.connectionsAccepted } }

    /// Requests received so far, over all paths.
    public var totalRequests: Int { lock.withLock { state.requestsByPath.values.reduce(0, +) } }

    /// Requests received so far for `path` (the path only, without the query).
    public func requests(path: String) -> Int { lock.withLock { state.requestsByPath[path, default: 0] } }

    /// Requests that arrived over HTTP/2 so far.
    public var http2Requests: Int { lock.withLock { state.http2Requests } }

    /// Responses the server could not finish because the client went away (a failed write
    /// after the client closed the connection or reset the HTTP/2 stream).
    public var aborts: Int { lock.withLock { state.abortsByPath.values.reduce(0, +) } }

    /// Aborted responses for `path`.
    public func aborts(path: String) -> Int { lock.withLock { state.abortsByPath[path, default: 0] } }

    /// Responses for `path` whose body the server began to write (`/slow` and `/bytes` count
    /// theirs): a client that gave up before one began may never make the server see an abort.
    public func bodiesStarted(path: String) -> Int { lock.withLock { state.bodiesStartedByPath[path, default: 0] } }

    /// Waits until at least `count` aborts have been recorded, polling every 10 ms.
    ///
    /// - Returns: `true` once they have, `false` if `timeout` passed first.
    public func waitForAborts(_ count: Int = 1, timeout: Duration = .seconds(60)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while aborts < count {
            if clock.now >= deadline { return false }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return aborts >= count }
        }
        return true
    }

    /// Waits until `condition` holds for these counters, polling every 10 ms. The deadline is
    /// generous (see ``eventually(isolation:timeout:_:)``): a condition that holds returns at once.
    ///
    /// - Returns: `true` once it holds, `false` if `timeout` passed first.
    public func wait(timeout: Duration = .seconds(60), until condition: (TestServerStats) -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while !condition(self) {
            if clock.now >= deadline { return false }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return condition(self) }
        }
        return true
    }

    // MARK: Recording (called by the server, and by custom routes that stream)

    func recordConnection() {
        lock.withLock { state.connectionsAccepted += 1 }
    }

    func recordRequest(path: String, http2: Bool) {
        lock.withLock {
            state.requestsByPath[path, default: 0] += 1
            if http2 { state.http2Requests += 1 }
        }
    }

    /// Records that the server began to write the body of a response for `path`.
    ///
    /// Custom routes that stream a body may call this as their body starts.
    public func recordBodyStart(path: String) {
        lock.withLock { state.bodiesStartedByPath[path, default: 0] += 1 }
    }

    /// Records that the response for `path` could not be completed because the client left.
    ///
    /// Custom routes that stream a body call this when a write fails.
    public func recordAbort(path: String) {
        lock.withLock { state.abortsByPath[path, default: 0] += 1 }
    }

    /// Whether this is the first attempt for a cut download key; marks the key as used.
    func claimFirstCut(key: String) -> Bool {
        lock.withLock { state.cutDownloadKeys.insert(key).inserted }
    }
}
