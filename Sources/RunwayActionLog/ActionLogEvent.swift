#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

/// Something the action log did, for monitoring: hand an `onEvent` closure to the
/// ``ActionLogger/Configuration``.
///
/// Events arrive on the logger's own writer thread or upload task, in order per source; the
/// closure must be quick and must not call back into the logger's waiting methods.
public struct ActionLogEvent: Sendable, CustomStringConvertible {
    /// The kind of an event (a struct over a private enum, so new kinds never break a `switch`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case leftoversFound, written, writeFailed, uploading, acknowledged, uploaded, uploadFailed, dropped, rejected, lost
        }

        private let base: Base

        /// The kind's name, e.g. `uploadFailed`.
        public var description: String { base.rawValue }

        /// At start-up, actions left by the previous run were found and put into batches.
        public static let leftoversFound = Kind(base: .leftoversFound)
        /// Actions were written to the outbox file (one transaction).
        public static let written = Kind(base: .written)
        /// Writing actions to the outbox failed (a full disk, the file locked by another
        /// program, ...): they stay queued in memory, and the write is tried again after
        /// ``ActionLogEvent/retryDelay``. Each failed attempt is one event; the next `written`
        /// event says the writes go through again.
        public static let writeFailed = Kind(base: .writeFailed)
        /// A batch is about to be sent.
        public static let uploading = Kind(base: .uploading)
        /// The server acknowledged a batch; its records are deleted next.
        public static let acknowledged = Kind(base: .acknowledged)
        /// An acknowledged batch was deleted from the outbox.
        public static let uploaded = Kind(base: .uploaded)
        /// Sending a batch failed; it stays in the outbox and is retried after ``ActionLogEvent/retryDelay``.
        public static let uploadFailed = Kind(base: .uploadFailed)
        /// The outbox was full and the drop policy removed actions.
        public static let dropped = Kind(base: .dropped)
        /// Actions were refused (empty name, too large, recorded after shutdown).
        public static let rejected = Kind(base: .rejected)
        /// Actions were lost (corrupt file rebuilt, or unwritable until shutdown).
        public static let lost = Kind(base: .lost)
    }

    /// What happened.
    public var kind: Kind
    /// How many actions it concerns. A `lost` event for a file found corrupt at open has 0: what
    /// earlier runs left in it cannot be counted (its ``reason`` says so), and
    /// ``ActionLogStatistics/lost`` counts only what this run recorded.
    public var count: Int
    /// The batch, for upload events.
    public var batchID: String?
    /// Why, for drops, rejections and losses.
    public var reason: String?
    /// The failure, for `writeFailed` and `uploadFailed`.
    public var error: RunwayError?
    /// The wait before the next attempt, for `writeFailed` and `uploadFailed`.
    public var retryDelay: Duration?

    /// Creates an event.
    public init(
        _ kind: Kind, count: Int, batchID: String? = nil, reason: String? = nil, error: RunwayError? = nil,
        retryDelay: Duration? = nil
    ) {
        self.kind = kind
        self.count = count
        self.batchID = batchID
        self.reason = reason
        self.error = error
        self.retryDelay = retryDelay
    }

    /// One line: kind, count, batch, reason, error, retry delay.
    public var description: String {
        var text = "\(kind) \(count)"
        if let batchID { text += " batch \(batchID)" }
        if let reason { text += ": \(reason)" }
        if let error { text += " (\(error))" }
        if let retryDelay { text += ", retry in \(retryDelay)" }
        return text
    }
}

#endif
