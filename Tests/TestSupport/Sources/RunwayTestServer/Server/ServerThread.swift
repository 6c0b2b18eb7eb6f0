import Foundation
import NIOPosix

/// The threads one test server runs on while it is up: a NIO event loop for its sockets and a
/// ``ServerThread`` for its request handlers. A server in another process would have threads of
/// its own; an in-process test server gets them from here.
///
/// Without them every test server shared NIO's two singleton event loops and the process's
/// cooperative pool with every test running at the same time. On a two-core machine running the
/// whole suite, a TLS handshake or an answer then waited in those queues for up to ten seconds,
/// long enough for a client's connect timeout to fire while nothing was wrong with the client.
///
/// A server hands its threads back when it stops, and the next server to start takes them: they
/// are never shut down. Hummingbird finishes its graceful shutdown in a task of its own that can
/// still reach the event loop after the server has stopped, and NIO refuses work on a loop that
/// has been shut down. The number of threads is bounded by the number of servers up at once.
struct ServerThreads: Sendable {
    let eventLoops: MultiThreadedEventLoopGroup
    let handlers: ServerThread

    private static let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private static var idle: [ServerThreads] = []

    /// Threads that no running server uses, started if none are idle.
    static func take() -> ServerThreads {
        if let threads = lock.withLock({ idle.popLast() }) { return threads }
        return ServerThreads(
            eventLoops: MultiThreadedEventLoopGroup(numberOfThreads: 1), handlers: ServerThread(name: "runway.test-server"))
    }

    /// Hands the threads back once the server that took them has stopped.
    func giveBack() {
        Self.lock.withLock { Self.idle.append(self) }
    }
}

/// A thread of its own that runs a test server's tasks: a task started with it as its executor
/// preference, and every child task that task creates, runs here rather than on the cooperative
/// pool.
final class ServerThread: TaskExecutor, @unchecked Sendable {
    // NSCondition rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let condition = NSCondition()
    // Only read or written under `condition`.
    private var jobs: [UnownedJob] = []

    /// Starts the thread.
    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        var batch: [UnownedJob] = []
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
