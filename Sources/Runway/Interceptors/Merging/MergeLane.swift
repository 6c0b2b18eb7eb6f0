import RunwayCore

/// The state of one merge-capable API (per service): whether a request is in flight, the calls
/// waiting for it to end, and the members of the combined request in flight.
///
/// A value-type state machine: each event returns what to do, and ``MergeLanes`` applies that
/// outside its lock (resuming a continuation, cancelling a task).
struct MergeLane {
    /// What a waiting call is told when it is admitted or finished.
    enum Admission: Sendable {
        /// Nothing is in flight: send your request yourself, then report ``MergeLane/finished(maxMerged:)``.
        case sendAlone
        /// Your call is over: the split result, or a failure (cancellation included).
        case done(Result<Response, RunwayError>)
    }

    typealias Continuation = CheckedContinuation<Admission, Never>

    /// A call waiting to be merged or in a combined request.
    struct Waiter: Sendable {
        let id: UInt64
        let request: Request
        let context: RequestContext
        let next: Pipeline.Next
        let continuation: Continuation
    }

    /// Whether a request (alone or combined) is in flight.
    private(set) var busy = false
    /// Calls waiting for the request in flight to end, in arrival order.
    private var waiting: [Waiter] = []
    /// Members of the combined request in flight that still want its result.
    private var sending: [UInt64: Waiter] = [:]
    /// The task sending the combined request, cancelled when every member has gone.
    var sendingTask: Task<Void, Never>?
    /// Calls whose cancellation arrived before they were admitted.
    private var cancelledEarly: Set<UInt64> = []

    /// Whether nothing is in flight or waiting (the lane can be forgotten).
    var isIdle: Bool { !busy && waiting.isEmpty && sending.isEmpty && cancelledEarly.isEmpty }

    /// How many calls wait for the request in flight.
    var waitingCount: Int { waiting.count }

    /// A call arrives; returns the continuation to resume at once and with what, if any.
    mutating func admit(_ waiter: Waiter) -> (Continuation, Admission)? {
        if cancelledEarly.remove(waiter.id) != nil {
            return (waiter.continuation, .done(.failure(Self.cancelled)))
        }
        if !busy {
            busy = true
            return (waiter.continuation, .sendAlone)
        }
        waiting.append(waiter)
        return nil
    }

    /// A call's task was cancelled: it leaves the queue or the combined request (which goes on
    /// for the others; it is cancelled only when nobody is left). Returns the call's error too:
    /// ``cancelled`` while it waited (never sent), ``cancelledInFlight`` once its request went out.
    mutating func cancel(_ id: UInt64) -> (Continuation?, Task<Void, Never>?, RunwayError) {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            return (waiting.remove(at: index).continuation, nil, Self.cancelled)
        }
        if let member = sending.removeValue(forKey: id) {
            return (member.continuation, sending.isEmpty ? sendingTask : nil, Self.cancelledInFlight)
        }
        cancelledEarly.insert(id)
        return (nil, nil, Self.cancelled)
    }

    /// The request in flight ended: the next group to send together, or `nil` (the lane is free).
    mutating func finished(maxMerged: Int) -> [Waiter]? {
        sendingTask = nil
        guard !waiting.isEmpty else {
            busy = false
            cancelledEarly = []
            return nil
        }
        let group = Array(waiting.prefix(maxMerged))
        waiting.removeFirst(group.count)
        for member in group { sending[member.id] = member }
        return group
    }

    /// The combined request ended: the members still waiting, each with its result.
    mutating func delivered(_ group: [Waiter], results: [Result<Response, RunwayError>]) -> [(Continuation, Admission)] {
        zip(group, results).compactMap { member, result in
            sending.removeValue(forKey: member.id).map { ($0.continuation, .done(result)) }
        }
    }

    static let cancelled = RunwayError(
        .cancelled, "cancelled while waiting to be merged", stage: .interceptor("merging"), neverSent: true)
    static let cancelledInFlight = RunwayError(
        .cancelled, "cancelled while the merged request carrying it was in flight", stage: .interceptor("merging"))
}
