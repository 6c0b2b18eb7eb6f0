import RunwayCore
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every lane of one ``RequestMergingInterceptor``, behind one lock; applies the lanes' actions
/// (resuming callers, starting and cancelling combined sends) outside it.
final class MergeLanes: Sendable {
    /// A lane per service, API and caller: calls are combined only with calls whose request
    /// differs in nothing but what the merger combines (URL and body), so a merger that takes
    /// the first request's headers and options sends each caller's own.
    struct Key: Hashable, Sendable {
        let service: ServiceID?
        let api: String
        /// Whose the call is, and how it is sent: see ``Caller``.
        let caller: Caller

        init(_ request: Request, context: RequestContext, api: String) {
            service = context.serviceID
            self.api = api
            caller = Caller(request, context: context)
        }
    }

    /// What must be the same for two calls to share one combined request: the method, every
    /// header (credentials, language, content type…), the transport options (TLS pinning,
    /// proxy, limits) and the call's `RequestContext.credentialScope`. The trace-context
    /// headers a tracing interceptor gives each call (`traceparent`, `tracestate`, `baggage`)
    /// are left out: they say which call, not what it asks for.
    struct Caller: Hashable, Sendable {
        let method: HTTPMethod
        let headers: [String]
        let credentialScope: String?
        let options: RequestOptions

        init(_ request: Request, context: RequestContext) {
            method = request.method
            headers = request.headers.compactMap { field in
                let name = field.name.lowercased()
                return Self.traceFields.contains(name) ? nil : name + ":" + field.value
            }
            credentialScope = context.credentialScope
            options = request.options
        }

        private static let traceFields: Set<String> = ["traceparent", "tracestate", "baggage"]

        /// Without the options, which are compared but seldom differ.
        func hash(into hasher: inout Hasher) {
            hasher.combine(method)
            hasher.combine(headers)
            hasher.combine(credentialScope)
        }
    }

    private struct State {
        var lanes: [Key: MergeLane] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())

    func makeID() -> UInt64 {
        state.withLock { state in
            state.lastID &+= 1
            return state.lastID
        }
    }

    /// How many calls of `api` on `service` wait, over every caller's lane.
    func waitingCount(service: ServiceID?, api: String) -> Int {
        state.withLock { state in
            state.lanes.reduce(0) { count, lane in
                lane.key.service == service && lane.key.api == api ? count + lane.value.waitingCount : count
            }
        }
    }

    func admit(_ key: Key, _ waiter: MergeLane.Waiter) {
        let resume = state.withLock { $0.lanes[key, default: MergeLane()].admit(waiter) }
        if let (continuation, admission) = resume { continuation.resume(returning: admission) }
    }

    func cancel(_ key: Key, id: UInt64) {
        // A lane already gone (its calls ended) is not made again: lanes are per caller, and an
        // empty one nothing removes would stay.
        let (continuation, task, error) = state.withLock { $0.lanes[key]?.cancel(id) ?? (nil, nil, MergeLane.cancelled) }
        continuation?.resume(returning: .done(.failure(error)))
        task?.cancel()
    }

    /// The request in flight on `key` ended: send the calls that queued meanwhile as one.
    func finished(_ key: Key, merger: any RequestMerger) {
        state.withLock { state in
            guard let group = state.lanes[key]?.finished(maxMerged: merger.maxMerged) else {
                if state.lanes[key]?.isIdle == true { state.lanes[key] = nil }
                return
            }
            // Created under the lock so the lane holds the task before anyone can cancel it;
            // it runs on its own, so one caller's cancellation never cancels the others' request.
            state.lanes[key]?.sendingTask = Task { [self] in
                let results = await Self.send(group, merger: merger)
                let resumes = self.state.withLock { $0.lanes[key]?.delivered(group, results: results) ?? [] }
                for (continuation, admission) in resumes { continuation.resume(returning: admission) }
                finished(key, merger: merger)
            }
        }
    }

    /// Sends a group (alone when it is one call) and returns one result per member, in order.
    private static func send(_ group: [MergeLane.Waiter], merger: any RequestMerger) async -> [Result<Response, RunwayError>] {
        let first = group[0]
        let stage = RunwayError.Stage.interceptor("merging")
        guard group.count > 1 else {
            do {
                return [.success(try await first.next(first.request, first.context))]
            } catch {
                return [.failure(RunwayError.attributing(error, to: stage, fallback: .transport))]
            }
        }
        func everyone(_ error: RunwayError) -> [Result<Response, RunwayError>] {
            Array(repeating: .failure(error), count: group.count)
        }
        let combined: Request
        do {
            combined = try merger.combine(group.map(\.request))
        } catch {
            return everyone(
                RunwayError(.invalidRequest, "could not combine \(group.count) requests: \(error)", stage: stage, underlying: error))
        }
        // The first member's context (its API, service and values). Each member's cancellation
        // ends only its own wait (`cancel(_:id:)`); the last one's cancels this task.
        let context = first.context
        let response: Response
        do {
            response = try await first.next(combined, context)
        } catch {
            return everyone(RunwayError.attributing(error, to: stage, fallback: .transport))
        }
        guard response.isSuccess else {
            return everyone(
                RunwayError(
                    .serverError, "the merged request of \(group.count) calls answered HTTP \(response.status)", stage: stage,
                    response: response))
        }
        let results: [Result<Response, RunwayError>]
        do {
            results = try merger.split(response, count: group.count)
        } catch {
            return everyone(
                RunwayError(
                    .responseInvalid, "could not split the merged response: \(error)", stage: stage, response: response,
                    underlying: error))
        }
        guard results.count == group.count else {
            return everyone(
                RunwayError(
                    .responseInvalid, "split returned \(results.count) results for \(group.count) merged calls", stage: stage,
                    response: response))
        }
        return results
    }
}
