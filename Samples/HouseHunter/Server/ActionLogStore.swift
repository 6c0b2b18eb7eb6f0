import Foundation

/// What the action-log batch endpoint has received: records de-duplicated by id, and the
/// acknowledgement of every batch so a re-sent batch gets the same answer.
public final class ActionLogStore: Sendable {
    /// One user action as uploaded.
    public struct Record: Sendable, Equatable {
        /// The record's id; a record is counted once, whatever batch brings it.
        public let id: UUID
        /// The action's name (`screen.opened`, `filter.changed`).
        public let name: String
        /// When it happened, in milliseconds since 1970.
        public let at: Int64
        /// Its attributes.
        public let attributes: [String: String]
    }

    /// The answer to one batch.
    public struct Acknowledgement: Sendable, Equatable {
        /// Records seen for the first time.
        public let accepted: Int
        /// Records already seen in an earlier batch (or twice in this one).
        public let duplicates: Int
    }

    private struct State {
        var recordIDs: Set<UUID> = []
        var records: [Record] = []
        var batches: [UUID: Acknowledgement] = [:]
        var requests = 0
    }

    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    init() {}

    /// Every record accepted, in arrival order.
    public var records: [Record] { lock.withLock { state.records } }

    /// How many distinct batches arrived.
    public var batchCount: Int { lock.withLock { state.batches.count } }

    /// How many batch requests arrived, re-sent ones included.
    public var requestCount: Int { lock.withLock { state.requests } }

    /// Stores a batch; a batch id seen before gets its first acknowledgement again and changes nothing.
    func receive(batch: UUID, records: [Record]) -> Acknowledgement {
        lock.withLock {
            state.requests += 1
            if let earlier = state.batches[batch] { return earlier }
            var accepted = 0
            for record in records where state.recordIDs.insert(record.id).inserted {
                state.records.append(record)
                accepted += 1
            }
            let acknowledgement = Acknowledgement(accepted: accepted, duplicates: records.count - accepted)
            state.batches[batch] = acknowledgement
            return acknowledgement
        }
    }
}
