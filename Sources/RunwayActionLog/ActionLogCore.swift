#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway
import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if ActionLog  // the package trait that brings this dependency (TraitCheck.swift)
import Logging
#endif

/// The state shared by `record` (any thread), the writer thread and the upload task, behind
/// one condition lock; and the one place that counts, logs and reports.
///
/// `record` only appends to the queue under the lock and wakes the writer if it sleeps: no I/O
/// on the caller. Everything else happens on the writer thread (``OutboxWriter``) and the upload
/// task (``BatchUploader``).
final class ActionLogCore: @unchecked Sendable {
    // @unchecked Sendable: `state` is read and written only while holding `condition`; the
    // other stored properties are immutable.

    /// What the policies need, fixed at start-up.
    struct Settings: Sendable {
        let batchSize: Int
        let maxRecords: Int
        let whenFull: ActionLogger.DropPolicy
        let maxActionBytes: Int
        let logger: Logger?
        let onEvent: (@Sendable (ActionLogEvent) -> Void)?
    }

    typealias Waiting = CheckedContinuation<Result<Void, RunwayError>, Never>

    /// Someone waiting for actions to be written.
    struct DurableWaiter {
        /// The action waited for (`recordDurably`), or the last action of a barrier (`persist`).
        let sequence: UInt64
        /// Whether only that one action counts (its drop fails the wait) or everything up to it.
        let exact: Bool
        let continuation: Waiting
    }

    /// Actions refused in `record`, counted there and reported later by the writer.
    struct Refusal: Hashable {
        let kind: ActionLogEvent.Kind
        let reason: String
    }

    struct State {
        var queue: [PendingAction] = []
        /// The actions taken by the writer and not yet written.
        var writing: [PendingAction] = []
        var lastSequence: UInt64 = 0
        var writerParked = false
        var accepting = true
        var writerStopping = false
        var durableWaiters: [DurableWaiter] = []
        var refusals: [Refusal: Int] = [:]
        var statistics = ActionLogStatistics()
        var upload = UploadState()

        /// The oldest action not yet written (or the next to come).
        var oldestUnwritten: UInt64 {
            writing.first?.sequence ?? queue.first?.sequence ?? lastSequence &+ 1
        }
    }

    let settings: Settings
    let condition = Condition()
    private var state = State()

    init(settings: Settings) {
        self.settings = settings
    }

    // MARK: record (any thread)

    /// Queues `action` for the writer, or refuses it (counted now, reported by the writer).
    /// - Returns: The action's sequence number, or the reason it was refused.
    func offer(_ action: UserAction) -> Result<UInt64, RunwayError> {
        let invalid = Self.check(action, maxBytes: settings.maxActionBytes)
        condition.lock()
        let (result, evicted) = offerLocked(action, invalid: invalid)
        condition.unlock()
        evicted?.resume(returning: .failure(droppedError))
        return result
    }

    /// Queues `action` and waits until it is written.
    func offerDurably(_ action: UserAction) async throws(RunwayError) {
        let invalid = Self.check(action, maxBytes: settings.maxActionBytes)
        let result = await withCheckedContinuation { (continuation: Waiting) in
            condition.lock()
            let (result, evicted) = offerLocked(action, invalid: invalid)
            if case .success(let sequence) = result {
                state.durableWaiters.append(DurableWaiter(sequence: sequence, exact: true, continuation: continuation))
            }
            condition.unlock()
            evicted?.resume(returning: .failure(droppedError))
            if case .failure(let error) = result { continuation.resume(returning: .failure(error)) }
        }
        try result.get()
    }

    /// Waits until every action queued before this call is written (or dropped by the policy).
    func waitUntilWritten() async throws(RunwayError) {
        let result = await withCheckedContinuation { (continuation: Waiting) in
            condition.lock()
            let last = state.lastSequence
            if last < state.oldestUnwritten {
                condition.unlock()
                continuation.resume(returning: .success(()))
            } else {
                state.durableWaiters.append(DurableWaiter(sequence: last, exact: false, continuation: continuation))
                condition.unlock()
            }
        }
        try result.get()
    }

    /// Under the lock. Returns the outcome and, when the full-outbox policy evicted a queued
    /// action someone waits for, that waiter (to resume with ``droppedError`` after unlocking).
    private func offerLocked(_ action: UserAction, invalid: String?) -> (Result<UInt64, RunwayError>, Waiting?) {
        let stage = RunwayError.Stage.storage("RunwayActionLog")
        if let invalid {
            refuse(Refusal(kind: .rejected, reason: invalid))
            return (.failure(RunwayError(.paramsInvalid, "action log: \(invalid)", stage: stage, field: "action")), nil)
        }
        guard state.accepting else {
            refuse(Refusal(kind: .rejected, reason: "recorded after shutdown"))
            return (.failure(RunwayError(.cancelled, "action log: recorded after shutdown", stage: stage)), nil)
        }
        var evicted: Waiting?
        let inMemory = state.queue.count + state.writing.count
        if settings.whenFull == .dropNewest, inMemory + state.statistics.stored >= settings.maxRecords {
            refuse(Refusal(kind: .dropped, reason: fullReason))
            return (.failure(droppedError), nil)
        }
        if state.queue.count >= settings.maxRecords {
            // dropOldest, and the writer is a whole outbox behind: the oldest queued action goes
            // (memory stays within two outboxes: this queue and the writer's transaction).
            let oldest = state.queue.removeFirst()
            refuse(Refusal(kind: .dropped, reason: fullReason))
            if let index = state.durableWaiters.firstIndex(where: { $0.exact && $0.sequence == oldest.sequence }) {
                evicted = state.durableWaiters.remove(at: index).continuation
            }
        }
        state.lastSequence &+= 1
        state.queue.append(PendingAction(sequence: state.lastSequence, action: action))
        state.statistics.recorded += 1
        wakeWriter()
        return (.success(state.lastSequence), evicted)
    }

    private var droppedError: RunwayError {
        RunwayError(.fileIO, "action log: dropped, \(fullReason)", stage: .storage("RunwayActionLog"))
    }

    private var fullReason: String { "the outbox is full (\(settings.maxRecords) actions, \(settings.whenFull))" }

    private static func check(_ action: UserAction, maxBytes: Int) -> String? {
        if action.name.isEmpty { return "an action with an empty name" }
        let bytes = action.byteCount
        if bytes > maxBytes { return "an action of \(bytes) bytes (the limit is \(maxBytes))" }
        return nil
    }

    /// Under the lock.
    private func refuse(_ refusal: Refusal) {
        if refusal.kind == .dropped { state.statistics.dropped += 1 } else { state.statistics.rejected += 1 }
        state.refusals[refusal, default: 0] += 1
        wakeWriter()
    }

    /// Under the lock.
    private func wakeWriter() {
        if state.writerParked {
            state.writerParked = false
            condition.signal()
        }
    }

    // MARK: writer thread

    /// What the writer takes in one go.
    struct Work {
        var actions: [PendingAction]
        var refusals: [Refusal: Int]
    }

    /// Blocks until there is work; `nil` once stopping with nothing left to write.
    func takeWork() -> Work? {
        condition.lock()
        defer { condition.unlock() }
        while state.queue.isEmpty, state.refusals.isEmpty, !state.writerStopping {
            state.writerParked = true
            condition.wait()
        }
        state.writerParked = false
        if state.queue.isEmpty, state.refusals.isEmpty { return nil }
        let work = Work(actions: state.queue, refusals: state.refusals)
        state.queue = []
        state.refusals = [:]
        state.writing = work.actions
        return work
    }

    /// The writer wrote `work` as `insertion` says.
    func written(_ work: Work, _ insertion: Outbox.Insertion) {
        let droppedNew = work.actions.count - insertion.kept.count
        var droppedSequences = Set<UInt64>()
        for (index, action) in work.actions.enumerated() where !insertion.kept.contains(index) {
            droppedSequences.insert(action.sequence)
        }
        let resumed: [(Waiting, Result<Void, RunwayError>)] = withState { state in
            state.writing = []
            state.statistics.written += insertion.kept.count
            state.statistics.dropped += insertion.droppedStored + droppedNew
            state.statistics.stored = max(0, state.statistics.stored + insertion.kept.count - insertion.droppedStored)
            return settleWaiters(&state, dropped: droppedSequences)
        }
        for (continuation, result) in resumed { continuation.resume(returning: result) }
        if insertion.droppedStored + droppedNew > 0 {
            report(ActionLogEvent(.dropped, count: insertion.droppedStored + droppedNew, reason: fullReason))
        }
        if !insertion.kept.isEmpty { report(ActionLogEvent(.written, count: insertion.kept.count)) }
    }

    /// Answers the waiters whose actions are neither queued nor being written.
    private func settleWaiters(_ state: inout State, dropped: Set<UInt64>, failure: RunwayError? = nil) -> [(
        Waiting, Result<Void, RunwayError>
    )] {
        let oldest = state.oldestUnwritten
        var resumed: [(Waiting, Result<Void, RunwayError>)] = []
        state.durableWaiters.removeAll { waiter in
            guard waiter.sequence < oldest else { return false }
            if let failure {
                resumed.append((waiter.continuation, .failure(failure)))
            } else if waiter.exact, dropped.contains(waiter.sequence) {
                resumed.append((waiter.continuation, .failure(droppedError)))
            } else {
                resumed.append((waiter.continuation, .success(())))
            }
            return true
        }
        return resumed
    }

    /// The writer could not write `work`: it goes back to the front of the queue, and whoever
    /// waits for it hears `error` (the actions themselves are written by a later attempt).
    func writeFailed(_ work: Work, error: RunwayError, retryDelay: Duration) {
        let failed: [Waiting] = withState { state in
            state.writing = []
            state.queue = work.actions + state.queue
            let last = work.actions.last?.sequence ?? 0
            var failed: [Waiting] = []
            state.durableWaiters.removeAll { waiter in
                guard waiter.sequence <= last else { return false }
                failed.append(waiter.continuation)
                return true
            }
            return failed
        }
        for continuation in failed { continuation.resume(returning: .failure(error)) }
        report(
            ActionLogEvent(
                .writeFailed, count: work.actions.count, reason: "they stay queued in memory", error: error,
                retryDelay: retryDelay))
    }

    /// The writer gave up on `work` at shutdown (the disk refused every write).
    func gaveUp(_ work: Work, error: RunwayError) {
        let resumed = withState { state in
            state.writing = []
            state.statistics.lost += work.actions.count
            return settleWaiters(&state, dropped: [], failure: error)
        }
        for (continuation, result) in resumed { continuation.resume(returning: result) }
        report(ActionLogEvent(.lost, count: work.actions.count, reason: "the outbox could not be written before shutdown", error: error))
    }

    /// Reports refusals counted in `record`.
    func reportRefusals(_ refusals: [Refusal: Int]) {
        for (refusal, count) in refusals {
            report(ActionLogEvent(refusal.kind, count: count, reason: refusal.reason))
        }
    }

    /// The file was found corrupt while in use and rebuilt empty: what it held is lost.
    func fileRebuilt() {
        let lost = withState { state in
            let lost = state.statistics.stored
            state.statistics.lost += lost
            state.statistics.stored = 0
            return lost
        }
        report(ActionLogEvent(.lost, count: lost, reason: "the outbox file was corrupt and was rebuilt empty"))
    }

    // MARK: lifecycle and access

    /// Refuses new actions from now on and lets the writer end once the queue is written.
    func stopWriter() {
        condition.lock()
        state.accepting = false
        state.writerStopping = true
        wakeWriter()
        condition.unlock()
    }

    var isWriterStopping: Bool { withState { $0.writerStopping } }

    var statistics: ActionLogStatistics {
        withState { state in
            var statistics = state.statistics
            statistics.queued = state.queue.count + state.writing.count
            return statistics
        }
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    // MARK: reporting

    /// Logs `event` at its level and hands it to `onEvent`.
    func report(_ event: ActionLogEvent) {
        if let logger = settings.logger {
            switch event.kind {
            case .dropped, .rejected, .uploadFailed:
                logger.warning("action log: \(event)")
            case .lost, .writeFailed:
                logger.error("action log: \(event)")
            case .leftoversFound, .uploaded:
                logger.info("action log: \(event)")
            default:
                logger.trace("action log: \(event)")
            }
        }
        settings.onEvent?(event)
    }
}

#endif
