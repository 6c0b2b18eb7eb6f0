#if ActionLog  // the whole module: without its package trait, only TraitCheck.swift's error

import RunwaySync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server half of exactly-once: remembers record IDs and lets each one through once.
///
/// ```swift
/// let deduplicator = ActionDeduplicator()
/// router.post("/v1/actions/batch") { request, context in   // Hummingbird
///     var request = request
///     let batch = try ActionBatch(decoding: Data(try await request.collectBody(upTo: 1 << 20).readableBytesView))
///     let (fresh, receipt) = deduplicator.accept(batch)
///     try await store(fresh)
///     return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: receipt.encoded())))
/// }
/// ```
/// It keeps the most recent ``capacity`` IDs in memory (the oldest are forgotten first), which
/// covers re-sends after a client crash or a lost acknowledgement; a server that must
/// de-duplicate forever keeps the IDs in its database (a unique key on the record ID) instead.
/// Safe to share between requests.
public final class ActionDeduplicator: Sendable {
    /// How many record IDs are remembered.
    public let capacity: Int
    private let state = Locked(State())

    private struct State {
        var seen: Set<String> = []
        /// The remembered IDs, oldest first from `head`.
        var order: [String] = []
        var head = 0
    }

    /// Creates a de-duplicator remembering up to `capacity` record IDs (at least 1).
    public init(capacity: Int = 1_000_000) {
        self.capacity = max(1, capacity)
    }

    /// The records of `batch` never seen before (in order; a repeated ID inside the batch counts
    /// once), and the receipt to answer with.
    public func accept(_ batch: ActionBatch) -> (fresh: [ActionBatch.Record], receipt: ActionBatchReceipt) {
        state.withLock { state in
            var fresh: [ActionBatch.Record] = []
            for record in batch.records where state.seen.insert(record.id).inserted {
                fresh.append(record)
                state.order.append(record.id)
                if state.order.count - state.head > capacity {
                    state.seen.remove(state.order[state.head])
                    state.head += 1
                }
            }
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            return (fresh, ActionBatchReceipt(accepted: fresh.count, duplicates: batch.records.count - fresh.count))
        }
    }

    /// Whether `recordID` has been accepted (and is still remembered).
    public func contains(_ recordID: String) -> Bool {
        state.withLock { $0.seen.contains(recordID) }
    }
}

#endif
