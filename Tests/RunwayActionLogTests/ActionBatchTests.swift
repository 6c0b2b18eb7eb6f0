import Foundation
import Runway
import RunwayActionLog
import Testing

/// The wire format, both ways.
@Suite struct ActionBatchTests {
    let batchID = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    let recordID = "0E984725-C51C-4BF4-9960-E1C80E27ABA0"

    @Test func encodesTheDocumentedFormat() throws {
        let batch = ActionBatch(
            id: batchID,
            records: [
                ActionBatch.Record(id: recordID, name: "tap", at: 1_700_000_000_123, attributes: ["screen": "home", "q": "a\"b"])
            ])
        let text = String(decoding: batch.encoded(), as: UTF8.self)
        let record = #"{"at":1700000000123,"attributes":{"q":"a\"b","screen":"home"},"id":"\#(recordID)","name":"tap"}"#
        #expect(text == #"{"batch":"\#(batchID)","records":[\#(record)]}"#)
        #expect(try ActionBatch(decoding: batch.encoded()) == batch)
    }

    @Test func decodesWhatAnotherServerTeamWouldSend() throws {
        let body = #"{"records": [{"id": "\#(recordID)", "name": "search", "at": 5}], "batch": "\#(batchID)"}"#
        let batch = try ActionBatch(decoding: Data(body.utf8))
        #expect(batch.id == batchID)
        #expect(batch.records == [ActionBatch.Record(id: recordID, name: "search", at: 5, attributes: [:])])
    }

    @Test(arguments: [
        ("not json", "batch"),
        (#"[]"#, "batch"),
        (#"{"batch":"nope","records":[]}"#, "batch"),
        (#"{"batch":"B","records":{}}"#, "records"),
        (#"{"batch":"B","records":[7]}"#, "records[0]"),
        (#"{"batch":"B","records":[{"id":"x","name":"a","at":1}]}"#, "records[0].id"),
        (#"{"batch":"B","records":[{"id":"R","name":"","at":1}]}"#, "records[0].name"),
        (#"{"batch":"B","records":[{"id":"R","name":"a","at":1.5}]}"#, "records[0].at"),
        (#"{"batch":"B","records":[{"id":"R","name":"a","at":1,"attributes":{"k":1}}]}"#, "records[0].attributes"),
        (#"{"batch":"B","records":[{"id":"R","name":"a","at":1,"attributes":[]}]}"#, "records[0].attributes"),
    ])
    func malformedBatchesAreATypedErrorNamingTheField(body: String, field: String) {
        let text = body.replacingOccurrences(of: "\"B\"", with: "\"\(batchID)\"").replacingOccurrences(of: "\"R\"", with: "\"\(recordID)\"")
        #expect {
            try ActionBatch(decoding: Data(text.utf8))
        } throws: { error in
            let error = error as? RunwayError
            return error?.code == .invalidRequest && (field == "batch" && text == "not json" ? true : error?.field == field)
        }
    }

    @Test func theReceiptIsTheDocumentedJSON() {
        #expect(
            String(decoding: ActionBatchReceipt(accepted: 28, duplicates: 2).encoded(), as: UTF8.self) == #"{"accepted":28,"duplicates":2}"#
        )
    }
}
