#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

/// Why the upload task should look at the outbox.
struct UploadTriggers: OptionSet, Sendable {
    let rawValue: UInt8

    /// A full batch is stored (the writer saw `batchSize` unassigned actions).
    static let threshold = UploadTriggers(rawValue: 1 << 0)
    /// Start-up: send what the previous run left (already put into batches).
    static let start = UploadTriggers(rawValue: 1 << 1)
    /// The flush interval passed: send a partial batch too.
    static let interval = UploadTriggers(rawValue: 1 << 2)
    /// `flush()` was called: send everything, now, even while backing off.
    static let flush = UploadTriggers(rawValue: 1 << 3)
    /// The backoff after a failure ended.
    static let retry = UploadTriggers(rawValue: 1 << 4)
    /// The network came back: send what is due now, even while backing off.
    static let reachable = UploadTriggers(rawValue: 1 << 5)
}

/// The upload task's schedule: pending triggers, flush waiters, failures and backoff. A value
/// kept inside ``ActionLogCore/State`` and changed under its lock.
struct UploadState {
    /// One run over the outbox.
    struct Pass: Sendable {
        let number: Int
        /// Whether a last batch smaller than `batchSize` is sent too.
        let partial: Bool
    }

    var triggers: UploadTriggers = []
    var passesStarted = 0
    /// Flush callers, each answered by the first pass that starts after it asked.
    var flushWaiters: [(pass: Int, continuation: ActionLogCore.Waiting)] = []
    var consecutiveFailures = 0
    var backingOff = false
    var stopped = false
    /// Single-action batches the server refused (see ``refused(_:records:acknowledged:maxRefusals:)``),
    /// by batch ID: how often, and how many batches it had acknowledged at the first refusal.
    var refusals: [String: (count: Int, acknowledgedBefore: Int)] = [:]

    /// What to do with a batch the server refused as unacceptable (HTTP 400, 413, 422).
    enum Refusal: Equatable {
        /// Split it in two: the first half keeps its place, the second goes last. Repeated
        /// refusals narrow down to the action the server cannot take; the others go out.
        case split
        /// A single action: send it again after the others.
        case requeue
        /// A single action refused `maxRefusals` times while the server acknowledged other
        /// batches: the server will never take it. Delete it, counted and reported as lost.
        case discard(refusals: Int)
    }

    /// Decides what a refusal of `batchID` (`records` actions) leads to; `acknowledged` is the
    /// number of batches acknowledged so far. A server that refuses every batch (a broken
    /// endpoint, not one bad action) never acknowledges another, so nothing is discarded.
    mutating func refused(_ batchID: String, records: Int, acknowledged: Int, maxRefusals: Int) -> Refusal {
        guard records == 1 else { return .split }
        var entry = refusals[batchID] ?? (0, acknowledged)
        entry.count += 1
        guard entry.count >= maxRefusals, acknowledged > entry.acknowledgedBefore else {
            refusals[batchID] = entry
            return .requeue
        }
        refusals[batchID] = nil
        return .discard(refusals: entry.count)
    }

    /// Takes the pending triggers; returns the pass to run, or `nil` (nothing asked, stopped, or
    /// backing off and neither a flush, the end of the backoff nor the network coming back asked).
    mutating func begin() -> Pass? {
        let asked = triggers
        triggers = []
        guard !asked.isEmpty, !stopped else { return nil }
        if backingOff, asked.isDisjoint(with: [.flush, .retry, .reachable]) { return nil }
        passesStarted += 1
        return Pass(number: passesStarted, partial: !asked.isDisjoint(with: [.flush, .interval]))
    }

    /// Registers a flush caller; `false` once stopped.
    mutating func addFlushWaiter(_ continuation: ActionLogCore.Waiting) -> Bool {
        guard !stopped else { return false }
        flushWaiters.append((passesStarted + 1, continuation))
        triggers.insert(.flush)
        return true
    }

    /// A pass ended: the flush callers it answers and, after a failure, the backoff delay.
    mutating func end(_ pass: Pass, failure: RunwayError?, backoff: RetryPolicy, random: Double) -> (
        answered: [ActionLogCore.Waiting], retryDelay: Duration?
    ) {
        var answered: [ActionLogCore.Waiting] = []
        flushWaiters.removeAll { waiter in
            guard waiter.pass <= pass.number else { return false }
            answered.append(waiter.continuation)
            return true
        }
        guard failure != nil else {
            consecutiveFailures = 0
            backingOff = false
            return (answered, nil)
        }
        consecutiveFailures += 1
        backingOff = true
        return (answered, backoff.backoff(beforeRetry: consecutiveFailures, random: random))
    }

    /// Stops for good; returns every flush caller still waiting.
    mutating func stop() -> [ActionLogCore.Waiting] {
        stopped = true
        defer { flushWaiters = [] }
        return flushWaiters.map(\.continuation)
    }
}

#endif
