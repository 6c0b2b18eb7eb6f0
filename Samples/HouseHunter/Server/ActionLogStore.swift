import Foundation
import RunwayActionLog

/// What the action-log batch endpoint has received: records de-duplicated by id with
/// `RunwayActionLog`'s server half (``ActionDeduplicator``), so a re-sent batch counts nothing twice.
public final class ActionLogStore: Sendable {
    private struct State {
        var records: [ActionBatch.Record] = []
        var batchIDs: Set<String> = []
        var requests = 0
    }

    private let deduplicator = ActionDeduplicator()
    // NSLock rather than Mutex: `Synchronization.Mutex` trips a false TSan report on Linux.
    private let lock = NSLock()
    // Only read or written under `lock`.
    nonisolated(unsafe) private var state = State()

    init() {}

    /// Every record accepted, in arrival order.
    public var records: [ActionBatch.Record] { lock.withLock { state.records } }

    /// How many distinct batches arrived.
    public var batchCount: Int { lock.withLock { state.batchIDs.count } }

    /// How many batch requests arrived, re-sent ones included.
    public var requestCount: Int { lock.withLock { state.requests } }

    /// Stores the records of `batch` not seen before; the receipt says how many were new.
    func receive(_ batch: ActionBatch) -> ActionBatchReceipt {
        let (fresh, receipt) = deduplicator.accept(batch)
        lock.withLock {
            state.records += fresh
            state.batchIDs.insert(batch.id.lowercased())
            state.requests += 1
        }
        return receipt
    }
}
