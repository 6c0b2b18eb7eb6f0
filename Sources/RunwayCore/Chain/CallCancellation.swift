import Foundation

/// The cancellation of one call, apart from its task's.
///
/// An API manager runs an awaited call (`try await manager.load()`) in the caller's own task,
/// not in a task of its own: creating, awaiting and cancelling a task per call cost more than
/// the rest of the manager's work. The manager must still be able to cancel that call without
/// cancelling the caller's task — a newer call under `cancelPrevious`, `cancelAll()`, the
/// manager's release — so such a call carries a `CallCancellation` in its ``RequestContext``.
///
/// Whatever waits inside the chain observes both: a dispatcher or an interceptor that suspends
/// on its own (not only in `next`) waits through ``RequestContext/withCancellationHandler(operation:onCancel:isolation:)``
/// instead of `withTaskCancellationHandler`, and checks ``RequestContext/isCancelled`` instead of
/// `Task.isCancelled`. Runway's dispatchers and interceptors do; one that does not still ends the
/// call as cancelled, only later: when it returns, or when the chain reaches the dispatcher
/// (``Pipeline`` checks before dispatching).
public class CallCancellation: @unchecked Sendable {
    // @unchecked Sendable: not final (an API manager's call record is one, saving an allocation
    // per call; nothing outside this module can subclass it); every field is guarded by `lock`.
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    private let lock: NSLock
    // Guarded by `lock`.
    @exclusivity(unchecked) nonisolated(unsafe) private var cancelled = false
    // Guarded by `lock`. Few at once: the dispatcher's, an interceptor's.
    @exclusivity(unchecked) nonisolated(unsafe) private var handlers: [(id: UInt64, run: @Sendable () -> Void)] = []
    // Guarded by `lock`.
    @exclusivity(unchecked) nonisolated(unsafe) private var lastID: UInt64 = 0

    /// Creates a cancellation that has not happened.
    public init() {
        lock = NSLock()
    }

    /// A cancellation guarded by `lock`, which its owner also uses (an API manager's engine:
    /// no lock to allocate per call). The owner must not call into the cancellation while it
    /// holds `lock`.
    package init(sharing lock: NSLock) {
        self.lock = lock
    }

    /// Whether the call was cancelled.
    public final var isCancelled: Bool {
        lock.withLock { cancelled }
    }

    /// Cancels the call: every handler registered runs once, now, on this thread; later ones run
    /// as they register. Cancelling again does nothing.
    public final func cancel() {
        let running: [(id: UInt64, run: @Sendable () -> Void)]? = lock.withLock {
            guard !cancelled else { return nil }
            cancelled = true
            defer { handlers = [] }
            return handlers
        }
        // Outside the lock: a handler may ask `isCancelled` or unregister.
        for handler in running ?? [] { handler.run() }
    }

    /// Registers `handler`; runs it at once instead (and returns `nil`) if already cancelled.
    final func register(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let id: UInt64? = lock.withLock {
            guard !cancelled else { return nil }
            lastID &+= 1
            handlers.append((lastID, handler))
            return lastID
        }
        if id == nil { handler() }
        return id
    }

    final func unregister(_ id: UInt64) {
        lock.withLock { handlers.removeAll { $0.id == id } }
    }
}

extension RequestContext {
    /// Whether the call was cancelled: its task, or its ``cancellation``.
    public var isCancelled: Bool {
        Task.isCancelled || cancellation?.isCancelled == true
    }

    /// Throws ``RunwayError`` `.cancelled` when ``isCancelled``.
    public func checkCancellation() throws(RunwayError) {
        if Task.isCancelled {
            throw RunwayError(.cancelled, "the calling task was cancelled", underlying: CancellationError())
        }
        if cancellation?.isCancelled == true {
            throw RunwayError(.cancelled, "the call was cancelled")
        }
    }

    /// `withTaskCancellationHandler` for a call: `onCancel` runs when the task is cancelled or
    /// when the call's ``cancellation`` is (at once if either already is; it may run twice, so
    /// it must be idempotent). Use it wherever a dispatcher or an interceptor waits on its own.
    public func withCancellationHandler<T>(
        operation: () async throws -> T, onCancel: @escaping @Sendable () -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async rethrows -> T {
        guard let cancellation else {
            return try await withTaskCancellationHandler(operation: operation, onCancel: onCancel)
        }
        let registration = cancellation.register(onCancel)
        defer { if let registration { cancellation.unregister(registration) } }
        return try await withTaskCancellationHandler(operation: operation, onCancel: onCancel)
    }

    /// Runs `operation` so that the call's cancellation reaches it as *task* cancellation (for
    /// work that only observes the task: `Task.sleep`, a handler of the user's): directly when
    /// there is no ``cancellation`` (the task's cancellation already does), else in a task of
    /// its own that either cancellation cancels.
    public func runCancellingWithCall<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        guard cancellation != nil else { return try await operation() }
        let run = Task { try await operation() }
        return try await withCancellationHandler { try await run.value } onCancel: { run.cancel() }
    }
}
