#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

/// What an ``ActionLogger`` has done since it was created: every action accounted for.
///
/// Each action handed to `record` ends in exactly one of `rejected`, `dropped`, `lost`,
/// `uploaded`, or is still `pending` (queued in memory or stored in the outbox).
public struct ActionLogStatistics: Sendable, Hashable {
    /// Actions accepted by `record` or `recordDurably`.
    public var recorded = 0
    /// Actions refused at once: an empty name, over ``ActionLogger/Configuration/maxActionBytes``,
    /// or recorded after ``ActionLogger/shutdown()``.
    public var rejected = 0
    /// Actions written to the outbox file.
    public var written = 0
    /// Actions deleted by the full-outbox policy (``ActionLogger/DropPolicy``).
    public var dropped = 0
    /// Actions lost another way, each logged: the file was found corrupt and rebuilt empty, or
    /// the disk refused every write until shutdown.
    public var lost = 0
    /// Actions the server acknowledged (and that were then deleted from the outbox).
    public var uploaded = 0
    /// Batches the server acknowledged.
    public var batchesUploaded = 0
    /// Upload attempts that failed (each followed by a backoff).
    public var uploadFailures = 0
    /// Actions handed over but not yet written (the window a process kill can lose).
    public var queued = 0
    /// Actions in the outbox file, waiting for upload or in a batch not yet acknowledged.
    public var stored = 0
    /// Actions left by the previous run, found at start-up (included in `stored`).
    public var leftovers = 0

    /// Actions not yet uploaded: `queued + stored`.
    public var pending: Int { queued + stored }

    /// Creates zeroed statistics.
    public init() {}
}

#endif
