import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ManagerEngine {
    /// Steps 5–8 of a call, in its own task; it holds the manager and the engine weakly while
    /// the request is in flight.
    static func execute(_ call: ManagerCall) async -> CallOutcome {
        guard let plan = call.plan else { return .failure(RunwayError(.cancelled, "cancelled: the call has nothing to send")) }
        let stage = RunwayError.Stage.manager(plan.apiName)
        plan.manager?.afterCallingAPI(with: plan.params)
        let sent: Result<Response, RunwayError>
        do {
            // The call itself answers the cache's question (``ResponseAcceptance``); set on this
            // copy only, as the call holds the plan.
            var context = plan.context
            context.acceptance = call
            sent = .success(try await plan.entry.pipeline.send(plan.request, context: context))
        } catch {
            sent = .failure(error)
        }
        if let monitor = plan.monitor {
            switch sent {
            case .success: monitor.recordCall(failure: nil, host: plan.entry.endpoint)
            case .failure(let error): monitor.recordCall(failure: error, host: plan.entry.endpoint)
            }
        }
        guard let engine = plan.engine else {
            return .failure(RunwayError(.cancelled, "cancelled: the manager was released", stage: stage))
        }
        switch engine.settle(plan, call: call, sent: sent, stage: stage) {
        case .landed(let result):
            return result
        case .toDeliver(let outcome):
            // Holding the manager weakly across the hop to the delivery executor.
            return await engine.deliverElsewhere(plan.weakManager, call: call, outcome, stage: stage, afterSuccess: plan.afterSuccess)
        }
    }

    /// What became of a call once its response or failure is in: landed here, or to deliver on
    /// the delivery executor.
    enum Settled {
        case landed(CallOutcome)
        case toDeliver(CallOutcome)
    }

    /// Steps 6–7 (and 8 when delivery is inline), holding the manager strongly only while they
    /// run: a delivery elsewhere must not keep a manager alive that its owner lets go meanwhile.
    private func settle(
        _ plan: CallPlan, call: ManagerCall, sent: Result<Response, RunwayError>, stage: RunwayError.Stage
    ) -> Settled {
        guard let manager = plan.manager else {
            return .landed(.failure(RunwayError(.cancelled, "cancelled: the manager was released", stage: stage)))
        }
        // A call's task is cancelled only with a reason, by whoever cancelled it.
        let reason: String? = lock.withLock { call.cancelReason }
        if let reason {
            return .landed(.failure(RunwayError(.cancelled, "cancelled: \(reason)", stage: stage, underlying: sent.failure)))
        }
        let outcome = Self.evaluate(
            manager, engine: self, entry: plan.entry, sent: sent, stage: stage, checkSuccess: plan.checkSuccess)
        if let landed = landHere(manager, call: call, outcome: outcome, afterSuccess: plan.afterSuccess) {
            return .landed(landed)
        }
        return .toDeliver(outcome)
    }

    /// Step 6: the response hook, the service's common error handling, the response validator.
    private static func evaluate(
        _ manager: any APIManager, engine: ManagerEngine, entry: ServiceEntry, sent: Result<Response, RunwayError>,
        stage: RunwayError.Stage, checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)?
    ) -> Result<APIResponse, RunwayError> {
        let response: Response
        switch sent {
        case .failure(let error): return .failure(error)
        case .success(let value): response = value
        }
        manager.didReceiveResponse(response)
        let parsed = engine.parseIfAny(response.body)
        if var error = entry.service.error(for: response, json: try? parsed.get()) {
            if error.stage == nil { error.stage = .service(entry.id) }
            if error.response == nil { error.response = response }
            return .failure(error)
        }
        return accept(manager, entry: entry, response: response, parsed: parsed, stage: stage, checkSuccess: checkSuccess)
    }

    /// The manager's part of step 6: a body that is JSON (or none), the response validator and
    /// `checkSuccess`. Also asked by the cache before it stores a response (``ManagerCall``'s
    /// ``ResponseAcceptance``), so it runs no hook.
    static func accept(
        _ manager: any APIManager, entry: ServiceEntry, response: Response, parsed: Result<JSON, RunwayError>,
        stage: RunwayError.Stage, checkSuccess: (@Sendable (APIResponse) throws(RunwayError) -> Void)?
    ) -> Result<APIResponse, RunwayError> {
        let json: JSON
        switch parsed {
        case .success(let value):
            json = value
        case .failure(var error):
            error.stage = stage
            error.response = response
            return .failure(error)
        }
        var apiResponse = APIResponse(response: response, json: json)
        apiResponse.decoder = manager.decoder ?? entry.service.decoder
        do throws(RunwayError) {
            try manager.validate(response: apiResponse)
            try checkSuccess?(apiResponse)
        } catch {
            var error = error
            if error.stage == nil { error.stage = stage }
            if error.response == nil { error.response = response }
            return .failure(error)
        }
        return .success(apiResponse)
    }

    /// Step 7–8: update the state, then deliver on the delivery executor.
    func land(
        _ weakManager: WeakManager, call: ManagerCall, outcome: Result<APIResponse, RunwayError>, stage: RunwayError.Stage,
        afterSuccess: (@Sendable (JSON) -> Void)?
    ) async -> CallOutcome {
        let landed: CallOutcome? = {
            guard let manager = weakManager.object else {
                return .failure(RunwayError(.cancelled, "cancelled: the manager was released", stage: stage))
            }
            return landHere(manager, call: call, outcome: outcome, afterSuccess: afterSuccess)
        }()
        if let landed { return landed }
        return await deliverElsewhere(weakManager, call: call, outcome, stage: stage, afterSuccess: afterSuccess)
    }

    /// Step 8 on the delivery executor, after `landHere` returned `nil`. A call cancelled
    /// (`cancelAll()`, the manager's release, its awaiting task) while it waited for that
    /// executor is not delivered: it ends as cancelled, and `afterSuccess` does not run (a page
    /// never delivered does not move the page cursor).
    func deliverElsewhere(
        _ weakManager: WeakManager, call: ManagerCall, _ outcome: Result<APIResponse, RunwayError>, stage: RunwayError.Stage,
        afterSuccess: (@Sendable (JSON) -> Void)?
    ) async -> CallOutcome {
        await delivery.run { [self] in
            let reason: String? = lock.withLock {
                state.removeLanding(call)
                if let reason = call.cancelReason { return reason }
                state.record(outcome)
                return nil
            }
            if let reason { return .failure(RunwayError(.cancelled, "cancelled: \(reason)", stage: stage)) }
            guard let manager = weakManager.object else {
                return .failure(RunwayError(.cancelled, "cancelled: the manager was released", stage: stage))
            }
            let delivered = deliver(manager, outcome, to: currentDelegate(), afterSuccess: afterSuccess)
            return Self.result(of: outcome, delivered: delivered, stage: stage)
        }
    }

    /// Step 7, and step 8 too when delivery is inline: what the call returns, or `nil` when the
    /// delivery must run on the delivery executor. Synchronous, so a call delivered inline
    /// lands without another async frame.
    func landHere(
        _ manager: any APIManager, call: ManagerCall, outcome: Result<APIResponse, RunwayError>,
        afterSuccess: (@Sendable (JSON) -> Void)?
    ) -> CallOutcome? {
        // Inline delivery reads the delegate under this lock too (one lock less per call);
        // another executor reads it when the delivery runs there.
        let inline = delivery.isInline
        var inlineDelegate: (any APIManagerDelegate)?
        let cancelled: String? = lock.withLock {
            if let reason = call.cancelReason { return reason }
            if inline { inlineDelegate = state.delegate }
            state.removeCall(call)
            if inline {
                state.record(outcome)
            } else {
                // Until its delivery runs elsewhere, `cancelAll()` and the release still reach
                // it; the state takes its outcome there, once it is known not cancelled (a call
                // that does not count never shows in `rawData`, `lastResponse` or `lastError`).
                state.landing.append(call)
            }
            return nil
        }
        if let cancelled {
            return .failure(RunwayError(.cancelled, "cancelled: \(cancelled)", stage: .manager(manager.apiName)))
        }
        // Delivered elsewhere, `afterSuccess` runs there, once the call is known not cancelled.
        guard inline else { return nil }
        // Inline delivery calls straight through: no closure to allocate for an executor hop.
        let delivered = deliver(manager, outcome, to: inlineDelegate, afterSuccess: afterSuccess)
        return Self.result(of: outcome, delivered: delivered, stage: .manager(manager.apiName))
    }

    /// What a landed call returns: its outcome, or `.cancelled` when a `before` hook stopped
    /// the delivery.
    private static func result(
        of outcome: Result<APIResponse, RunwayError>, delivered: Bool, stage: RunwayError.Stage
    ) -> CallOutcome {
        switch outcome {
        case .success(let response) where delivered:
            .success(response)
        case .success:
            .failure(RunwayError(.cancelled, "delivery stopped by beforePerformSuccess", stage: stage))
        case .failure(let error) where delivered:
            .failure(error)
        case .failure(let error):
            .failure(RunwayError(.cancelled, "delivery stopped by beforePerformFail", stage: stage, underlying: error))
        }
    }

    /// `before…` → delegate → `after…`; false when a `before` hook stopped the delivery. A
    /// success's `afterSuccess` (a page moving the page cursor) runs between the `before` hook and
    /// the delegate: a page the hook stopped is not delivered and does not move the cursor.
    private func deliver(
        _ manager: any APIManager, _ outcome: Result<APIResponse, RunwayError>, to delegate: (any APIManagerDelegate)?,
        afterSuccess: (@Sendable (JSON) -> Void)?
    ) -> Bool {
        switch outcome {
        case .success(let response):
            guard manager.beforePerformSuccess(response) else { return false }
            afterSuccess?(response.json)
            delegate?.managerCallAPIDidSucceed(manager)
            manager.afterPerformSuccess(response)
        case .failure(let error):
            guard manager.beforePerformFail(error) else { return false }
            delegate?.managerCallAPIDidFail(manager, error: error)
            manager.afterPerformFail(error)
        }
        return true
    }

    func currentDelegate() -> (any APIManagerDelegate)? {
        lock.withLock { state.delegate }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension ManagerEngine {
    /// The body parsed as JSON; a body equal to the last one parsed gives the same value without
    /// parsing again (cache hits and unchanged refreshes answer with the same bytes).
    func parse(_ body: Data) throws(RunwayError) -> JSON {
        if let last = read({ $0.lastParsed }), last.body == body { return last.json }
        let json = try JSON(parsing: body)
        lock.withLock { state.lastParsed = (body, json) }
        return json
    }

    /// The body as a manager reads it: JSON, `.null` when empty, or why it is not JSON.
    func parseIfAny(_ body: Data) -> Result<JSON, RunwayError> {
        guard !body.isEmpty else { return .success(.null) }
        do {
            return .success(try parse(body))
        } catch {
            return .failure(error)
        }
    }
}

// A call tells the cache what its manager would refuse, so the cache stores none of it: a
// response stored and then refused would fail every call the cache answers until it expires.
extension ManagerCall: ResponseAcceptance {
    func refusal(of response: Response) -> RunwayError? {
        guard let plan, let manager = plan.manager, let engine = plan.engine else { return nil }
        let outcome = ManagerEngine.accept(
            manager, entry: plan.entry, response: response, parsed: engine.parseIfAny(response.body),
            stage: .manager(plan.apiName), checkSuccess: plan.checkSuccess)
        guard case .failure(let error) = outcome else { return nil }
        return error
    }
}
