import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The base mechanism behind one API manager: its calls in flight, raw data, last error,
/// delegate and param source, behind one lock.
///
/// Every manager declares one and never touches it otherwise:
/// ```swift
/// let engine = ManagerEngine()                                    // bootstrapped registry, main actor
/// let engine = ManagerEngine(registry: testRegistry, delivery: .inline)   // tests, servers
/// ```
/// The engine belongs to its manager: one engine per manager (a second manager calling through
/// it fails with `.configuration`, since their calls would drop or cancel each other's); when the
/// manager is released, the engine is too, and its
/// `deinit` cancels every call still in flight (the dispatcher aborts the transfer). Calls hold
/// the manager and the engine weakly, so a call never extends their lifetime.
/// What a call ends with: the response and its JSON as the manager's validators saw them, or
/// the failure.
typealias CallOutcome = Result<APIResponse, RunwayError>

/// The task of one call. Its operation never throws; the task is typed as throwing because
/// `Task.immediate` wraps a typed `throws(Never)` operation in a thunk, one allocation more per
/// call.
typealias CallTask = Task<CallOutcome, any Error>

extension Task where Success == CallOutcome, Failure == any Error {
    /// The call's outcome (its operation never throws).
    var outcome: CallOutcome {
        get async {
            do {
                return try await value
            } catch {
                return .failure(RunwayError(.cancelled, "cancelled", underlying: error))
            }
        }
    }
}

public final class ManagerEngine: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is in `state`, read and written only under `lock`.

    /// Where calls land (delegate and delivery hooks).
    public let delivery: ManagerDelivery
    let registryOverride: ServiceRegistry?
    // A pthread mutex (RunwaySync's `Lock`) rather than `Locked`, whose `sending` contract refuses
    // the weak non-Sendable delegate, or `Synchronization.Mutex`, which trips a false
    // thread-sanitizer report on Linux.
    let lock = Lock()
    // Unchecked: every access is under `lock`, so the runtime's dynamic exclusivity check (a
    // thread-local access set, entered and left on every read and write of a class's stored
    // `var`) only costs time on a manager's call path.
    @exclusivity(unchecked) var state = State()
    let pageGate = PageGate()

    /// The options of managers that do not set ``APIManager/requestOptions``, built once.
    static let defaultRequestOptions = RequestOptions()

    struct State {
        /// The last successful call's response and JSON (the manager's raw data).
        var lastSuccess: APIResponse?
        var lastResponse: Response?
        var lastError: RunwayError?
        /// The last body parsed and its JSON (see `parse(_:)`).
        var lastParsed: (body: Data, json: JSON)?
        /// The calls in flight, in no particular order (a few at most for most managers: an
        /// array is cheaper to add to and remove from than a dictionary that hashes a key).
        var calls: [ManagerCall] = []
        /// Calls landed (state updated) whose delivery waits for the delivery executor: out of
        /// `calls` (not loading), but still cancelled by `cancelAll()`, the release and a newer
        /// call under `cancelPrevious`.
        var landing: [ManagerCall] = []
        weak var delegate: (any APIManagerDelegate)?
        weak var paramSource: (any APIManagerParamSource)?
        var paging = PagingState()
        /// The manager the engine belongs to: the first one that called through it.
        var owner: ObjectIdentifier?
    }

    struct PagingState {
        /// The last page loaded since the last reset, `nil` before the first.
        var currentPage: Int?
        var isLastPage = false
        /// Increases on reset, so a page landing after a reset does not move the cursor.
        var generation = 0
        /// Increases on `cancelAll()`, so a page load queued before it is not started after it.
        var cancellations = 0
        /// What the last cancellation was (`cancelAll() was called`, `resetPages() was called`),
        /// for the message of a page load it stopped before it started.
        var lastCancellation = ""
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

    /// Reads under the lock. The state is passed in place (`inout`), not copied: a copy would
    /// retain and release every field of it (the raw data, the last response, the delegate...).
    func read<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Cancels every call in flight; they end with `.cancelled` and are not delivered.
    func cancelAll(reason: String) {
        let tasks = lock.withLock { () -> [CallTask] in
            defer { state.calls.removeAll(keepingCapacity: true) }
            state.paging.cancellations += 1
            state.paging.lastCancellation = reason
            for call in state.landing { call.markCancelled(reason) }
            state.landing.removeAll()
            return state.calls.compactMap { $0.stop(reason) }
        }
        // Outside the lock: cancelling runs the cancellation handlers at once, and some of ours
        // take the lock.
        for task in tasks { task.cancel() }
    }
}

extension ManagerEngine.State {
    /// Forgets `call` if it is still in flight (a call already removed by a cancellation is not).
    mutating func removeCall(_ call: ManagerCall) {
        guard let index = calls.firstIndex(where: { $0 === call }) else { return }
        calls.swapAt(index, calls.count - 1)
        calls.removeLast()
    }

    /// Step 7: a landed call's outcome becomes the manager's state (`rawData`, `lastResponse`,
    /// `lastError`).
    mutating func record(_ outcome: Result<APIResponse, RunwayError>) {
        switch outcome {
        case .success(let response):
            lastSuccess = response
            lastResponse = response.response
            lastError = nil
        case .failure(let error):
            lastError = error
            if let response = error.response { lastResponse = response }
        }
    }

    /// Forgets `call` as waiting for its delivery, if it still is.
    mutating func removeLanding(_ call: ManagerCall) {
        guard let index = landing.firstIndex(where: { $0 === call }) else { return }
        landing.swapAt(index, landing.count - 1)
        landing.removeLast()
    }
}

/// One call in flight. It runs in a task the engine owns, which policies, `cancelAll()` and the
/// manager's release cancel: the chain sees task cancellation only, and the caller's task is
/// never touched.
final class ManagerCall: @unchecked Sendable {
    // @unchecked Sendable: `task`, `cancelReason`, `awaiters` and `delegateStarted` are read and
    // written only under the owning ManagerEngine's lock (`task` is written once, under that
    // lock, when the call is registered).
    let shareKey: String?
    /// What the call's task runs; `nil` for a call that failed before it was sent.
    let plan: CallPlan?
    var task: CallTask?
    var cancelReason: String?
    var awaiters = 0
    var delegateStarted = false

    init(shareKey: String?, plan: CallPlan?) {
        self.shareKey = shareKey
        self.plan = plan
    }

    /// Records why the call ends; call under the engine's lock.
    func markCancelled(_ reason: String) {
        if cancelReason == nil { cancelReason = reason }
    }

    /// Marks the call cancelled and returns its task, to cancel once the engine's lock is
    /// released; call under that lock.
    func stop(_ reason: String) -> CallTask? {
        markCancelled(reason)
        return task
    }
}
