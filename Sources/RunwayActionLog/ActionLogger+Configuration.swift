#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import Runway

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if ActionLog  // the package trait that brings this dependency (TraitCheck.swift)
import Logging
#endif

extension ActionLogger {
    /// What to do when the outbox holds ``Configuration/maxRecords`` actions and another arrives.
    /// Either way every dropped action is counted (``ActionLogStatistics/dropped``), reported
    /// (``ActionLogEvent/Kind/dropped``) and logged at warning level.
    public struct DropPolicy: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case dropOldest, dropNewest
        }

        private let base: Base

        /// Delete the oldest actions not yet in a batch to make room (the default: recent
        /// behaviour matters most); `record` always takes the new action. When every stored
        /// action is already in a batch being sent, the oldest of those still arriving go instead.
        public static let dropOldest = DropPolicy(base: .dropOldest)
        /// Keep what is stored; refuse the new action (`record` returns `false`).
        public static let dropNewest = DropPolicy(base: .dropNewest)

        /// The policy's name, e.g. `dropOldest`.
        public var description: String { base.rawValue }
    }

    /// Where actions are stored and sent, and the policies; every value is checked when the
    /// logger is created.
    public struct Configuration: Sendable {
        /// The SQLite outbox file (created with its directory; WAL mode).
        public var file: URL
        /// The service that receives the batches.
        public var serviceID: ServiceID
        /// The API under the service's base URL (default `actions/batch`).
        public var apiName: String
        /// The services; `nil` uses `ServiceRegistry.shared` at each upload, so the logger may
        /// be created before `ServiceRegistry.bootstrap(_:)`.
        public var registry: ServiceRegistry?
        /// Actions per upload (default 30): a batch is sent as soon as this
        /// many are stored.
        public var batchSize: Int
        /// Upload whatever has accumulated, even fewer than ``batchSize``, this often (default
        /// 60 s); `nil` uploads partial batches only on ``ActionLogger/flush()`` and at start-up.
        public var flushInterval: Duration?
        /// The most actions kept (queued and stored together; default 10,000).
        public var maxRecords: Int
        /// What happens when ``maxRecords`` is reached (default ``DropPolicy/dropOldest``).
        public var whenFull: DropPolicy
        /// The largest action accepted, counting the UTF-8 bytes of its name and attributes
        /// (default 8 KiB); larger ones are rejected.
        public var maxActionBytes: Int
        /// How often the server may refuse a batch of one action as unacceptable (HTTP 400,
        /// 413, 422) before that action is deleted, counted in ``ActionLogStatistics/lost`` and
        /// reported (default 3). A refused batch of several actions is split instead, so one bad
        /// action never holds back the others; an action is deleted only if the server
        /// acknowledged other batches meanwhile, so a server that refuses everything loses
        /// nothing. Other failures (5xx, 401, 404, timeouts) are always retried.
        public var maxRefusals: Int
        /// The first wait after a failed upload (default 1 s); doubles per failure, with jitter.
        public var initialBackoff: Duration
        /// The longest wait between failed uploads (default 5 minutes). A failed upload whose
        /// answer carries `Retry-After` (seconds or an HTTP-date, as on a 429 or 503) waits at
        /// least that long, up to this.
        public var maxBackoff: Duration
        /// Transport options of the upload (default: 30 s timeout).
        public var requestOptions: RequestOptions
        /// Where drops, losses, failed uploads and start-up leftovers are logged; `nil` logs nothing.
        public var logger: Logger?
        /// Hears every ``ActionLogEvent``; must be quick.
        public var onEvent: (@Sendable (ActionLogEvent) -> Void)?

        /// Creates a configuration with the defaults.
        /// - Parameters:
        ///   - file: The SQLite outbox file.
        ///   - serviceID: The service that receives the batches.
        ///   - apiName: The API under the service's base URL.
        public init(file: URL, serviceID: ServiceID, apiName: String = "actions/batch") {
            self.file = file
            self.serviceID = serviceID
            self.apiName = apiName
            self.registry = nil
            self.batchSize = 30
            self.flushInterval = .seconds(60)
            self.maxRecords = 10_000
            self.whenFull = .dropOldest
            self.maxActionBytes = 8 << 10
            self.maxRefusals = 3
            self.initialBackoff = .seconds(1)
            self.maxBackoff = .seconds(300)
            self.requestOptions = RequestOptions(timeout: .seconds(30))
            self.logger = nil
            self.onEvent = nil
        }

        /// The backoff as a retry policy (its formula: exponential, capped, half jitter).
        /// - Throws: ``RunwayError`` `.configuration` naming the bad value.
        func validated() throws(RunwayError) -> RetryPolicy {
            func bad(_ field: String, _ message: String) -> RunwayError {
                RunwayError(.configuration, "action log: \(message)", stage: .storage("RunwayActionLog"), field: field)
            }
            guard !apiName.isEmpty else { throw bad("apiName", "the API name is empty") }
            guard !serviceID.rawValue.isEmpty else { throw bad("serviceID", "the service ID is empty") }
            guard (1...10_000).contains(batchSize) else { throw bad("batchSize", "batchSize must be within 1...10000, got \(batchSize)") }
            guard maxRecords >= batchSize else {
                throw bad("maxRecords", "maxRecords (\(maxRecords)) must be at least batchSize (\(batchSize))")
            }
            if let flushInterval, flushInterval <= .zero { throw bad("flushInterval", "flushInterval must be positive") }
            guard maxActionBytes >= 1 else { throw bad("maxActionBytes", "maxActionBytes must be positive") }
            guard maxRefusals >= 1 else { throw bad("maxRefusals", "maxRefusals must be at least 1, got \(maxRefusals)") }
            guard initialBackoff > .zero else { throw bad("initialBackoff", "initialBackoff must be positive") }
            do {
                return try RetryPolicy(maxAttempts: 1, initialBackoff: initialBackoff, maxBackoff: maxBackoff)
            } catch {
                throw bad(error.field ?? "backoff", error.message)
            }
        }
    }
}

#endif
