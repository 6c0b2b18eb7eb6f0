import Foundation
import RunwayActionLog
import Testing

@Suite struct ActionDeduplicatorTests {
    func record(_ n: Int) -> ActionBatch.Record {
        ActionBatch.Record(id: UUID().uuidString, name: "tap", at: Int64(n), attributes: ["n": String(n)])
    }

    @Test func aResentBatchIsAcceptedOnce() {
        let deduplicator = ActionDeduplicator()
        let batch = ActionBatch(id: UUID().uuidString, records: (0..<30).map(record))
        let first = deduplicator.accept(batch)
        #expect(first.fresh == batch.records)
        #expect(first.receipt == ActionBatchReceipt(accepted: 30, duplicates: 0))
        let again = deduplicator.accept(batch)
        #expect(again.fresh.isEmpty)
        #expect(again.receipt == ActionBatchReceipt(accepted: 0, duplicates: 30))
    }

    @Test func aRepeatedIDInsideABatchCountsOnce() {
        let deduplicator = ActionDeduplicator()
        let one = record(1)
        let result = deduplicator.accept(ActionBatch(id: UUID().uuidString, records: [one, one, record(2)]))
        #expect(result.fresh.count == 2)
        #expect(result.receipt.duplicates == 1)
    }

    @Test func memoryIsBoundedOldestForgottenFirst() {
        let deduplicator = ActionDeduplicator(capacity: 100)
        let records = (0..<250).map(record)
        for chunk in stride(from: 0, to: 250, by: 25) {
            _ = deduplicator.accept(ActionBatch(id: UUID().uuidString, records: Array(records[chunk..<chunk + 25])))
        }
        #expect(!deduplicator.contains(records[0].id))
        #expect(deduplicator.contains(records[249].id))
        #expect((150..<250).allSatisfy { deduplicator.contains(records[$0].id) })
    }

    @Test func concurrentBatchesNeverLetARecordThroughTwice() async {
        let deduplicator = ActionDeduplicator()
        let batch = ActionBatch(id: UUID().uuidString, records: (0..<200).map(record))
        let accepted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { deduplicator.accept(batch).fresh.count } }
            return await group.reduce(0, +)
        }
        #expect(accepted == 200)
    }
}
