#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one task that sends batches, one at a time, so a batch is never in flight twice.
///
/// It wakes on a trigger (a full batch stored, start-up, the flush interval, `flush()`, the end
/// of a backoff), then sends batches until none is due: first any batch already assigned (a
/// previous run's, or one whose upload failed — same batch ID, same records), then new full
/// batches, and on `flush()` or the interval a last partial one. For each batch: assign it (one
/// transaction), send it, and only after a 2xx delete it (one transaction). A failure ends the
/// pass and starts a backoff (exponential with jitter, ``RetryPolicy/backoff(beforeRetry:random:)``,
/// lengthened to a `Retry-After` the answer carries, up to `maxBackoff`); during a backoff only
/// `flush()` and the network coming back send.
///
/// ## Why through the `ServiceRegistry`, not an `APIManager`
/// The upload uses ``ServiceRegistry/send(api:of:method:headers:body:options:context:)``: the
/// configured service's base URL, common headers, the app's interceptors (logging, retry,
/// compression, signing), token refresh and the service's own interceptors — the normal
/// pipeline. A manager would add what does not belong to a background upload: the service's
/// common parameters merged into a body whose format is fixed, main-actor delivery, load
/// policies, a response validator that requires a body. And it has no per-call header, which
/// the `Idempotency-Key` needs.
final class BatchUploader: Sendable {
    private let core: ActionLogCore
    private let outbox: Outbox
    private let configuration: ActionLogger.Configuration
    private let backoff: RetryPolicy
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>

    init(core: ActionLogCore, outbox: Outbox, configuration: ActionLogger.Configuration, backoff: RetryPolicy) {
        self.core = core
        self.outbox = outbox
        self.configuration = configuration
        self.backoff = backoff
        (rings, doorbell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the upload task to look at the outbox.
    func ring(_ triggers: UploadTriggers) {
        core.withState { $0.upload.triggers.formUnion(triggers) }
        doorbell.yield()
    }

    /// Sends everything stored now, even during a backoff; throws the pass's failure.
    func flush() async throws(RunwayError) {
        let result = await withCheckedContinuation { (continuation: ActionLogCore.Waiting) in
            if core.withState({ $0.upload.addFlushWaiter(continuation) }) {
                doorbell.yield()
            } else {
                continuation.resume(returning: .failure(Self.stoppedError))
            }
        }
        try result.get()
    }

    /// Stops the loop after the current batch; flush callers still waiting hear `.cancelled`.
    func stop() {
        let waiting = core.withState { $0.upload.stop() }
        doorbell.finish()
        for continuation in waiting { continuation.resume(returning: .failure(Self.stoppedError)) }
    }

    private static let stoppedError = RunwayError(.cancelled, "action log: shut down", stage: .storage("RunwayActionLog"))

    /// The loop; runs until ``stop()`` (or its task is cancelled).
    func run() async {
        var retryTimer: Task<Void, Never>?
        for await _ in rings {
            guard let pass = core.withState({ $0.upload.begin() }) else { continue }
            let failure = await drain(partial: pass.partial)
            let (answered, retryDelay) = core.withState { state in
                if failure != nil { state.statistics.uploadFailures += 1 }
                return state.upload.end(pass, failure: failure, backoff: backoff, random: Double.random(in: 0...1))
            }
            for continuation in answered { continuation.resume(returning: failure.map { .failure($0) } ?? .success(())) }
            retryTimer?.cancel()
            retryTimer = nil
            if let failure, let backoffDelay = retryDelay {
                let retryDelay = delay(backoffDelay, after: failure)
                core.report(ActionLogEvent(.uploadFailed, count: 0, error: failure, retryDelay: retryDelay))
                retryTimer = Task { [weak self] in
                    try? await Task.sleep(for: min(retryDelay, .longestSleep))
                    if !Task.isCancelled { self?.ring(.retry) }
                }
            }
        }
        retryTimer?.cancel()
    }

    /// The wait after a failed upload: the backoff, or longer when the answer carries a
    /// `Retry-After` (a 429 or 503 asking for time), up to ``ActionLogger/Configuration/maxBackoff``.
    private func delay(_ backoffDelay: Duration, after failure: RunwayError) -> Duration {
        guard let value = failure.response?.headers["Retry-After"], let asked = RetryAfter.delay(from: value) else {
            return backoffDelay
        }
        return max(backoffDelay, min(asked, configuration.maxBackoff))
    }

    /// Sends due batches until none is left; returns the failure that ended the pass early.
    private func drain(partial: Bool) async -> RunwayError? {
        let batchSize = configuration.batchSize
        do throws(RunwayError) {
            while true {
                try Self.checkCancellation()
                guard let batch = try await outbox.nextBatch(size: batchSize, partial: partial) else { return nil }
                do {
                    try await send(batch)
                } catch  where error.response.map({ Self.refusalStatuses.contains($0.status) }) == true {
                    try await refused(batch, error)
                    throw error
                }
                // A partial batch is assigned only when fewer than batchSize are left: the last one due.
                if batch.isNew, batch.records.count < batchSize { return nil }
            }
        } catch {
            return error
        }
    }

    /// Statuses that say the batch itself is unacceptable, not the endpoint, the credentials
    /// or the moment: bad request, too large, unprocessable.
    static let refusalStatuses: Set<Int> = [400, 413, 422]

    /// The server refused `batch` (see ``ActionLogger/Configuration/maxRefusals``): split it,
    /// queue it again, or (a single action refused too often) delete it as lost.
    private func refused(_ batch: PreparedBatch, _ error: RunwayError) async throws(RunwayError) {
        let decision = core.withState { state in
            state.upload.refused(
                batch.id, records: batch.records.count, acknowledged: state.statistics.batchesUploaded,
                maxRefusals: configuration.maxRefusals)
        }
        switch decision {
        case .split:
            try await outbox.split(batch: batch.id)
        case .requeue:
            try await outbox.requeue(batch: batch.id, batchSize: configuration.batchSize)
        case .discard(let refusals):
            let deleted = try await outbox.delete(batch: batch.id)
            core.withState { state in
                state.statistics.lost += deleted
                state.statistics.stored = max(0, state.statistics.stored - deleted)
            }
            core.report(
                ActionLogEvent(
                    .lost, count: deleted, batchID: batch.id,
                    reason:
                        "the server refused it \(refusals) times (HTTP \(error.response?.status ?? 0)) while it acknowledged other batches",
                    error: error))
        }
    }

    /// Sends one batch and deletes it once acknowledged.
    private func send(_ batch: PreparedBatch) async throws(RunwayError) {
        guard let registry = configuration.registry ?? ServiceRegistry.shared else {
            throw RunwayError(
                .configuration, "action log: no ServiceRegistry (call ServiceRegistry.bootstrap at start-up)",
                stage: .storage("RunwayActionLog"))
        }
        var context = RequestContext()
        // The batch carries an idempotency key: sending it again is safe, so the app's retry may.
        context[RetryOverride.Key.self] = RetryOverride(allowsNonIdempotent: true)
        core.report(ActionLogEvent(.uploading, count: batch.records.count, batchID: batch.id))
        let response = try await registry.send(
            api: configuration.apiName, of: configuration.serviceID, method: .post,
            headers: ["Content-Type": "application/json", ActionBatch.idempotencyHeader: batch.id], body: batch.body,
            options: configuration.requestOptions, context: context)
        guard response.isSuccess else {
            throw RunwayError(
                .serverError, "the action batch was answered HTTP \(response.status)", stage: .service(configuration.serviceID),
                response: response)
        }
        core.report(ActionLogEvent(.acknowledged, count: batch.records.count, batchID: batch.id))
        // Acknowledged: delete even if this task is being cancelled, so the batch is not re-sent.
        let outbox = self.outbox
        let deleted = try await Task { () async -> Result<Int, RunwayError> in
            do throws(RunwayError) {
                return .success(try await outbox.delete(batch: batch.id))
            } catch {
                return .failure(error)
            }
        }.value.get()
        core.withState { state in
            state.upload.refusals[batch.id] = nil
            state.statistics.uploaded += batch.records.count
            state.statistics.batchesUploaded += 1
            state.statistics.stored = max(0, state.statistics.stored - deleted)
        }
        core.report(ActionLogEvent(.uploaded, count: batch.records.count, batchID: batch.id))
    }

    private static func checkCancellation() throws(RunwayError) {
        if Task.isCancelled {
            throw RunwayError(.cancelled, "action log: the upload was stopped", stage: .storage("RunwayActionLog"))
        }
    }
}

#endif
