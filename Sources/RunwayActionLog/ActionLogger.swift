#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Records what users do and uploads it in batches: "record locally, upload when 30
/// have accumulated, and at every start upload what the last run left behind", without losing
/// records to crashes, failed uploads or a full disk — and without one request per action.
///
/// ```swift
/// // At start-up, once (after the ServiceRegistry, or pass `registry:` in the configuration):
/// var configuration = ActionLogger.Configuration(
///     file: applicationSupport.appending(path: "actions.sqlite"), serviceID: .analytics)
/// configuration.logger = logger                      // optional: drops, failures, leftovers
/// let actions = try ActionLogger(configuration)      // uploads what the last run left behind
///
/// // Anywhere, from any thread or task; returns at once, never does I/O:
/// actions.record("listing.favourite", attributes: ["listing": "42"])
///
/// try await actions.flush()       // on demand: write and upload everything now
/// await actions.shutdown()        // when the app goes away: write what is queued, stop
/// ```
///
/// ## What happens to an action
/// 1. `record` checks it (a non-empty name, at most ``Configuration/maxActionBytes``), appends it
///    to an in-memory queue under a lock and returns (a median of 0.35 µs, measured in
///    `Benchmarks/ActionLogBenchmarks`). It never blocks on I/O.
/// 2. A writer thread of the logger's own takes everything queued and writes it in one SQLite
///    transaction (WAL mode) to the **outbox**, giving each action a unique record ID.
/// 3. When ``Configuration/batchSize`` (30) actions are stored, the upload task puts the oldest 30
///    into a batch (durably, with a batch ID) and sends them as **one** request through the app's
///    normal pipeline (see ``ActionBatch`` for the wire format), to the configured service's
///    ``Configuration/apiName``. Fewer than 30 go out on ``flush()``, every
///    ``Configuration/flushInterval``, and at the next start-up.
/// 4. Only after a 2xx are the batch and its actions deleted. A failure keeps them and retries
///    with exponential backoff and jitter (no sooner than the answer's `Retry-After`, up to
///    ``Configuration/maxBackoff``), re-sending the same batch ID and records; the server
///    de-duplicates by record ID (``ActionDeduplicator``): at-least-once from the client,
///    exactly-once after de-duplication.
///
/// ## What is durable when
/// An action is durable once the writer has committed it — normally well under a millisecond
/// after `record` returns (a median of 0.23 ms from hand-over to commit, fsync included, in
/// `Benchmarks/ActionLogBenchmarks`), a few milliseconds on a slow disk. **An action handed to `record` but
/// not yet committed when the process is killed is lost**: that window is the only loss a crash
/// can cause (``ActionLogStatistics/queued`` shows how many are in it). Callers who need more use
/// ``recordDurably(_:)`` (returns once that action is committed) or ``persist()`` (once
/// everything recorded before it is). Once committed, an action survives process kills at any
/// moment — during an upload, between the server's acknowledgement and the delete — and is
/// uploaded by the next run.
///
/// ## When the outbox is full
/// At ``Configuration/maxRecords`` the ``DropPolicy`` decides which actions go; every drop is
/// counted (``statistics``), reported (``ActionLogEvent/Kind/dropped``) and logged. Never a silent
/// loss: each action handed over ends up rejected, dropped, lost (a corrupt file rebuilt, logged
/// at error level), uploaded, or still pending — see ``ActionLogStatistics``.
public final class ActionLogger: Sendable {
    /// The configuration in force.
    public let configuration: Configuration
    private let core: ActionLogCore
    private let outbox: Outbox
    private let writer: OutboxWriter
    private let uploader: BatchUploader
    private let uploadTask: Task<Void, Never>
    private let intervalTask: Task<Void, Never>?
    private let registryReachability: ReachabilityObservation?

    /// Opens the outbox, puts what the last run left into batches, and starts the writer thread
    /// and the upload task (which sends those batches at once).
    /// - Throws: `RunwayError` `.configuration` for a value that cannot work (`RunwayError.field`
    ///   names it), an outbox file that cannot be opened or created or is another program's
    ///   database (a table named like the outbox's, other columns), or one another logger has
    ///   open (in this process or another, until its ``shutdown()`` or release); `.fileIO` when
    ///   the actions an earlier run left cannot be put into batches (a write that fails, on a
    ///   full disk: they stay in the file for the next start). A corrupt file is not an
    ///   error: it is moved aside to `<file>.corrupt`, rebuilt empty, and the loss is logged.
    public init(_ configuration: Configuration) throws(RunwayError) {
        let backoff = try configuration.validated()
        self.configuration = configuration
        let core = ActionLogCore(
            settings: .init(
                batchSize: configuration.batchSize, maxRecords: configuration.maxRecords, whenFull: configuration.whenFull,
                maxActionBytes: configuration.maxActionBytes, logger: configuration.logger, onEvent: configuration.onEvent))
        let outbox = try Outbox(file: configuration.file) { core.fileRebuilt() }
        if outbox.rebuiltAtOpen {
            core.report(
                ActionLogEvent(
                    .lost, count: 0,
                    reason:
                        "the outbox file was corrupt at open; it was moved to \(configuration.file.lastPathComponent).corrupt and "
                        + "rebuilt empty: the actions of earlier runs it held, which cannot be counted, are lost"
                ))
        }
        let leftovers = try outbox.batchLeftovers(batchSize: configuration.batchSize)
        core.withState { state in
            state.statistics.stored = leftovers.records
            state.statistics.leftovers = leftovers.records
        }
        if leftovers.records > 0 {
            core.report(
                ActionLogEvent(
                    .leftoversFound, count: leftovers.records,
                    reason:
                        "\(leftovers.assignedBatches + leftovers.newBatches) batches left by the previous run "
                        + "(\(leftovers.assignedBatches) already sent once)"
                ))
        }
        let uploader = BatchUploader(core: core, outbox: outbox, configuration: configuration, backoff: backoff)
        let writer = OutboxWriter(core: core, outbox: outbox) { uploader.ring(.threshold) }
        self.core = core
        self.outbox = outbox
        self.writer = writer
        self.uploader = uploader
        writer.start()
        uploadTask = Task { await uploader.run() }
        intervalTask = configuration.flushInterval.map { interval in
            Task { [weak uploader] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: min(interval, .longestSleep))
                    uploader?.ring(.interval)
                }
            }
        }
        registryReachability = (configuration.registry ?? ServiceRegistry.shared)?.reachability.map { monitor in
            Self.follow(monitor, uploader: uploader)
        }
        uploader.ring(.start)
    }

    deinit {
        core.stopWriter()
        uploader.stop()
        intervalTask?.cancel()
        uploadTask.cancel()
    }

    /// Records an action that happened now; returns at once.
    /// - Returns: `false` when it was refused — an empty name, over
    ///   ``Configuration/maxActionBytes``, the outbox full under ``DropPolicy/dropNewest`` (under
    ///   ``DropPolicy/dropOldest`` the new action is always taken and an old one goes), or after
    ///   ``shutdown()``; each refusal is counted and logged.
    @discardableResult
    public func record(_ name: String, attributes: [String: String] = [:]) -> Bool {
        record(UserAction(name, attributes: attributes))
    }

    /// Records an action; returns at once (see ``record(_:attributes:)``).
    @discardableResult
    public func record(_ action: UserAction) -> Bool {
        if case .success = core.offer(action) { return true }
        return false
    }

    /// Records an action and returns once it is committed to the outbox file.
    /// - Throws: `RunwayError`: `.paramsInvalid` for an empty name or an action over the size
    ///   limit, `.fileIO` when the outbox is full (the policy dropped it) or the write failed (the
    ///   action stays queued and is written by a later attempt), `.cancelled` after ``shutdown()``.
    public func recordDurably(_ action: UserAction) async throws(RunwayError) {
        try await core.offerDurably(action)
    }

    /// Records an action that happened now and returns once it is committed (see ``recordDurably(_:)``).
    public func recordDurably(_ name: String, attributes: [String: String] = [:]) async throws(RunwayError) {
        try await recordDurably(UserAction(name, attributes: attributes))
    }

    /// Returns once every action recorded before this call is committed to the outbox file (or
    /// dropped by the full-outbox policy, which is counted).
    /// - Throws: `RunwayError` `.fileIO` when the write failed (the actions stay queued).
    public func persist() async throws(RunwayError) {
        try await core.waitUntilWritten()
    }

    /// Writes everything recorded before this call and uploads everything stored, a last batch
    /// smaller than ``Configuration/batchSize`` included — now, even during a backoff.
    /// - Throws: `RunwayError`: the failure of the write or of an upload (the actions stay in
    ///   the outbox and the upload is retried after the backoff), `.cancelled` after ``shutdown()``.
    public func flush() async throws(RunwayError) {
        try await core.waitUntilWritten()
        try await uploader.flush()
    }

    /// Stops: refuses new actions, writes everything queued, stops the upload task (a batch in
    /// flight is abandoned and sent again at the next start). Call it when the app goes away;
    /// call ``flush()`` first to upload as well.
    public func shutdown() async {
        core.stopWriter()
        await writer.waitUntilDone()
        uploader.stop()
        intervalTask?.cancel()
        uploadTask.cancel()
        await uploadTask.value
        outbox.releaseLock()
    }

    /// Uploads what is due as soon as `monitor` publishes `.reachable` after another status,
    /// cutting short a backoff that started while the network was down.
    ///
    /// The logger follows its registry's `ServiceRegistry.reachability` monitor by itself (when
    /// the registry has one at `init`); use this for another monitor. It follows until the
    /// returned observation is cancelled or released, and does not keep the logger alive.
    public func followReachability(of monitor: ReachabilityMonitor) -> ReachabilityObservation {
        Self.follow(monitor, uploader: uploader)
    }

    private static func follow(_ monitor: ReachabilityMonitor, uploader: BatchUploader) -> ReachabilityObservation {
        monitor.observe { [weak uploader] status in
            if status == .reachable { uploader?.ring(.reachable) }
        }
    }

    /// Every action accounted for: recorded, rejected, written, dropped, lost, uploaded, pending.
    public var statistics: ActionLogStatistics { core.statistics }
}

#endif
