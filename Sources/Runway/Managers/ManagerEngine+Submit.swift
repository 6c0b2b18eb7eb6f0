import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ManagerEngine {
    /// What became of a call when it was made.
    enum Submission {
        /// Not started (vetoed, dropped, no more pages): nothing is delivered, nothing was sent
        /// (the error's `neverSent` is set by ``unsent``).
        case notStarted(RunwayError)
        /// Started or joined: the task lands it and returns the outcome.
        case running(ManagerCall, CallTask)
    }

    /// The error of a call that was not started, marked as never sent.
    static func unsent(_ error: RunwayError) -> RunwayError {
        var error = error
        error.neverSent = true
        return error
    }

    /// Steps 1–5 of a call (see ``APIManager``): parameters, veto, validation, policy, start.
    /// - Parameters:
    ///   - awaiting: Whether a `load()` caller will wait for the outcome (else the delegate path).
    ///   - policy: Overrides the manager's policy (paging runs its own queue).
    ///   - checkSuccess: Runs after the manager's response validator; what it throws fails the call.
    ///   - afterSuccess: Runs after the state update of a success, once `beforePerformSuccess` let
    ///     it through and before the delegate hears of it, on the delivery executor when delivery
    ///     runs there; not for a call cancelled or stopped before its delivery.
    ///   - cancellations: A page load's count of `cancelAll()` calls when it was asked for: if
    ///     one came since (a `resetPages()` while the page was prepared), it is not started.
    func submit<Manager: APIManager>(
        _ manager: Manager, params explicit: [String: JSON]?, awaiting: Bool,
        policy: LoadPolicy? = nil, extraParams: [String: JSON] = [:], cancellations: Int? = nil,
        checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)? = nil,
        afterSuccess: (@Sendable (JSON) -> Void)? = nil
    ) -> Submission {
        let stage = RunwayError.Stage.manager(manager.apiName)
        if let refused = Self.unstoredEngine(manager, self, stage) { return refused }
        let serviceID = manager.serviceID
        // One lock for every read of the state a call needs before it starts.
        let identity = ObjectIdentifier(manager)
        let (source, owner) = lock.withLock {
            if state.owner == nil { state.owner = identity }
            return (explicit == nil ? state.paramSource : nil, state.owner)
        }
        guard owner == identity else { return Self.sharedEngine(stage) }
        let entry: ServiceEntry
        let monitor: ReachabilityMonitor?
        do throws(RunwayError) {
            guard let registry = registryOverride ?? ServiceRegistry.shared else {
                throw RunwayError(.configuration, "no ServiceRegistry: call ServiceRegistry.bootstrap at start-up", stage: stage)
            }
            (entry, monitor) = (try registry.entry(serviceID), registry.reachability)
        } catch {
            return failEarly(manager, error: error, stage: stage, awaiting: awaiting, policy: policy)
        }
        return prepare(
            manager, entry: entry, monitor: monitor, source: source, explicit: explicit, extraParams: extraParams,
            cancellations: cancellations, awaiting: awaiting, policy: policy, checkSuccess: checkSuccess, afterSuccess: afterSuccess)
    }

    /// A call that failed before ``submit(_:params:awaiting:policy:extraParams:checkSuccess:afterSuccess:)``
    /// could build its parameters (a typed parameter value that does not encode): delivered as a
    /// failure before the network.
    func fail<Manager: APIManager>(_ manager: Manager, error: RunwayError, awaiting: Bool) -> Submission {
        let stage = RunwayError.Stage.manager(manager.apiName)
        if let refused = Self.unstoredEngine(manager, self, stage) { return refused }
        let identity = ObjectIdentifier(manager)
        let owner = lock.withLock {
            if state.owner == nil { state.owner = identity }
            return state.owner
        }
        guard owner == identity else { return Self.sharedEngine(stage) }
        return failEarly(manager, error: error, stage: stage, awaiting: awaiting, policy: nil)
    }

    /// A call through an engine the manager does not keep: an `engine` that is a computed
    /// property (`var engine: ManagerEngine { ManagerEngine() }`) hands out a new engine on every
    /// read, released as soon as the call is made, which would cancel the call as if the manager
    /// were gone. Refused before anything is sent, naming the property.
    private static func unstoredEngine<Manager: APIManager>(
        _ manager: Manager, _ engine: ManagerEngine, _ stage: RunwayError.Stage
    ) -> Submission? {
        unstoredEngineError(manager, engine, stage).map { .notStarted($0) }
    }

    /// The `.configuration` error of a call through an engine the manager does not keep, or
    /// `nil` (see ``unstoredEngine(_:_:_:)``); paging checks it before it takes the engine's
    /// page gate and cursor.
    static func unstoredEngineError<Manager: APIManager>(
        _ manager: Manager, _ engine: ManagerEngine, _ stage: RunwayError.Stage
    ) -> RunwayError? {
        guard manager.engine !== engine else { return nil }
        return RunwayError(
            .configuration,
            "\(Manager.self).engine returns a new ManagerEngine on each read: store it (let engine = ManagerEngine()), "
                + "or every call is cancelled as soon as it starts", stage: stage, field: "engine")
    }

    /// A call on an engine another manager owns: not delivered (the delegate in the engine is
    /// the other manager's).
    private static func sharedEngine(_ stage: RunwayError.Stage) -> Submission {
        .notStarted(
            RunwayError(
                .configuration,
                "this ManagerEngine belongs to another manager: give each manager its own (let engine = ManagerEngine()), "
                    + "or their calls drop and cancel each other's", stage: stage))
    }

    private func prepare<Manager: APIManager>(
        _ manager: Manager, entry: ServiceEntry, monitor: ReachabilityMonitor?, source: (any APIManagerParamSource)?,
        explicit: [String: JSON]?, extraParams: [String: JSON], cancellations: Int?, awaiting: Bool, policy: LoadPolicy?,
        checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)?, afterSuccess: (@Sendable (JSON) -> Void)?
    ) -> Submission {
        let stage = RunwayError.Stage.manager(manager.apiName)
        var own = explicit ?? source?.params(for: manager) ?? [:]
        if !extraParams.isEmpty { own.merge(extraParams) { _, extra in extra } }
        let params = entry.parameters(own)

        guard manager.shouldCallAPI(with: params) else {
            return .notStarted(RunwayError(.cancelled, "not started: shouldCallAPI vetoed the call", stage: stage))
        }
        let request: Request
        // What the validation interceptor cannot read back from the request: the parameters
        // that went into the path, and those given as null (a query spells null as empty).
        var pathParameters: [String: JSON] = [:]
        var nullParameters: Set<String> = []
        do throws(RunwayError) {
            try manager.validate(params: params)
            if let name = JSON.nonFiniteNumber(in: params) {
                throw RunwayError.paramsInvalid(
                    field: name, "\(name) holds a number that is not finite (NaN or infinity), which neither a URL nor JSON can carry")
            }
            if let monitor, monitor.shouldFailFast(host: entry.endpoint) {
                throw RunwayError(.noNetwork, "the network, or \(entry.endpoint), is unreachable", stage: stage)
            }
            let method = manager.method
            // Parameters that fill the path's placeholders are not sent again in the query or body.
            var sent = params
            var path = manager.path
            // A URL error names what the manager declared: its `path`, when it has one of its own.
            let pathField = path == manager.apiName ? "apiName" : "path"
            if PathTemplate.hasPlaceholders(path) {
                path = try PathTemplate.fill(path, from: &sent)
                pathParameters = params.filter { sent[$0.key] == nil }
            }
            let sendsQuery = ServiceEntry.sendsQuery(method)
            if sendsQuery { nullParameters = Set(sent.lazy.filter { $0.value == .null }.map(\.key)) }
            let url = try entry.url(path, query: sendsQuery ? sent : nil, field: pathField)
            request = entry.request(
                url: url, method: method, parameters: sent, headers: manager.headers(params: params), options: manager.requestOptions)
        } catch {
            return failEarly(manager, error: error, stage: stage, awaiting: awaiting, policy: policy)
        }

        // A `load()` from a task that is already cancelled would be cancelled as soon as it
        // waits; it is not started (deterministically, whatever the chain answers at once).
        if awaiting, Task.isCancelled {
            return .notStarted(RunwayError(.cancelled, "not started: the awaiting task was cancelled", stage: stage))
        }
        let policy = policy ?? manager.loadPolicy
        // A streamed body is read once per send: such a call is never shared.
        let shareKey =
            policy == .shareInFlight && request.bodyStream == nil
            ? Self.shareKey(request, scope: entry.service.authenticator?.credentialScope) : nil
        // Every call runs in a task of its own; policies, `cancelAll()` and the manager's release
        // cancel that task, never the caller's. A call others may join (`shareInFlight`) or the
        // delegate path starts its task under the lock, so a joiner always finds it.
        var superseded: [CallTask] = []
        var context = RequestContext(apiName: manager.apiName, serviceID: entry.id)
        context.setService(of: entry)
        if !pathParameters.isEmpty { context[PathParameters.self] = pathParameters }
        if !nullParameters.isEmpty { context[NullQueryParameters.self] = nullParameters }
        manager.configure(&context, params: params)
        let plan = CallPlan(
            context: context, manager: WeakManager(manager), engine: WeakReference(self), entry: entry,
            request: request, params: params, apiName: manager.apiName, monitor: monitor, checkSuccess: checkSuccess,
            afterSuccess: afterSuccess)
        // Made before the lock so the task's closure is built outside it.
        let call = ManagerCall(shareKey: shareKey, plan: plan)
        let registered: Submission? = lock.withLock {
            // A page asked for before a `resetPages()` or `cancelAll()` that came while it was
            // prepared (its number is from before): the cancellation finds no call to stop, so
            // it is not started here, where it would register.
            if let cancellations, state.paging.cancellations != cancellations {
                return .notStarted(
                    RunwayError(
                        .cancelled, "not started: \(state.paging.lastCancellation) while the page was prepared", stage: stage))
            }
            if policy == .dropNew, !state.calls.isEmpty {
                return .notStarted(RunwayError(.cancelled, "not started: dropped, a call is in flight", stage: stage))
            }
            if policy == .cancelPrevious { superseded = supersedeAllLocked() }
            if let shareKey,
                let joined = state.calls.first(where: { $0.shareKey == shareKey && $0.plan?.request.options == request.options }),
                let task = joined.task
            {
                if awaiting { joined.awaiters += 1 } else { joined.delegateStarted = true }
                return .running(joined, task)
            }
            if awaiting { call.awaiters = 1 } else { call.delegateStarted = true }
            state.calls.append(call)
            // A `load()` nobody can join starts below, outside the lock.
            if awaiting, shareKey == nil { return nil }
            let task = CallTask { await Self.execute(call) }
            call.task = task
            return .running(call, task)
        }
        // Outside the lock: cancellation handlers run synchronously and may take it.
        for task in superseded { task.cancel() }
        if let registered { return registered }
        let task = Self.start(call)
        // A cancel that came between the registration and now found no task to cancel.
        let stopped = lock.withLock {
            call.task = task
            return call.cancelReason != nil
        }
        if stopped { task.cancel() }
        return .running(call, task)
    }

    /// Starts the task of a `load()` call nobody can join. Where the runtime can, it runs at
    /// once on the caller's thread up to its first suspension (`Task.immediate`): a call answered
    /// without waiting (a cache hit, a stub) ends before `load()` waits for it, with no thread
    /// hop. The caller is `load()` itself, which runs off any actor, so no chain work runs on the
    /// caller's actor. Its price (Swift 6.3): the task carries an empty executor-preference
    /// record, so each executor check in it takes the task's status lock, about 6,400
    /// instructions per network call; a plain `Task` makes each cache hit wait for two thread
    /// hops, about three times as long.
    private static func start(_ call: ManagerCall) -> CallTask {
        if #available(macOS 26, iOS 26, *) {
            return Task.immediate { await execute(call) }
        }
        return Task { await execute(call) }
    }

    /// Under `cancelPrevious`, with the lock held: stops every call in flight, and every call
    /// whose response is in but whose delivery still waits for the delivery executor (as
    /// `cancelAll()` does: it is not delivered). Returns the tasks to cancel once the lock is
    /// released (their cancellation handlers take it).
    private func supersedeAllLocked() -> [CallTask] {
        let reason = "superseded by a newer call (cancelPrevious)"
        let superseded = state.calls.compactMap { $0.stop(reason) }
        state.calls.removeAll(keepingCapacity: true)
        for call in state.landing { call.markCancelled(reason) }
        state.landing.removeAll()
        return superseded
    }

    /// A call that fails before the network (configuration, params, reachability): it is
    /// delivered like any failure, from a task of its own. Until it lands it is in flight like
    /// any call: ``isLoading`` counts it, and `cancelAll()`, the manager's release and a newer
    /// call under `cancelPrevious` reach it (it then ends as cancelled, undelivered). Under
    /// `cancelPrevious` it supersedes the calls before it, as a call that starts does: the
    /// newest input's outcome (its invalid parameters) is the one delivered, never an older
    /// call's.
    private func failEarly<Manager: APIManager>(
        _ manager: Manager, error: RunwayError, stage: RunwayError.Stage, awaiting: Bool, policy: LoadPolicy?
    ) -> Submission {
        var error = error
        if error.stage == nil { error.stage = stage }
        // It failed before its request was made: nothing was sent.
        error.neverSent = true
        let call = ManagerCall(shareKey: nil, plan: nil)
        let failure = error
        let weakManager = WeakManager(manager)
        let weakEngine = WeakReference(self)
        // Registered and started under one lock hold, as a delegate-path call is: a cancel that
        // comes after `loadData` returns finds it, and its task.
        var superseded: [CallTask] = []
        defer { for task in superseded { task.cancel() } }
        return lock.withLock {
            if (policy ?? manager.loadPolicy) == .cancelPrevious { superseded = supersedeAllLocked() }
            if awaiting { call.awaiters = 1 } else { call.delegateStarted = true }
            state.calls.append(call)
            let task = CallTask {
                guard let engine = weakEngine.object else { return CallOutcome.failure(failure) }
                return await engine.land(weakManager, call: call, outcome: .failure(failure), stage: stage, afterSuccess: nil)
            }
            call.task = task
            return .running(call, task)
        }
    }

    /// Identical calls: same method, URL (so query parameters) and body.
    /// What makes two calls the same call under `shareInFlight`: the method, URL, header fields
    /// (a service's common headers are read per call: a locale that changed makes another
    /// call), the caller's credential scope (whose token: a call made after another user signed
    /// in never gets the previous user's answer) and the body. The request options are compared
    /// apart.
    private static func shareKey(_ request: Request, scope: String?) -> String {
        var key = request.method.rawValue + " " + request.url.absoluteString
        for field in request.headers { key += "\n" + field.name.lowercased() + ": " + field.value }
        if let scope { key += "\nscope " + scope }
        if let body = request.body { key += "\n\n" + String(decoding: body, as: UTF8.self) }
        return key
    }

    /// Waits for a call's outcome on behalf of a `load()` caller. If the caller's task is
    /// cancelled and nobody else waits for the call (no other `load()`, no delegate-path start),
    /// the call is cancelled and ends as such; if others do, the caller leaves at once with
    /// `.cancelled` and the call goes on for them.
    func wait(for call: ManagerCall, task: CallTask) async -> CallOutcome {
        // A call nobody can join has this one caller: cancelling the caller cancels the call,
        // which then ends at once as cancelled.
        guard call.shareKey != nil else {
            return await withTaskCancellationHandler {
                await task.outcome
            } onCancel: {
                let cancelsCall: Bool = lock.withLock {
                    if call.cancelReason != nil { return true }
                    guard !call.delegateStarted else { return false }
                    call.markCancelled("the awaiting task was cancelled")
                    state.removeCall(call)
                    return true
                }
                if cancelsCall { task.cancel() }
            }
        }
        let relay = OutcomeRelay()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                relay.install(continuation)
                // Not `await task.outcome` here: a cancelled caller could not stop waiting for it.
                Task { relay.resume(with: await task.outcome) }
            }
        } onCancel: {
            let cancelsCall: Bool = lock.withLock {
                call.awaiters -= 1
                if call.cancelReason != nil { return true }  // ending anyway: its outcome says why
                guard call.awaiters <= 0, !call.delegateStarted else { return false }
                call.markCancelled("the awaiting task was cancelled")
                state.removeCall(call)
                return true
            }
            if cancelsCall {
                task.cancel()
            } else {
                relay.resume(
                    with: .failure(
                        RunwayError(
                            .cancelled, "the awaiting task was cancelled; the shared call goes on for the others",
                            stage: call.plan.map { .manager($0.apiName) }, underlying: CancellationError())))
            }
        }
    }
}

/// Hands one outcome to one waiting continuation, whichever of the two arrives first; later
/// outcomes are dropped (a caller that left as cancelled, then the call's own outcome).
private final class OutcomeRelay: Sendable {
    private struct State {
        var continuation: CheckedContinuation<CallOutcome, Never>?
        var outcome: CallOutcome?
        var delivered = false
    }

    private let state = Locked(State())

    func install(_ continuation: CheckedContinuation<CallOutcome, Never>) {
        let ready: CallOutcome? = state.withLock { state in
            guard let outcome = state.outcome else {
                state.continuation = continuation
                return nil
            }
            state.delivered = true
            return outcome
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func resume(with result: CallOutcome) {
        let waiting: CheckedContinuation<CallOutcome, Never>? = state.withLock { state in
            guard !state.delivered, state.outcome == nil else { return nil }
            guard let continuation = state.continuation else {
                state.outcome = result
                return nil
            }
            state.continuation = nil
            state.delivered = true
            return continuation
        }
        waiting?.resume(returning: result)
    }
}
