import Foundation

/// The base mechanism behind one API manager: its calls in flight, raw data, last error,
/// delegate and param source, behind one lock.
///
/// Every manager declares one and never touches it otherwise:
/// ```swift
/// let engine = ManagerEngine()                                    // bootstrapped registry, main actor
/// let engine = ManagerEngine(registry: testRegistry, delivery: .inline)   // tests, servers
/// ```
/// The engine belongs to its manager: when the manager is released, the engine is too, and its
/// `deinit` cancels every call still in flight (the dispatcher aborts the transfer). Calls hold
/// the manager and the engine weakly, so a call never extends their lifetime.
public final class ManagerEngine: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is in `state`, read and written only under `lock`.

    /// Where calls land (delegate and delivery hooks).
    public let delivery: ManagerDelivery
    let registryOverride: ServiceRegistry?
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false thread-sanitizer report on Linux.
    let lock = NSLock()
    var state = State()
    let pageGate = PageGate()

    /// The options of managers that do not set ``APIManager/requestOptions``, built once.
    static let defaultRequestOptions = RequestOptions()

    struct State {
        /// The URL of the last call without query parameters, reused while the API name and
        /// service stay the same (saves building a URL per call).
        var baseURLCache: BaseURLCache?
        var rawData: JSON?
        var lastResponse: Response?
        var lastError: RunwayError?
        /// The last body parsed and its JSON (see `parse(_:)`).
        var lastParsed: (body: Data, json: JSON)?
        var calls: [UInt64: ManagerCall] = [:]
        var nextCallID: UInt64 = 0
        weak var delegate: (any APIManagerDelegate)?
        weak var paramSource: (any APIManagerParamSource)?
        var paging = PagingState()
    }

    struct BaseURLCache {
        let entry: ObjectIdentifier
        let apiName: String
        let url: URL
    }

    struct PagingState {
        /// The last page loaded since the last reset, `nil` before the first.
        var currentPage: Int?
        var isLastPage = false
        /// Increases on reset, so a page landing after a reset does not move the cursor.
        var generation = 0
    }

    /// Creates the engine of one manager.
    /// - Parameters:
    ///   - registry: The services to call; `nil` uses ``ServiceRegistry/shared`` at call time.
    ///   - delivery: Where the delegate and the delivery hooks run (default: the main actor).
    public init(registry: ServiceRegistry? = nil, delivery: ManagerDelivery = .mainActor) {
        self.registryOverride = registry
        self.delivery = delivery
    }

    deinit {
        cancelAll(reason: "the manager was released")
    }

    func withState<R>(_ body: (inout State) throws(RunwayError) -> R) throws(RunwayError) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    func read<R>(_ body: (State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(state)
    }

    /// Cancels every call in flight; they end with `.cancelled` and are not delivered.
    func cancelAll(reason: String) {
        let tasks = lock.withLock { () -> [Task<Result<JSON, RunwayError>, Never>] in
            var tasks: [Task<Result<JSON, RunwayError>, Never>] = []
            for call in state.calls.values {
                call.markCancelled(reason)
                // A call whose task is not stored yet is cancelled by its creator, which checks
                // the reason when it stores the task.
                if let task = call.task { tasks.append(task) }
            }
            state.calls.removeAll(keepingCapacity: true)
            return tasks
        }
        // Outside the lock: cancelling runs the task's cancellation handlers at once, and some
        // of ours take the lock.
        for task in tasks { task.cancel() }
    }
}

/// One call in flight, run by a task of its own so that policies, `cancelAll()` and the
/// manager's release can cancel it without touching the caller's task.
final class ManagerCall: @unchecked Sendable {
    // @unchecked Sendable: `task`, `cancelReason`, `awaiters` and `delegateStarted` are read and
    // written only under the owning ManagerEngine's lock (`task` is written once, under that
    // lock; for a task started immediately that is just after it started, and whoever cancels
    // before then leaves `cancelReason` for the creator to act on).
    /// Given under the lock when the call is registered (0 for a call that fails early).
    var id: UInt64 = 0
    let shareKey: String?
    var task: Task<Result<JSON, RunwayError>, Never>?
    var cancelReason: String?
    var awaiters = 0
    var delegateStarted = false

    init(shareKey: String?) {
        self.shareKey = shareKey
    }

    /// Records why the call ends; call under the engine's lock.
    func markCancelled(_ reason: String) {
        if cancelReason == nil { cancelReason = reason }
    }
}
